package main

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/remote"
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
	t.Parallel()
	dir := t.TempDir()
	ok(t, dir, "", "project create", "acme")
	ok(t, dir, "pw-of-ada\n", "user create", "-project", "acme", "-email", "ada@example.com")

	s := startServer(t, dir, "-cors-origin", "https://app.example.com", "-cors-origin", "HTTP://localhost:5173")
	access, _ := s.login("/p/acme", "ada@example.com", "pw-of-ada")
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

// issuerOf returns the iss of a token, read without verifying it (nil when
// it has none).
func issuerOf(t *testing.T, token string) any {
	t.Helper()
	claims := jwt.MapClaims{}
	_, _, err := jwt.NewParser().ParseUnverified(token, claims)
	require.NoError(t, err)
	return claims["iss"]
}

// behind returns a client that sends every request, whatever its host, to
// the server s: the deployment's public name in front of it, as a reverse
// proxy or DNS would put it.
func behind(s *server) *http.Client {
	addr := strings.TrimPrefix(s.base, "http://")
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr}
}

// serve records its public URL in the store, and the commands that mint
// tokens use it when not told one: a key made on the command line carries
// the iss of the server's tokens, and the remote verifier, which checks iss
// against the discovery document, accepts it.
func TestE2E_cliMintsWithTheRecordedPublicURL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ok(t, dir, "", "project create", "acme")
	ok(t, dir, "pw-of-ada\n", "user create", "-project", "acme", "-email", "ada@example.com")
	before := ok(t, dir, "", "key create", "-project", "acme", "-name", "before any serve")[0]
	assert.Nil(t, issuerOf(t, before["token"].(string)), "no serve has recorded a public URL yet")

	const public = "http://id.example.test"
	s := startServer(t, dir, "-public-url", public+"/")
	k := ok(t, dir, "", "key create", "-project", "acme", "-name", "cli")[0]
	token := k["token"].(string)
	assert.Equal(t, public+"/p/acme", issuerOf(t, token))
	d := ok(t, dir, "", "key create", "-project", "default", "-name", "cli")[0]
	assert.Equal(t, public, issuerOf(t, d["token"].(string)), "default is {public}")
	flagged := ok(t, dir, "", "key create", "-project", "acme", "-name", "flag", "-public-url", "https://other.example.com")[0]
	assert.Equal(t, "https://other.example.com/p/acme", issuerOf(t, flagged["token"].(string)), "-public-url wins")
	res := cliEnv(t, dir, "", []string{"LATCHKEY_PUBLIC_URL=https://env.example.com"}, "key create", "-project", "acme", "-name", "env")
	require.Equal(t, 0, res.code, res.stderr)
	assert.Equal(t, "https://env.example.com/p/acme", issuerOf(t, res.lines[0]["token"].(string)), "LATCHKEY_PUBLIC_URL wins")

	// The remote verifier reaches the server under its public name, reads
	// the issuer from discovery and accepts the key and a login token.
	ctx := t.Context()
	v, err := remote.New(ctx, public+"/p/acme", token, &remote.Options{Client: behind(s), Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.Close() })
	c, err := v.Verify(ctx, token)
	require.NoError(t, err, "the CLI's key")
	assert.Equal(t, k["id"], c.Subject)
	access, _ := s.login("/p/acme", "ada@example.com", "pw-of-ada")
	_, err = v.Verify(ctx, access)
	require.NoError(t, err, "a login token")
	_, err = v.Verify(ctx, before["token"].(string))
	require.Error(t, err, "a key without iss is refused by a verifier that checks it")
	require.NoError(t, s.stop())

	// Without -public-url, serve records its own address.
	s = startServer(t, dir)
	k = ok(t, dir, "", "key create", "-project", "acme", "-name", "local")[0]
	token = k["token"].(string)
	assert.Equal(t, s.base+"/p/acme", issuerOf(t, token))
	v, err = remote.New(ctx, s.base+"/p/acme", token, &remote.Options{Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.Close() })
	_, err = v.Verify(ctx, token)
	require.NoError(t, err)
}

// A stock RFC 7662 client: it reads the introspection endpoint and the
// ways to authenticate from discovery, and sends the API key's id and token
// as client_secret_basic credentials (each form-urlencoded, then base64),
// with token_type_hint, as openid-client and zitadel's resource server do.
func TestE2E_introspectionWithClientSecretBasic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ok(t, dir, "", "project create", "acme")
	ada := ok(t, dir, "pw-of-ada\n", "user create", "-project", "acme", "-email", "ada@example.com")[0]["id"].(string)
	s := startServer(t, dir)
	k := ok(t, dir, "", "key create", "-project", "acme", "-name", "resource server")[0]
	other := ok(t, dir, "", "key create", "-project", "acme", "-name", "other")[0]
	access, _ := s.login("/p/acme", "ada@example.com", "pw-of-ada")

	d := s.do("GET", "/p/acme/.well-known/openid-configuration", "", "")
	require.Equal(t, http.StatusOK, d.status)
	meta := d.json(t)
	assert.Equal(t, []any{"client_secret_basic", "bearer"}, meta["introspection_endpoint_auth_methods_supported"])
	endpoint := meta["introspection_endpoint"].(string)
	require.True(t, strings.HasPrefix(endpoint, s.base+"/p/acme/"), endpoint)

	introspect := func(id, secret, token string) result {
		t.Helper()
		body := url.Values{"token": {token}, "token_type_hint": {"access_token"}}.Encode()
		req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString(
			[]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret))))
		res, err := s.client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		raw, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return result{status: res.StatusCode, header: res.Header, body: raw}
	}
	r := introspect(k["id"].(string), k["token"].(string), access)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	v := r.json(t)
	assert.Equal(t, true, v["active"])
	assert.Equal(t, "user", v["token_type"])

	// Go's own SetBasicAuth (no form-urlencoding) works too: a key's id and
	// token need no escape.
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(url.Values{"token": {access}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(k["id"].(string), k["token"].(string))
	res, err := s.client.Do(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)

	r = introspect(other["id"].(string), k["token"].(string), access)
	require.Equal(t, http.StatusUnauthorized, r.status, "the id of another key")
	assert.Equal(t, "invalid_token", r.json(t)["code"])
	assert.True(t, strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Basic "), r.header.Get("WWW-Authenticate"))
	// A login token as the secret: with another id than its subject, a
	// mismatch of id and token; with the user's own id, a login token as the
	// caller.
	for _, id := range []string{k["id"].(string), "ada@example.com"} {
		r = introspect(id, access, access)
		assert.Equal(t, http.StatusUnauthorized, r.status, "a login token as the secret of the id %q", id)
	}
	r = introspect(ada, access, access)
	assert.Equal(t, http.StatusForbidden, r.status, "a login token as the secret of its user's id")

	ok(t, dir, "", "key revoke", "-project", "acme", k["id"].(string))
	r = introspect(k["id"].(string), k["token"].(string), access)
	assert.Equal(t, http.StatusUnauthorized, r.status, "a key revoked by the CLI")
}
