package identity

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/tenant"
)

// errNoProject is the error of a handler mounted below no tenant resolver.
var errNoProject = errors.New("identity: no project in the request context")

// Login returns the handler of POST {base_url}/v1/identity/login: email and
// password in, a token set out, and a new session started. Wrong email,
// wrong password and a disabled user are one answer, 401
// invalid_credentials, after the same hashing work; a throttled attempt is
// 429 rate_limited with Retry-After; a failure that cannot be counted is
// 503 unavailable.
func (h *Handler) Login() http.Handler { return httpapi.Handle(h.log, h.login) }

func (h *Handler) login(w http.ResponseWriter, r *http.Request) error {
	projectID, ok := tenant.FromContext(r.Context())
	if !ok {
		return errNoProject
	}
	var body struct {
		Email    string `json:"email"`
		Password string `json:"password"`
	}
	if err := httpapi.DecodeJSON(w, r, &body); err != nil {
		return err
	}
	switch {
	case body.Email == "":
		return problem.New(problem.CodeInvalidRequest, `The field "email" is required.`)
	case body.Password == "":
		return problem.New(problem.CodeInvalidRequest, `The field "password" is required.`)
	}
	ctx := r.Context()
	u, err := h.auth.Authenticate(ctx, projectID, body.Email, body.Password, h.addr(r))
	if err != nil {
		h.metrics.logins.Add(ctx, loginResult(err))
		return authError(err)
	}

	now := h.now()
	fam := store.RefreshFamily{
		ID:         store.NewID(store.PrefixFamily),
		ProjectID:  projectID,
		UserID:     u.ID,
		Generation: 0,
		IssuedAt:   now,
		ExpiresAt:  now.Add(min(h.ttl, h.lifetime)),
		CreatedAt:  now,
		EndsAt:     now.Add(h.lifetime),
	}
	// The access token is minted while the session is written: the two
	// are independent, and a login's latency is its hash plus these.
	minted := make(chan mintResult, 1)
	go func() {
		tok, exp, err := h.minter.MintLoginToken(ctx, projectID, u, fam.ID)
		minted <- mintResult{tok, exp, err}
	}()
	// The session starts only while the hash the password was checked
	// against is still the user's.
	ferr := h.sessions.CreateRefreshFamily(ctx, fam, u.PasswordHash)
	m := <-minted
	switch {
	case errors.Is(ferr, store.ErrDisabled), errors.Is(ferr, store.ErrNotFound), errors.Is(ferr, store.ErrConflict):
		// Disabled, deleted or given a new password while signing in
		// (ErrConflict: a new family id cannot exist): as if it had
		// been before.
		h.metrics.logins.Add(ctx, resultFailure)
		return authError(ErrInvalidCredentials)
	case ferr != nil:
		h.metrics.logins.Add(ctx, resultError)
		return fmt.Errorf("identity: starting a session: %w", ferr)
	case m.err != nil:
		h.metrics.logins.Add(ctx, resultError)
		return fmt.Errorf("identity: minting access token: %w", m.err)
	}
	if err := h.announceEnd(ctx, projectID, fam, m.exp); err != nil {
		h.metrics.logins.Add(ctx, resultError)
		return err
	}
	h.metrics.logins.Add(ctx, resultSuccess)
	return writeTokens(w, u, m.token, h.codec.token(projectID, fam.ID, 0))
}

type mintResult struct {
	token string
	exp   time.Time
	err   error
}

// loginResult is the result a login that Authenticate refused with err is
// counted under.
func loginResult(err error) string {
	var rl *RateLimitedError
	switch {
	case errors.Is(err, ErrInvalidCredentials):
		return resultFailure
	case errors.As(err, &rl):
		return resultThrottled
	}
	return resultError
}

// authError maps an Authenticate error to the API error.
func authError(err error) error {
	var rl *RateLimitedError
	switch {
	case errors.Is(err, ErrInvalidCredentials):
		return problem.New(problem.CodeInvalidCredentials, "The email or password is incorrect.")
	case errors.As(err, &rl):
		return problem.New(problem.CodeRateLimited, "Too many failed attempts. Try again later.").
			WithHeader("Retry-After", strconv.FormatInt(rl.RetryAfterSeconds(), 10))
	}
	return err
}
