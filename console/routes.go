package console

import (
	"net/http"
	"slices"
	"strings"

	"github.com/latchkey-dev/latchkey/tenant"
)

// Path is the console's directory, relative to a project's base_url. Every
// page lives directly in it, so that relative links and redirects are the
// same from every page.
const Path = "/console/"

// Route is one route of the console: a [http.ServeMux] pattern ("GET
// /console/keys", or a path alone for every method) and its handler.
type Route struct {
	Pattern string
	Handler http.Handler
}

// Routes returns the console's routes, for a routing table to register
// each once (the root package latchkey registers them in its own). A "GET"
// pattern serves HEAD too. The handlers do not check their path or method:
// a request under Path that no pattern matches is the table's to answer,
// with [Handler.NoRoute].
//
// Every handler sets the console's response headers (ContentSecurityPolicy
// and the others) and passes state-changing requests through
// http.CrossOriginProtection; the pages find the project with
// tenant.FromContext.
func (h *Handler) Routes() []Route {
	rs := []Route{
		// Every method, as ever: the console's directory without its slash.
		{strings.TrimSuffix(Path, "/"), h.wrap(http.HandlerFunc(redirectToConsole))},
		{"GET " + Path + "{$}", h.call(func(c *call) { redirect(c.w, "keys") })},
		{"GET " + Path + "signin", h.call(h.signinForm)},
		{"POST " + Path + "signin", h.call(h.signin)},
		{"POST " + Path + "signout", h.call(h.signout)},
		{"GET " + Path + "keys", h.read(h.keyList)},
		{"POST " + Path + "keys", h.write(h.createKey)},
		{"GET " + Path + "revoke", h.read(h.confirmRevoke)},
		{"POST " + Path + "revoke", h.write(h.revokeKey)},
		{"GET " + Path + "roll", h.read(h.confirmRoll)},
		{"POST " + Path + "roll", h.write(h.rollKey)},
		{"GET " + Path + "signing-keys", h.read(h.signingKeyList)},
		{"GET " + Path + "rotate", h.read(h.confirmRotate)},
		{"POST " + Path + "rotate", h.write(h.rotate)},
		{"GET " + Path + "retire", h.read(h.confirmRetire)},
		{"POST " + Path + "retire", h.write(h.retire)},
		{"GET " + Path + "users", h.read(h.userList)},
		{"POST " + Path + "users", h.write(h.createUser)},
		{"GET " + Path + "user", h.read(h.userPage)},
		{"POST " + Path + "user-tags", h.write(h.setUserTags)},
		{"POST " + Path + "user-password", h.write(h.setUserPassword)},
		{"GET " + Path + "disable", h.read(h.confirmDisable)},
		{"POST " + Path + "disable", h.write(h.disableUser)},
		{"POST " + Path + "enable", h.write(h.enableUser)},
		{"GET " + Path + "audit", h.read(h.auditList)},
	}
	for _, name := range slices.Sorted(h.static.names()) {
		rs = append(rs, Route{"GET " + Path + "static/" + name, h.wrap(h.static.handler(name))})
	}
	return rs
}

// NoRoute answers a request under Path that no route of the console
// matches, as a console page: 405 with Allow when allow, the methods the
// routing table serves at its path, is not empty; else 404.
func (h *Handler) NoRoute(w http.ResponseWriter, r *http.Request, allow string) {
	h.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if allow == "" {
			h.notFound(w, r)
			return
		}
		w.Header().Set("Allow", allow)
		h.errorPage(w, r, http.StatusMethodNotAllowed, "Method not allowed",
			"This page does not accept that kind of request.")
	})).ServeHTTP(w, r)
}

// wrap returns next with the console's response headers, behind
// http.CrossOriginProtection.
func (h *Handler) wrap(next http.Handler) http.Handler {
	return withSecurityHeaders(h.cop.Handler(next))
}

// call returns the handler that runs fn for the request's project.
func (h *Handler) call(fn func(c *call)) http.Handler {
	return h.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		project, ok := tenant.FromContext(r.Context())
		if !ok {
			h.fail(w, r, errNoProject)
			return
		}
		fn(&call{w: w, r: r, project: project})
	}))
}

// read returns the handler of a page that shows fn to a signed-in
// administrator (authed).
func (h *Handler) read(fn func(c *call)) http.Handler {
	return h.call(func(c *call) { h.authed(c, false, fn) })
}

// write returns the handler of a form that fn acts on for a signed-in
// administrator, once its form token is checked (authed).
func (h *Handler) write(fn func(c *call)) http.Handler {
	return h.call(func(c *call) { h.authed(c, true, fn) })
}

// redirectToConsole answers {base_url}/console with a redirect to the
// console's directory.
func redirectToConsole(w http.ResponseWriter, _ *http.Request) {
	// Relative, so that it is right under any base_url prefix.
	w.Header().Set("Location", "console/")
	w.WriteHeader(http.StatusMovedPermanently)
}
