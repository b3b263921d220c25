package tenant

import (
	"net/http"
	"strings"
)

// ByPath returns a handler that names the project of each request by its
// path, for a host that serves several projects under one address:
// prefix + "{project}/rest" is served as "/rest" for that project (its
// base_url is http://host{prefix}{project}), and any other request as it
// is, for project fallback. The project goes in the request's context
// (NewContext) for next, whose resolver is FromRequest; a request that
// names no project (prefix alone, or outside prefix with fallback "")
// reaches next with none, so that its resolver answers ErrUnknownProject.
// prefix must start and end with "/", for example "/p/".
//
// For example, with prefix "/p/" and fallback "default":
//
//	GET /p/acme/v1/contacts   lists the contacts of project acme
//	GET /v1/contacts          lists the contacts of project default
func ByPath(prefix, fallback string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok {
			next.ServeHTTP(w, r.WithContext(NewContext(r.Context(), fallback)))
			return
		}
		project, rest, _ := strings.Cut(rest, "/")
		u := *r.URL
		u.Path = "/" + rest
		u.RawPath = ""
		if raw, ok := strings.CutPrefix(r.URL.RawPath, prefix+project); ok {
			u.RawPath = raw
		}
		r = r.WithContext(NewContext(r.Context(), project)) // a shallow copy
		r.URL = &u
		next.ServeHTTP(w, r)
	})
}
