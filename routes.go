package latchkey

import (
	"net/http"
	"slices"
	"strings"

	"github.com/latchkey-dev/latchkey/console"
	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/openapi"
	"github.com/latchkey-dev/latchkey/problem"
)

// Paths served for each project, relative to its base_url.
const (
	PathLogin       = "/v1/identity/login"
	PathRefresh     = "/v1/identity/refresh"
	PathLogout      = "/v1/identity/logout"
	PathIntrospect  = "/v1/identity/introspect"
	PathRevocations = "/v1/identity/revocations"
	PathContacts    = "/v1/contacts"
	PathJWKS        = "/.well-known/jwks.json"
	PathDiscovery   = "/.well-known/openid-configuration"
	PathConsole     = console.Path
)

// corsPrefix is the prefix of the paths of the table that browser pages of
// Options.CORSOrigins may call (the /v1 API; see Latchkey.withCORS).
const corsPrefix = "/v1/"

// parts are the handlers the routing table mounts that Latchkey does not
// keep for itself.
type parts struct {
	identity *identity.Handler
	contacts http.Handler
}

// route is one entry of the routing table: a ServeMux pattern and its
// handler.
type route struct {
	pattern string
	handler http.Handler
}

// routes is the routing table: every path of a project, declared once, the
// console's pages included (console.Handler.Routes). A "GET" pattern serves
// HEAD too. Handlers never check their own path or
// method; requests no pattern matches are answered by [Latchkey.noRoute]
// from this table.
func (l *Latchkey) routes(p parts) []route {
	v, kr := l.verifier, l.keyring
	public := httpapi.AllowAnyOrigin
	rs := []route{
		{"POST " + PathLogin, p.identity.Login()},
		{"POST " + PathRefresh, p.identity.Refresh()},
		{"POST " + PathLogout, p.identity.Logout()},
		{"POST " + PathIntrospect, v.APIKeyClient(scope(keys.ScopeIntrospect, v.IntrospectHandler(kr.Issuer)))},
		{"GET " + PathRevocations, v.APIKeyOnly(scope(keys.ScopeRevocations, l.feed))},
		{"GET " + PathContacts, l.listAuth(scope(keys.ScopeContactsRead, p.contacts))},
		{"GET " + PathJWKS, public(kr.JWKSHandler())},
		{"OPTIONS " + PathJWKS, httpapi.Preflight("GET, HEAD, OPTIONS")},
		{"GET " + PathDiscovery, public(kr.DiscoveryHandler(keys.Endpoints{
			Discovery:     PathDiscovery,
			JWKS:          PathJWKS,
			Introspection: PathIntrospect,
			Revocations:   PathRevocations,
		}))},
		{"OPTIONS " + PathDiscovery, httpapi.Preflight("GET, HEAD, OPTIONS")},
		{"GET " + openapi.Path, public(openapi.NewHandler(kr.Issuer, &openapi.Options{Logger: l.logger}))},
		{"OPTIONS " + openapi.Path, httpapi.Preflight("GET, HEAD, OPTIONS")},
	}
	if l.consoleUI != nil {
		for _, cr := range l.consoleUI.Routes() {
			rs = append(rs, route{cr.Pattern, cr.Handler})
		}
	}
	return rs
}

// scope is keys.RequireScope(name) around h: an API key with scopes calls
// the endpoint only when it holds name.
func scope(name string, h http.Handler) http.Handler { return keys.RequireScope(name)(h) }

// newMux registers the routes on a ServeMux, and returns it with the
// methods served at each fixed path, for the Allow header of a 405.
func newMux(rs []route) (*http.ServeMux, map[string]string) {
	mux := http.NewServeMux()
	methods := map[string][]string{}
	for _, r := range rs {
		mux.Handle(r.pattern, r.handler)
		method, path, ok := strings.Cut(r.pattern, " ")
		if !ok {
			continue // a subtree that serves every method
		}
		methods[path] = append(methods[path], method)
		if method == http.MethodGet {
			methods[path] = append(methods[path], http.MethodHead)
		}
	}
	allow := make(map[string]string, len(methods))
	for path, ms := range methods {
		slices.Sort(ms)
		allow[path] = strings.Join(ms, ", ")
	}
	return mux, allow
}

// publicDocuments are the paths of the documents any origin may read
// (httpapi.AllowAnyOrigin): every answer there, a 405 too, says so.
var publicDocuments = map[string]bool{PathJWKS: true, PathDiscovery: true, openapi.Path: true}

// noRoute answers a request no pattern of the routing table matches: 405
// method_not_allowed with Allow when its path is served for other methods
// (on a public document with Access-Control-Allow-Origin: *), else 404
// not_found, both as problem+json; under the console's directory, the same
// as console pages (console.Handler.NoRoute).
func (l *Latchkey) noRoute(w http.ResponseWriter, r *http.Request) {
	allow, ok := l.allow[r.URL.Path]
	switch {
	case l.consoleUI != nil && strings.HasPrefix(r.URL.Path, PathConsole):
		l.consoleUI.NoRoute(w, r, allow)
	case ok:
		if publicDocuments[r.URL.Path] {
			// Any origin may read every answer of a public document.
			w.Header().Set("Access-Control-Allow-Origin", "*")
		}
		problem.MethodNotAllowed(w, r, allow)
	default:
		problem.NotFound().ServeHTTP(w, r)
	}
}
