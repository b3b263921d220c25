package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// AllowAnyOrigin returns next with the CORS header that lets a page of any
// origin read the response (Access-Control-Allow-Origin: *). It suits public
// documents only: the discovery document and the key set, which carry no
// secret and need no credentials.
func AllowAnyOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		next.ServeHTTP(w, r)
	})
}

// Preflight answers a CORS preflight (OPTIONS) for a public document that
// may be read with the given methods from any origin: 204 with
// Access-Control-Allow-Origin: *, the methods, any request headers, and a
// max-age of a day. An OPTIONS request that is not a preflight gets the same
// answer, with Allow.
func Preflight(methods string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Allow", methods)
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Methods", methods)
		if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
			h.Set("Access-Control-Allow-Headers", req)
		}
		h.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
	})
}

// The CORS answers for browser apps of listed origins (see [CORS]).
const (
	// CORSAllowHeaders are the request headers a listed origin's page may
	// send: the bearer token, the body's media type, the request id and
	// the trace context.
	CORSAllowHeaders = "Authorization, Content-Type, X-Request-Id, traceparent, tracestate"
	// CORSExposeHeaders are the response headers, beyond the safelisted
	// ones, that such a page may read.
	CORSExposeHeaders = "Retry-After, WWW-Authenticate, X-Request-Id"
	// CORSMaxAge is how long, in seconds, a browser may keep a preflight's
	// answer (two hours, the most Chromium keeps one).
	CORSMaxAge = "7200"
)

// CORS is the list of origins whose pages may call an API from a browser.
// Its zero value and a nil *CORS allow none. It never allows every origin
// (*) and never credentials: the API's tokens travel in the Authorization
// header, not in cookies.
type CORS struct {
	origins map[string]struct{}
}

// NewCORS returns the CORS of origins, each scheme://host[:port] as a
// browser sends it in the Origin header (no path, query or user; the
// scheme and host in any case, a scheme's default port left out), or an
// error naming the first origin that is not one. No origins give nil,
// which allows none.
func NewCORS(origins []string) (*CORS, error) {
	if len(origins) == 0 {
		return nil, nil
	}
	c := &CORS{origins: make(map[string]struct{}, len(origins))}
	for _, o := range origins {
		canon, err := CanonicalOrigin(o)
		if err != nil {
			return nil, err
		}
		c.origins[canon] = struct{}{}
	}
	return c, nil
}

// CanonicalOrigin returns origin as browsers serialize it (RFC 6454): the
// scheme and host in lower case, the port left out when it is the
// scheme's default, no trailing slash. It returns an error for "*",
// "null", and anything that is not scheme://host[:port].
func CanonicalOrigin(origin string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("CORS origin %q: %s; want scheme://host[:port], such as https://app.example.com", origin, why)
	}
	if origin == "*" || origin == "null" {
		return bad("every origin may not be allowed")
	}
	u, err := url.Parse(origin)
	switch {
	case err != nil:
		return bad("not a URL")
	case u.Scheme == "" || u.Opaque != "" || u.Host == "":
		return bad("no scheme and host")
	case u.User != nil:
		return bad("an origin has no user")
	case u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.HasSuffix(origin, "#"):
		return bad("an origin has no path, query or fragment")
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if host == "" || strings.HasSuffix(u.Host, ":") {
		return bad("no host, or an empty port")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // an IPv6 address
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, nil
}

// Allows reports whether c lists origin, the value of a request's Origin
// header (compared as browsers send it: exactly).
func (c *CORS) Allows(origin string) bool {
	if c == nil || origin == "" {
		return false
	}
	_, ok := c.origins[origin]
	return ok
}

// Origin returns the origin of r's one Origin header when c lists it, and
// false when r has none, several, or one c does not list.
func (c *CORS) Origin(r *http.Request) (string, bool) {
	if c == nil {
		return "", false
	}
	vals := r.Header.Values("Origin")
	if len(vals) != 1 || !c.Allows(vals[0]) {
		return "", false
	}
	return vals[0], true
}

// AllowOrigin sets the headers that let a page of origin, a listed one,
// read the response: Access-Control-Allow-Origin (that origin, never *)
// and Access-Control-Expose-Headers. Vary: Origin is the caller's to set,
// on every answer of a path whose answers depend on the origin.
func AllowOrigin(h http.Header, origin string) {
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", CORSExposeHeaders)
}

// IsPreflight reports whether r is a CORS preflight: an OPTIONS request
// with Access-Control-Request-Method.
func IsPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
}

// AnswerPreflight answers a preflight of a listed origin (whose
// Access-Control-Allow-Origin AllowOrigin has set) for a path served with
// methods: 204 with Access-Control-Allow-Methods, Access-Control-Allow-Headers
// (CORSAllowHeaders) and Access-Control-Max-Age (CORSMaxAge). The browser
// compares them with what the page asked for.
func AnswerPreflight(w http.ResponseWriter, methods string) {
	h := w.Header()
	h.Del("Access-Control-Expose-Headers") // for actual answers only
	h.Set("Access-Control-Allow-Methods", methods)
	h.Set("Access-Control-Allow-Headers", CORSAllowHeaders)
	h.Set("Access-Control-Max-Age", CORSMaxAge)
	w.WriteHeader(http.StatusNoContent)
}
