package keys

import (
	"fmt"
	"net/http"

	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/store"
)

// The scopes Latchkey's own endpoints require of an API key created with
// scopes (a key without scopes may call them all).
const (
	// ScopeContactsRead is needed for GET /v1/contacts.
	ScopeContactsRead = "contacts:read"
	// ScopeIntrospect is needed for POST /v1/identity/introspect.
	ScopeIntrospect = "identity:introspect"
	// ScopeRevocations is needed for GET /v1/identity/revocations.
	ScopeRevocations = "identity:revocations"
)

// RequireScope returns middleware that admits a request only when its
// principal (set by [Verifier.Middleware] or [Check.Context], which must
// run first) holds scope, by [Principal.HasScope]: a login token
// or an API key without scopes always does. Anything else is answered 403
// forbidden (problem+json), the answer Latchkey's own endpoints give; a
// request with no principal in its context is answered 401 invalid_token.
// It panics at construction if scope is not a valid scope name
// (store.ValidScope).
//
// Behind a pending [Check] (Latchkey's list of contacts), the 403 is held
// until the token's records are checked, so a revoked key is answered 401.
//
//	mux.Handle("GET /reports", verifier.Middleware(keys.RequireScope("reports:read")(reports)))
func RequireScope(scope string) func(http.Handler) http.Handler {
	if !store.ValidScope(scope) {
		panic(fmt.Sprintf("keys: RequireScope(%q): not a scope name", scope))
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := PrincipalFromContext(r.Context())
			if !ok {
				problem.Write(w, r, nil, problem.Unauthorized(false))
				return
			}
			if !p.HasScope(scope) {
				problem.Write(w, r, nil, MissingScope(scope))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// MissingScope returns the 403 forbidden problem of a request whose API
// key lacks scope, as [RequireScope] answers it, for hosts that check
// scopes in their handlers with [Principal.HasScope].
func MissingScope(scope string) error {
	return problem.New(problem.CodeForbidden, fmt.Sprintf("This API key does not hold the scope %q that this request needs.", scope))
}
