package console

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Cookie kinds. The cookie's name is the kind and the project, so that the
// sessions of two projects on one host never overwrite each other.
const (
	sessionCookie = "latchkey_console_"
	signinCookie  = "latchkey_signin_"
	// hostPrefix is required of Secure cookies: the browser then accepts
	// the cookie only with Secure, Path=/ and no Domain, so that neither a
	// sibling host nor plain HTTP can plant or replace it.
	hostPrefix = "__Host-"
)

// Names of the hidden form fields.
const (
	formTokenField   = "form_token"
	signinTokenField = "signin_token"
)

// signinCookieLifetime is how long a sign-in form stays usable.
const signinCookieLifetime = 12 * time.Hour

// secureRequest reports whether cookies set in answer to r are Secure.
func (h *Handler) secureRequest(r *http.Request) bool {
	return h.secure || r.TLS != nil
}

// cookieName returns the name of the cookie of kind for project.
func (h *Handler) cookieName(r *http.Request, kind, project string) string {
	if h.secureRequest(r) {
		return hostPrefix + kind + project
	}
	return kind + project
}

// cookiePath returns the Path of the console's cookies: "/" for __Host-
// cookies, else the console's directory as the browser sees it (the
// request URI up to the part the console was given, plus "/console/"), or
// "" when that cannot be told, which leaves the browser's default: the
// directory of the sign-in page, the console's directory too.
func (h *Handler) cookiePath(r *http.Request) string {
	if h.secureRequest(r) {
		return "/"
	}
	prefix, ok := mountPrefix(r)
	if !ok {
		return ""
	}
	return prefix + "/console/"
}

// mountPrefix returns what the host stripped from the path before handing
// the request to the console: the request URI's path less r.URL.Path (both
// escaped). http.StripPrefix and latchkey's path routing keep RequestURI.
func mountPrefix(r *http.Request) (string, bool) {
	if r.RequestURI == "" {
		return "", false
	}
	u, err := url.ParseRequestURI(r.RequestURI)
	if err != nil {
		return "", false
	}
	return strings.CutSuffix(u.EscapedPath(), r.URL.EscapedPath())
}

// setCookie sets the cookie of kind for project, living for maxAge.
func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, kind, project, value string, maxAge time.Duration) {
	http.SetCookie(w, &http.Cookie{
		Name:     h.cookieName(r, kind, project),
		Value:    value,
		Path:     h.cookiePath(r),
		MaxAge:   int(maxAge / time.Second),
		Expires:  h.now().Add(maxAge).UTC(),
		HttpOnly: true,
		Secure:   h.secureRequest(r),
		SameSite: http.SameSiteStrictMode,
	})
}

// clearCookie tells the browser to drop the cookie of kind for project.
func (h *Handler) clearCookie(w http.ResponseWriter, r *http.Request, kind, project string) {
	http.SetCookie(w, &http.Cookie{
		Name:     h.cookieName(r, kind, project),
		Value:    "",
		Path:     h.cookiePath(r),
		MaxAge:   -1,
		HttpOnly: true,
		Secure:   h.secureRequest(r),
		SameSite: http.SameSiteStrictMode,
	})
}

// cookieValue returns the value of the cookie of kind for project, or "".
func (h *Handler) cookieValue(r *http.Request, kind, project string) string {
	c, err := r.Cookie(h.cookieName(r, kind, project))
	if err != nil {
		return ""
	}
	return c.Value
}

// tokensEqual compares a submitted token with the expected one in constant
// time. An empty expected token matches nothing.
func tokensEqual(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// parseForm reads a form body of at most maxFormBytes. Values in the URL's
// query string are not read by callers (they use r.PostForm), so nothing
// secret is ever taken from a URL.
func parseForm(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	return r.ParseForm()
}
