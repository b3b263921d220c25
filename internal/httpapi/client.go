package httpapi

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// RemoteHost returns the host part of r.RemoteAddr, or r.RemoteAddr itself
// when it has no port: the client address of a request served without a
// proxy in front. It is the default client address of login throttling and
// of the console.
func RemoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// RequestBase returns the base_url a request for the path suffix (the path
// of a route, relative to its base_url) was sent to: the scheme (https under
// TLS), the Host, and the path of the original request target (a host may
// have stripped a prefix from r.URL) less suffix. Documents that name their
// base_url use it when no issuer is configured.
func RequestBase(r *http.Request, suffix string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	path := r.URL.Path
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil {
		path = u.Path
	}
	return scheme + "://" + r.Host + strings.TrimSuffix(path, suffix)
}
