package keys

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/requestid"
	"github.com/latchkey-dev/latchkey/tenant"
)

// Middleware returns a handler that admits only requests bearing a token
// [Verifier.Verify] accepts for the request's project (from
// tenant.FromContext), and calls next with the [Principal] in the request
// context (read it with [PrincipalFromContext]).
//
// The token is read only from the Authorization header, "Bearer" (any case)
// followed by one or more spaces and the token; never from the query string or a
// form body. A request with no bearer token is answered 401 invalid_token
// with "WWW-Authenticate: Bearer"; one whose token is malformed or rejected
// with `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750). Failures
// are logged at Info with a reason, never the token. A request without a
// project in its context, or a store failure, is answered 500 internal.
// Answers are written with package problem. A host whose answer depends on
// the reason of a refusal checks tokens itself with [BearerToken] and
// [Verifier.Verify], whose refusals match the reason sentinels
// (ErrTokenExpired, ...) with errors.Is.
func (v *Verifier) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		project, token, ok := v.bearer(w, r, "Middleware")
		if !ok {
			return
		}
		p, err := v.Verify(ctx, project, token)
		if err != nil {
			v.refuse(w, r, project, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(contextWithAuth(ctx, &requestAuth{principal: p})))
	})
}

// bearer returns the request's project (tenant.FromContext) and bearer
// token, or answers the request (500 without a project, named by the
// middleware mw; 401 without a well-formed bearer token) and returns false.
func (v *Verifier) bearer(w http.ResponseWriter, r *http.Request, mw string) (project, token string, ok bool) {
	project, ok = tenant.FromContext(r.Context())
	if !ok {
		problem.Write(w, r, v.logger, fmt.Errorf("keys: %s: no project in the request context (mount it below the tenant resolver)", mw))
		return "", "", false
	}
	token, presented, reason := BearerToken(r.Header)
	if reason != "" {
		v.unauthorized(w, r, project, presented, reason)
		return "", "", false
	}
	return project, token, true
}

// refuse answers a request whose presented token Verify did not accept
// with err: 401 for a refusal, else (a store failure) the error's answer.
func (v *Verifier) refuse(w http.ResponseWriter, r *http.Request, project string, err error) {
	if !errors.Is(err, ErrInvalidToken) {
		problem.Write(w, r, v.logger, err)
		return
	}
	v.unauthorized(w, r, project, true, ReasonOf(err))
}

// unauthorized logs an authentication failure and answers 401 with the
// RFC 6750 challenge.
func (v *Verifier) unauthorized(w http.ResponseWriter, r *http.Request, project string, presented bool, reason string) {
	v.logAuthFailure(r, project, reason)
	problem.Write(w, r, v.logger, problem.Unauthorized(presented))
}

// logAuthFailure logs, at Info, that r failed to authenticate for reason
// (never a token).
func (v *Verifier) logAuthFailure(r *http.Request, project, reason string) {
	args := []any{"project", project, "method", r.Method, "path", r.URL.Path, "reason", reason, "client", v.clientAddr(r)}
	if id := requestid.FromContext(r.Context()); id != "" {
		args = append(args, "request_id", id)
	}
	v.logger.InfoContext(r.Context(), "authentication failed", args...)
}

// BearerToken extracts the token of an "Authorization: Bearer <token>"
// header, by the rules of Latchkey's middleware, for other middleware to
// read tokens the same way. presented reports whether the request attempted bearer
// authentication; reason is empty on success and otherwise says, for the
// log, what was wrong.
//
// Only the header is read. Its scheme is matched case-insensitively; one or
// more spaces must follow it (RFC 6750's "Bearer" 1*SP b64token), and the
// token must be non-empty and made of RFC 6750 b64token characters, which
// excludes white space and commas. A
// request with no Authorization header, or one of another scheme (Basic),
// presented no bearer token.
func BearerToken(h http.Header) (token string, presented bool, reason string) {
	vals := h.Values("Authorization")
	switch len(vals) {
	case 0:
		return "", false, "no token"
	case 1:
	default:
		return "", true, "several Authorization headers"
	}
	scheme, tok, _ := strings.Cut(vals[0], " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false, "no bearer token"
	}
	tok = strings.TrimLeft(tok, " ")
	if tok == "" {
		return "", true, "empty token"
	}
	if len(tok) > MaxTokenBytes {
		return "", true, "token too large"
	}
	if !isB64Token(tok) {
		return "", true, "malformed authorization header"
	}
	return tok, true, ""
}

// isB64Token reports whether s matches RFC 6750's
// b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' {
			continue
		}
		break
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}

// APIKeyOnly is [Verifier.Middleware] for the endpoints that a team's other
// services call with a permanent API key of the project (introspection, the
// revocation feed): a valid login token is answered 403 forbidden.
func (v *Verifier) APIKeyOnly(next http.Handler) http.Handler {
	return v.Middleware(v.apiKeyGate(next))
}

// apiKeyGate returns next behind the check of APIKeyOnly that follows the
// token's verification: a request whose principal is not an API key is
// answered 403 forbidden.
func (v *Verifier) apiKeyGate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, _ := PrincipalFromContext(r.Context()); p.Kind != KindAPIKey {
			problem.Write(w, r, v.logger, problem.New(problem.CodeForbidden, "This endpoint needs a permanent API key of the project, not a login token."))
			return
		}
		next.ServeHTTP(w, r)
	})
}
