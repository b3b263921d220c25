package remote

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/requestid"
)

// Middleware returns a handler that admits only requests bearing a token
// [Verifier.Verify] accepts, and calls next with its claims in the request
// context (read them with [ClaimsFromContext]). It answers as Latchkey's
// own middleware does, in RFC 9457 problem+json:
//
//   - no bearer token: 401 invalid_token with "WWW-Authenticate: Bearer";
//   - a malformed or refused token: 401 invalid_token with
//     `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750);
//   - while the verifier fails closed (ErrStale) or after Close: 503
//     unavailable with Retry-After.
//
// The token is read only from the Authorization header, "Bearer" in any
// case followed by one or more spaces and the token; never from the query string or
// a form body. Refusals are logged at Info with a reason, never the token.
func (v *Verifier) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, presented, reason := keys.BearerToken(r.Header)
		if reason != "" {
			v.unauthorized(w, r, presented, reason)
			return
		}
		c, err := v.Verify(r.Context(), token)
		switch {
		case err == nil:
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), claimsKey{}, c)))
		case errors.Is(err, keys.ErrInvalidToken):
			v.unauthorized(w, r, true, ReasonOf(err))
		case errors.Is(err, ErrStale), errors.Is(err, ErrClosed):
			// Logged once per stale spell by Verify, not per request.
			problem.Write(w, r, nil, problem.New(problem.CodeUnavailable,
				"Tokens cannot be verified now: the identity service's revocations are out of reach. Retry the request later.").
				WithHeader("Retry-After", v.retryAfter()))
		default:
			problem.Write(w, r, v.logger, err)
		}
	})
}

// retryAfter is the Retry-After of a 503: the longest pause between two
// reads of the feed, in whole seconds, at least 1.
func (v *Verifier) retryAfter() string {
	return strconv.Itoa(int(max(time.Second, v.maxBackoff+time.Second-1) / time.Second))
}

// unauthorized logs an authentication failure and answers 401 with the
// RFC 6750 challenge.
func (v *Verifier) unauthorized(w http.ResponseWriter, r *http.Request, presented bool, reason string) {
	args := []any{"project", v.project, "method", r.Method, "path", r.URL.Path, "reason", reason, "client", httpapi.RemoteHost(r)}
	if id := requestid.FromContext(r.Context()); id != "" {
		args = append(args, "request_id", id)
	}
	v.logger.InfoContext(r.Context(), "authentication failed", args...)
	problem.Write(w, r, v.logger, problem.Unauthorized(presented))
}

type claimsKey struct{}

// ClaimsFromContext returns the claims [Verifier.Middleware] stored in ctx,
// and whether there were any. They are shared and must not be modified.
func ClaimsFromContext(ctx context.Context) (*keys.Claims, bool) {
	c, ok := ctx.Value(claimsKey{}).(*keys.Claims)
	return c, ok
}

// RequireScope returns middleware, for use behind [Verifier.Middleware],
// that admits a request only when its token may do what scope names: a
// login token, an API key without scopes, or an API key whose scope claim
// holds scope. Anything else is answered 403 forbidden (problem+json), as
// keys.RequireScope and Latchkey's own endpoints answer it; a request with
// no claims in its context, 401 invalid_token. It panics at construction
// if scope is not a valid scope name.
func RequireScope(scope string) func(http.Handler) http.Handler {
	_ = keys.RequireScope(scope) // panics for a bad name
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, ok := ClaimsFromContext(r.Context())
			if !ok {
				problem.Write(w, r, nil, problem.Unauthorized(false))
				return
			}
			if len(c.Scopes) > 0 && !slices.Contains(c.Scopes, scope) {
				problem.Write(w, r, nil, keys.MissingScope(scope))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
