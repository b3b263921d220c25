package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// preflight sends a CORS preflight of method from origin to path.
func (s *server) preflight(path, origin, method string) result {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodOptions, s.base+path, nil)
	require.NoError(s.t, err)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", method)
	req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
	res, err := s.client.Do(req)
	require.NoError(s.t, err)
	_ = res.Body.Close()
	return result{status: res.StatusCode, header: res.Header}
}

// from sends a request without a body from a page of origin.
func (s *server) from(origin, method, path, token string) result {
	s.t.Helper()
	req, err := http.NewRequest(method, s.base+path, nil)
	require.NoError(s.t, err)
	req.Header.Set("Origin", origin)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := s.client.Do(req)
	require.NoError(s.t, err)
	_ = res.Body.Close()
	return result{status: res.StatusCode, header: res.Header}
}

// corsHeaders returns the Access-Control-* headers of h.
func corsHeaders(h http.Header) map[string][]string {
	out := map[string][]string{}
	for k, v := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			out[k] = v
		}
	}
	return out
}

// checkCORS checks that s lets pages of the listed origins call the /v1
// API, and nobody else; the console sends no CORS headers.
func checkCORS(t *testing.T, s *server, access string, listed ...string) {
	t.Helper()
	for _, origin := range listed {
		for _, c := range []struct{ path, method string }{
			{"/v1/identity/login", "POST"}, {"/p/acme/v1/identity/refresh", "POST"}, {"/v1/identity/logout", "POST"},
			{"/p/acme/v1/identity/introspect", "POST"}, {"/v1/identity/revocations", "GET"}, {"/p/acme/v1/contacts", "GET"},
		} {
			r := s.preflight(c.path, origin, c.method)
			require.Equal(t, http.StatusNoContent, r.status, "%s %s", origin, c.path)
			assert.Equal(t, origin, r.header.Get("Access-Control-Allow-Origin"))
			assert.Contains(t, r.header.Get("Access-Control-Allow-Methods"), c.method)
			assert.Contains(t, r.header.Get("Access-Control-Allow-Headers"), "Authorization")
			assert.Contains(t, r.header.Get("Access-Control-Allow-Headers"), "Content-Type")
			assert.NotEmpty(t, r.header.Get("Access-Control-Max-Age"))
			assert.Contains(t, r.header.Values("Vary"), "Origin")
			assert.Empty(t, r.header.Get("Access-Control-Allow-Credentials"))
		}
		r := s.from(origin, "GET", "/p/acme/v1/contacts", access)
		require.Equal(t, http.StatusOK, r.status)
		assert.Equal(t, origin, r.header.Get("Access-Control-Allow-Origin"))
		assert.Contains(t, r.header.Values("Vary"), "Origin")
		r = s.from(origin, "GET", "/p/acme/v1/contacts", "")
		require.Equal(t, http.StatusUnauthorized, r.status)
		assert.Equal(t, origin, r.header.Get("Access-Control-Allow-Origin"), "errors are readable too")
		r = s.from(origin, "GET", "/p/acme/console/", "")
		assert.Empty(t, corsHeaders(r.header), "the console")
	}
	r := s.preflight("/p/acme/v1/contacts", "https://evil.example.com", "GET")
	assert.Equal(t, http.StatusMethodNotAllowed, r.status)
	assert.Empty(t, corsHeaders(r.header))
	r = s.from("https://evil.example.com", "GET", "/p/acme/v1/contacts", access)
	assert.Equal(t, http.StatusOK, r.status)
	assert.Empty(t, corsHeaders(r.header))
}

// serve -cors-origin (repeatable) and LATCHKEY_CORS_ORIGINS list the
// origins whose pages may call the API; none by default.
func TestE2E_corsOrigins(t *testing.T) {
	dir := t.TempDir()
	ok(t, dir, "", "project create", "acme")
	ok(t, dir, "pw-ada\n", "user create", "-project", "acme", "-email", "ada@example.com")

	s := startServer(t, dir, "-cors-origin", "https://app.example.com", "-cors-origin", "HTTP://localhost:5173")
	access, _ := s.login("/p/acme", "ada@example.com", "pw-ada")
	checkCORS(t, s, access, "https://app.example.com", "http://localhost:5173")
	require.NoError(t, s.stop())

	s = startServerEnv(t, dir, []string{"LATCHKEY_CORS_ORIGINS=https://app.example.com, https://admin.example.com:8443"})
	checkCORS(t, s, access, "https://app.example.com", "https://admin.example.com:8443")
	require.NoError(t, s.stop())

	// The flag replaces the variable.
	s = startServerEnv(t, dir, []string{"LATCHKEY_CORS_ORIGINS=https://app.example.com"}, "-cors-origin", "https://other.example.com")
	checkCORS(t, s, access, "https://other.example.com")
	assert.Equal(t, http.StatusMethodNotAllowed, s.preflight("/v1/contacts", "https://app.example.com", "GET").status)
	require.NoError(t, s.stop())

	s = startServer(t, dir)
	checkCORS(t, s, access) // none
	require.NoError(t, s.stop())

	for _, args := range [][]string{{"serve", "-cors-origin", "https://app.example.com/"}, {"serve", "-cors-origin", "*"}} {
		res := cli(t, dir, "", args...)
		assert.Equal(t, 2, res.code, "%v: %s", args, res.stderr)
		assert.Contains(t, res.stderr, "origin")
	}
	res := cliEnv(t, dir, "", []string{"LATCHKEY_CORS_ORIGINS=app.example.com"}, "serve", "-addr", "127.0.0.1:0")
	assert.Equal(t, 2, res.code, res.stderr)
	assert.Contains(t, res.stderr, "LATCHKEY_CORS_ORIGINS")
}
