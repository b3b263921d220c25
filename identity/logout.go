package identity

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/latchkey-dev/latchkey/audit"
	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/internal/telemetry"
	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/store"
)

// Logout returns the handler of POST {base_url}/v1/identity/logout: a
// refresh token in, its session ended, 204 No Content out. Every token of
// the session stops working from the next request, on every instance: the
// refresh token (whichever generation was presented) and every login token
// minted in the session. The answer is 204 also for a token that is
// unknown, already ended or of another project, so that logout tells
// nothing about a token. The body rules are refresh's (415, 413, 400).
func (h *Handler) Logout() http.Handler { return httpapi.Handle(h.log, h.logout) }

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) error {
	projectID, familyID, _, err := h.refreshTokenOf(w, r)
	var apiErr *problem.Error
	if errors.As(err, &apiErr) && apiErr.Code == problem.CodeInvalidRefreshToken {
		w.WriteHeader(http.StatusNoContent) // no oracle
		return nil
	}
	if err != nil {
		return err
	}
	ctx := r.Context()
	switch err := h.sessions.RevokeRefreshFamily(ctx, projectID, familyID, h.now()); {
	case errors.Is(err, store.ErrNotFound):
		// Pruned after it ended: nothing left to end.
	case err != nil:
		return fmt.Errorf("identity: ending a session: %w", err)
	default:
		h.recordSession(r, projectID, familyID, store.ActionSessionLogout)
		h.metrics.revocations.Add(ctx, telemetry.KindSession)
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// recordSession records action on the session familyID in the audit log,
// with the session's user as the actor (whoever holds its refresh token
// acts for them) and the request's client address.
func (h *Handler) recordSession(r *http.Request, projectID, familyID, action string) {
	if h.audit == nil {
		return
	}
	ctx := r.Context()
	actor := audit.Actor{ClientAddr: h.addr(r)}
	if f, err := h.sessions.GetRefreshFamily(ctx, projectID, familyID); err == nil {
		actor.ID = f.UserID
	}
	h.audit.Record(audit.NewContext(ctx, actor), projectID, action, familyID)
}
