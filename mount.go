package latchkey

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/tenant"
)

// Paths served for each project, relative to its base_url.
const (
	PathLogin    = "/v1/identity/login"
	PathRefresh  = "/v1/identity/refresh"
	PathJWKS     = "/.well-known/jwks.json"
	PathContacts = "/v1/contacts"
	PathConsole  = "/console/"
)

// newMux routes the paths of one project. The project is already in the
// request's context when it runs.
func newMux(identity, jwks, contacts, console http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("POST "+PathLogin, identity)
	mux.Handle("POST "+PathRefresh, identity)
	mux.Handle("GET "+PathJWKS, jwks)
	mux.Handle("GET "+PathContacts, contacts)
	if console != nil {
		mux.Handle(PathConsole, console)
		mux.Handle("GET /console", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Relative, so that it is right under any base_url prefix.
			w.Header().Set("Location", "console/")
			w.WriteHeader(http.StatusMovedPermanently)
		}))
	}
	return mux
}

// Handler returns the handler of the whole API for a host to mount at the
// root of its server (or under http.StripPrefix). For each request it
// names the project with Options.Resolver, checks that the project exists,
// puts it in the request's context (tenant.NewContext) and serves:
//
//	POST /v1/identity/login      no token
//	POST /v1/identity/refresh    no token
//	GET  /.well-known/jwks.json  no token
//	GET  /v1/contacts            Authorization: Bearer <token of the project>
//	     /console/               when Options.Console is set
//
// A project the resolver cannot name (tenant.ErrUnknownProject) or that
// does not exist is 404 not_found; another path is 404 not_found and
// another method 405 method_not_allowed with Allow, all as problem+json.
func (l *Latchkey) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		project, err := l.resolver(r)
		switch {
		case errors.Is(err, tenant.ErrUnknownProject):
			httpapi.WriteError(w, r, l.logger, httpapi.New(httpapi.CodeNotFound, "No such project."))
			return
		case err != nil:
			httpapi.WriteError(w, r, l.logger, fmt.Errorf("latchkey: resolving the project: %w", err))
			return
		}
		l.serveProject(w, r, project, nil)
	})
}

// PathHandler returns the handler of the example server's routing, where
// the path names the project: a request for /p/{project}/rest is served as
// rest for that project (its base_url is http://host/p/{project}), and any
// other request is served as it is for project fallback (base_url
// http://host). With fallback "" such requests are 404. Options.Resolver is
// not used. Everything else is as [Latchkey.Handler] describes.
//
// For example, with fallback "default":
//
//	GET /p/acme/v1/contacts   lists the contacts of project acme
//	GET /v1/contacts          lists the contacts of project default
//	GET /p/default/v1/contacts  the same
func (l *Latchkey) PathHandler(fallback string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/p/")
		if !ok {
			if fallback == "" {
				httpapi.NotFound().ServeHTTP(w, r)
				return
			}
			l.serveProject(w, r, fallback, nil)
			return
		}
		project, rest, _ := strings.Cut(rest, "/")
		u := *r.URL
		u.Path = "/" + rest
		u.RawPath = ""
		if raw, ok := strings.CutPrefix(r.URL.RawPath, "/p/"+project); ok {
			u.RawPath = raw
		}
		l.serveProject(w, r, project, &u)
	})
}

// serveProject serves r for project, which it checks exists, with the URL
// u (the base_url's prefix stripped) if u is not nil.
func (l *Latchkey) serveProject(w http.ResponseWriter, r *http.Request, project string, u *url.URL) {
	if err := l.projectExists(r.Context(), project); err != nil {
		if errors.Is(err, errNoSuchProject) {
			httpapi.WriteError(w, r, l.logger, httpapi.New(httpapi.CodeNotFound, "No such project."))
		} else {
			httpapi.WriteError(w, r, l.logger, err)
		}
		return
	}
	r = r.WithContext(tenant.NewContext(r.Context(), project)) // a shallow copy
	if u != nil {
		r.URL = u
	}
	if p := r.URL.Path; path.Clean(p) != p && path.Clean(p)+"/" != p {
		// The mux would redirect to the cleaned path, without the
		// base_url's prefix; no client of this API sends such paths.
		httpapi.NotFound().ServeHTTP(w, r)
		return
	}
	h, pattern := l.mux.Handler(r)
	if pattern == "" {
		l.noRoute(w, r, h)
		return
	}
	// Every pattern is a fixed path (no wildcards), so the handler needs
	// nothing more from the mux.
	h.ServeHTTP(w, r)
}

// projectExists returns nil if project exists, an error matching
// errNoSuchProject if it does not, or the store's error. Only positive
// answers are cached (projects are never deleted), so a project created by
// another process is served from its first request.
func (l *Latchkey) projectExists(ctx context.Context, project string) error {
	if _, ok := l.projects.Load(project); ok {
		return nil
	}
	if !store.ValidProjectID(project) {
		return errNoSuchProject
	}
	_, err := l.st.GetProject(ctx, project)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errNoSuchProject
	case err != nil:
		return fmt.Errorf("latchkey: looking up project: %w", err)
	}
	l.projects.Store(project, struct{}{})
	return nil
}

// noRoute answers a request no pattern matches: 405 with the mux's Allow
// when the path exists for other methods, else 404, both as problem+json
// (the mux itself would answer in plain text).
func (l *Latchkey) noRoute(w http.ResponseWriter, r *http.Request, h http.Handler) {
	rec := &headerRecorder{header: make(http.Header)}
	h.ServeHTTP(rec, r)
	if rec.status == http.StatusMethodNotAllowed {
		httpapi.MethodNotAllowed(w, rec.header.Get("Allow"))
		return
	}
	httpapi.NotFound().ServeHTTP(w, r)
}

// headerRecorder keeps the status and headers written to it and drops the
// body.
type headerRecorder struct {
	header http.Header
	status int
}

func (h *headerRecorder) Header() http.Header { return h.header }

func (h *headerRecorder) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}

func (h *headerRecorder) Write(b []byte) (int, error) {
	h.WriteHeader(http.StatusOK)
	return len(b), nil
}
