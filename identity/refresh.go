package identity

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/internal/telemetry"
	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/tenant"
)

// Refresh returns the handler of POST {base_url}/v1/identity/refresh: a
// refresh token in, the same token set as login out, the refresh token
// rotated. An unknown, expired, revoked, replayed or foreign refresh token,
// or one of an ended session or a disabled user, is 401
// invalid_refresh_token; a replay also ends the session.
func (h *Handler) Refresh() http.Handler { return httpapi.Handle(h.log, h.refresh) }

func (h *Handler) refresh(w http.ResponseWriter, r *http.Request) error {
	projectID, familyID, gen, err := h.refreshTokenOf(w, r)
	if err != nil {
		var apiErr *problem.Error
		if errors.As(err, &apiErr) && apiErr.Code == problem.CodeInvalidRefreshToken {
			h.metrics.refreshes.Add(r.Context(), resultInvalid)
		}
		return err
	}
	result, err := h.rotate(w, r, projectID, familyID, gen)
	h.metrics.refreshes.Add(r.Context(), result)
	return err
}

// rotate exchanges the refresh token of generation gen in the session
// familyID for a token set, and returns the result it is counted under.
func (h *Handler) rotate(w http.ResponseWriter, r *http.Request, projectID, familyID string, gen int64) (string, error) {
	ctx := r.Context()
	rot, err := h.sessions.RotateRefresh(ctx, projectID, familyID, gen, store.RotateParams{
		Now: h.now(), TTL: h.ttl, ReuseWindow: h.reuse,
	})
	switch {
	case errors.Is(err, store.ErrReplayed):
		h.log.WarnContext(ctx, "refresh token replayed; session ended",
			withRequestID(ctx, "project", projectID, "session", familyID, "generation", gen, "client", h.addr(r))...)
		h.recordSession(r, projectID, familyID, store.ActionSessionReplayed)
		h.metrics.replays.Add(ctx, "")
		h.metrics.revocations.Add(ctx, telemetry.KindSession)
		return resultInvalid, errInvalidRefresh(err)
	case errors.Is(err, store.ErrRevoked), errors.Is(err, store.ErrExpired),
		errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrDisabled):
		return resultInvalid, errInvalidRefresh(err)
	case err != nil:
		return resultError, fmt.Errorf("identity: rotating refresh token: %w", err)
	}
	// The store read the family's user with the rotation (store.Rotation).
	u := rot.User
	switch {
	case u.ID != rot.Family.UserID || u.ProjectID != projectID:
		return resultError, fmt.Errorf("identity: the rotation of session %s returned another user", familyID)
	case u.Disabled():
		return resultInvalid, errInvalidRefresh(store.ErrDisabled)
	}
	access, exp, err := h.minter.MintLoginToken(ctx, projectID, u, familyID)
	if err != nil {
		return resultError, fmt.Errorf("identity: minting access token: %w", err)
	}
	if err := h.announceEnd(ctx, projectID, rot.Family, exp); err != nil {
		return resultError, err
	}
	result := resultSuccess
	if rot.Reused {
		result = resultReused
	}
	return result, writeTokens(w, u, access, h.codec.token(projectID, familyID, rot.Family.Generation))
}

// refreshTokenOf reads the body {"refresh_token": "rt_..."} of refresh and
// logout, and returns the request's project and the token's family and
// generation. A token this server did not make for the project (forged,
// altered, of another project) is 401 invalid_refresh_token before any
// store call.
func (h *Handler) refreshTokenOf(w http.ResponseWriter, r *http.Request) (projectID, familyID string, gen int64, err error) {
	projectID, ok := tenant.FromContext(r.Context())
	if !ok {
		return "", "", 0, errNoProject
	}
	var body struct {
		RefreshToken string `json:"refresh_token"`
	}
	if err := httpapi.DecodeJSON(w, r, &body); err != nil {
		return "", "", 0, err
	}
	if body.RefreshToken == "" {
		return "", "", 0, problem.New(problem.CodeInvalidRequest, `The field "refresh_token" is required.`)
	}
	familyID, gen, ok = h.codec.parse(projectID, body.RefreshToken)
	if !ok {
		return "", "", 0, errInvalidRefresh(nil)
	}
	return projectID, familyID, gen, nil
}

func errInvalidRefresh(cause error) error {
	return problem.New(problem.CodeInvalidRefreshToken, "The refresh token is invalid, expired or revoked.").WithCause(cause)
}
