package latchkey

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/tenant"
)

// Handler returns the handler of the whole API, for a host to mount at the
// root of its server (or under a prefix it strips). For each request it
// names the project with Options.Resolver, checks that the project exists,
// puts it in the request's context (tenant.NewContext) and serves the
// routing table (routes.go):
//
//	POST /v1/identity/login               email and password -> token set
//	POST /v1/identity/refresh             refresh token -> token set
//	POST /v1/identity/logout              refresh token -> 204, its session ended
//	POST /v1/identity/introspect          (API key) token -> RFC 7662 answer
//	GET  /v1/identity/revocations         (API key) the revocation feed
//	GET  /v1/contacts                     (any token) the contacts list
//	GET  /.well-known/jwks.json           the project's public keys
//	GET  /.well-known/openid-configuration  the discovery document
//	GET  /openapi.json                    the OpenAPI document of all of the above
//	     /console/                        the web console (unless Options.NoConsole)
//
// A project the resolver cannot name (tenant.ErrUnknownProject) or that
// does not exist is 404 not_found; another path is 404 not_found and
// another method 405 method_not_allowed with Allow, all as problem+json.
func (l *Latchkey) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		project, ok := l.project(w, r)
		if !ok {
			return
		}
		if p := r.URL.Path; path.Clean(p) != p && path.Clean(p)+"/" != p {
			// The mux would redirect to the cleaned path, which may lack
			// the prefix of the base_url; no client of this API sends
			// such paths.
			httpapi.NotFound().ServeHTTP(w, r)
			return
		}
		r = r.WithContext(tenant.NewContext(r.Context(), project)) // a shallow copy
		h, pattern := l.mux.Handler(r)
		if pattern == "" {
			l.noRoute(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Protect returns next behind Latchkey's bearer-token check, for a host's
// own routes: the request's project is named by Options.Resolver and must
// exist, and the request must bear a token of that project that the
// Verifier accepts. next finds the project with tenant.FromContext and the
// token's principal with keys.PrincipalFromContext. Refusals are answered
// as the API answers them (401 invalid_token with WWW-Authenticate, 404
// for an unknown project, as problem+json).
func (l *Latchkey) Protect(next http.Handler) http.Handler {
	guarded := l.verifier.Middleware(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		project, ok := l.project(w, r)
		if !ok {
			return
		}
		guarded.ServeHTTP(w, r.WithContext(tenant.NewContext(r.Context(), project)))
	})
}

// project returns the request's project: named by the resolver, and
// existing. Otherwise it answers the request and returns false.
func (l *Latchkey) project(w http.ResponseWriter, r *http.Request) (string, bool) {
	project, err := l.resolver(r)
	switch {
	case errors.Is(err, tenant.ErrUnknownProject):
		httpapi.WriteError(w, r, l.logger, errNoSuchProject())
		return "", false
	case err != nil:
		httpapi.WriteError(w, r, l.logger, fmt.Errorf("latchkey: resolving the project: %w", err))
		return "", false
	}
	if err := l.projectExists(r.Context(), project); err != nil {
		httpapi.WriteError(w, r, l.logger, err)
		return "", false
	}
	return project, true
}

// errNoSuchProject is the answer for a project that does not exist.
func errNoSuchProject() error { return httpapi.New(httpapi.CodeNotFound, "No such project.") }

// projectExists returns nil if project exists, the 404 answer if it does
// not, or the store's error. Only positive answers are cached (projects are
// never deleted), so a project created by another process is served from
// its first request.
func (l *Latchkey) projectExists(ctx context.Context, project string) error {
	if _, ok := l.projects.Load(project); ok {
		return nil
	}
	if !store.ValidProjectID(project) {
		return errNoSuchProject()
	}
	_, err := l.st.GetProject(ctx, project)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errNoSuchProject()
	case err != nil:
		return fmt.Errorf("latchkey: looking up project: %w", err)
	}
	l.projects.Store(project, struct{}{})
	return nil
}
