package latchkey_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/store"
)

const (
	appOrigin   = "https://app.example.com"
	localOrigin = "http://localhost:3000"
	evilOrigin  = "https://evil.example.com"
)

// corsServer serves a Latchkey with opts over real HTTP, routed as the
// example server routes (project P under /p/P), every exchange checked
// against the OpenAPI document. The project acme has a user ada (password
// "pw-of-ada") and an API key, whose token it returns.
func corsServer(t *testing.T, opts *latchkey.Options) (*httptest.Server, *latchkey.Latchkey, string) {
	t.Helper()
	st := openStore(t)
	lk, h := newPathLatchkey(t, st, opts)
	ctx := context.Background()
	_, err := lk.CreateProject(ctx, "acme")
	require.NoError(t, err)
	for _, p := range []string{store.DefaultProject, "acme"} {
		_, err = lk.Users().Create(ctx, p, "ada@example.com", "pw-of-ada", nil)
		require.NoError(t, err)
	}
	_, key, err := lk.APIKeys().Create(ctx, "acme", "backend")
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	contract(t).WrapClient(srv.Client())
	return srv, lk, key
}

// send sends a request with the headers given as name, value pairs and
// returns the status, headers and body.
func send(t *testing.T, srv *httptest.Server, method, path, body string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, res.Header, string(raw)
}

// noCORS requires that h carries no CORS header at all.
func noCORS(t *testing.T, h http.Header, msg string) {
	t.Helper()
	for k := range h {
		assert.False(t, strings.HasPrefix(k, "Access-Control-"), "%s: %s: %q", msg, k, h.Values(k))
	}
}

// allowsOrigin requires that h lets a page of origin read the answer, and
// nothing more.
func allowsOrigin(t *testing.T, h http.Header, origin, msg string) {
	t.Helper()
	preflightAllows(t, h, origin, msg)
	assert.Contains(t, h.Get("Access-Control-Expose-Headers"), "X-Request-Id", msg)
	assert.Contains(t, h.Get("Access-Control-Expose-Headers"), "Retry-After", msg)
}

// preflightAllows requires that h, a preflight's answer, names origin, and
// never credentials.
func preflightAllows(t *testing.T, h http.Header, origin, msg string) {
	t.Helper()
	assert.Equal(t, []string{origin}, h.Values("Access-Control-Allow-Origin"), msg)
	assert.Contains(t, h.Values("Vary"), "Origin", msg)
	assert.Empty(t, h.Values("Access-Control-Allow-Credentials"), msg)
}

// v1Endpoints are the /v1 paths of the routing table and the method each
// serves (GET also serves HEAD).
var v1Endpoints = []struct{ path, method, allow string }{
	{"/v1/identity/login", "POST", "POST"},
	{"/v1/identity/refresh", "POST", "POST"},
	{"/v1/identity/logout", "POST", "POST"},
	{"/v1/identity/introspect", "POST", "POST"},
	{"/v1/identity/revocations", "GET", "GET, HEAD"},
	{"/v1/contacts", "GET", "GET, HEAD"},
}

// For a listed origin, every /v1 endpoint answers the preflight and lets
// the page read every answer, successes and errors alike.
func TestCORS_listedOrigin(t *testing.T) {
	srv, lk, key := corsServer(t, &latchkey.Options{CORSOrigins: []string{appOrigin, "HTTP://LocalHost:3000"}})

	for _, prefix := range []string{"", "/p/acme"} {
		for _, origin := range []string{appOrigin, localOrigin} {
			for _, ep := range v1Endpoints {
				name := origin + " " + ep.method + " " + prefix + ep.path
				st, h, body := send(t, srv, "OPTIONS", prefix+ep.path, "",
					"Origin", origin, "Access-Control-Request-Method", ep.method,
					"Access-Control-Request-Headers", "authorization,content-type")
				require.Equal(t, http.StatusNoContent, st, "%s: %s", name, body)
				preflightAllows(t, h, origin, name)
				assert.Equal(t, ep.allow, h.Get("Access-Control-Allow-Methods"), name)
				assert.Contains(t, h.Get("Access-Control-Allow-Headers"), "Authorization", name)
				assert.Contains(t, h.Get("Access-Control-Allow-Headers"), "Content-Type", name)
				assert.Equal(t, "7200", h.Get("Access-Control-Max-Age"), name)
				assert.NotEmpty(t, h.Get("X-Request-Id"), name)
				assert.Empty(t, body)

				// No credentials: 401 for the endpoints that need them, 400
				// for the others (no body). Both readable by the page.
				st, h, _ = send(t, srv, ep.method, prefix+ep.path, "", "Origin", origin)
				require.Contains(t, []int{400, 401, 415}, st, name)
				allowsOrigin(t, h, origin, name+" (refused)")
				// Another method: 405.
				st, h, _ = send(t, srv, "DELETE", prefix+ep.path, "", "Origin", origin)
				require.Equal(t, http.StatusMethodNotAllowed, st, name)
				assert.Equal(t, ep.allow, h.Get("Allow"))
				allowsOrigin(t, h, origin, name+" (405)")
			}
		}
	}

	// The successes of a browser app's session, each readable by its page.
	const jsonType = "application/json"
	st, h, body := send(t, srv, "POST", "/p/acme/v1/identity/login", `{"email":"ada@example.com","password":"pw-of-ada"}`,
		"Origin", appOrigin, "Content-Type", jsonType)
	require.Equal(t, http.StatusOK, st, body)
	allowsOrigin(t, h, appOrigin, "login")
	access, refresh := tokens(t, body)
	st, h, _ = send(t, srv, "GET", "/p/acme/v1/contacts", "", "Origin", appOrigin, "Authorization", "Bearer "+access)
	require.Equal(t, http.StatusOK, st)
	allowsOrigin(t, h, appOrigin, "contacts")
	st, h, body = send(t, srv, "POST", "/p/acme/v1/identity/refresh", `{"refresh_token":"`+refresh+`"}`,
		"Origin", appOrigin, "Content-Type", jsonType)
	require.Equal(t, http.StatusOK, st, body)
	allowsOrigin(t, h, appOrigin, "refresh")
	_, refresh = tokens(t, body)
	st, h, _ = send(t, srv, "POST", "/p/acme/v1/identity/logout", `{"refresh_token":"`+refresh+`"}`,
		"Origin", appOrigin, "Content-Type", jsonType)
	require.Equal(t, http.StatusNoContent, st)
	allowsOrigin(t, h, appOrigin, "logout")
	st, h, _ = send(t, srv, "POST", "/p/acme/v1/identity/introspect", url.Values{"token": {access}}.Encode(),
		"Origin", appOrigin, "Content-Type", "application/x-www-form-urlencoded", "Authorization", "Bearer "+key)
	require.Equal(t, http.StatusOK, st)
	allowsOrigin(t, h, appOrigin, "introspect")
	st, h, _ = send(t, srv, "GET", "/p/acme/v1/identity/revocations", "", "Origin", appOrigin, "Authorization", "Bearer "+key)
	require.Equal(t, http.StatusOK, st)
	allowsOrigin(t, h, appOrigin, "revocations")
	st, h, _ = send(t, srv, "HEAD", "/p/acme/v1/contacts", "", "Origin", appOrigin, "Authorization", "Bearer "+key)
	require.Equal(t, http.StatusOK, st)
	allowsOrigin(t, h, appOrigin, "HEAD contacts")

	// Errors: a refused token, a malformed body, an unknown project, a
	// login token where an API key is needed.
	st, h, _ = send(t, srv, "GET", "/p/acme/v1/contacts", "", "Origin", appOrigin, "Authorization", "Bearer nope")
	require.Equal(t, http.StatusUnauthorized, st)
	allowsOrigin(t, h, appOrigin, "401")
	assert.NotEmpty(t, h.Get("WWW-Authenticate"))
	st, h, _ = send(t, srv, "POST", "/p/acme/v1/identity/login", `{`, "Origin", appOrigin, "Content-Type", jsonType)
	require.Equal(t, http.StatusBadRequest, st)
	allowsOrigin(t, h, appOrigin, "400")
	st, h, _ = send(t, srv, "GET", "/p/acme/v1/identity/revocations", "", "Origin", appOrigin, "Authorization", "Bearer "+access)
	require.Equal(t, http.StatusUnauthorized, st, "the session ended at logout")
	allowsOrigin(t, h, appOrigin, "401 ended session")
	st, h, _ = send(t, srv, "GET", "/p/nope/v1/contacts", "", "Origin", appOrigin)
	require.Equal(t, http.StatusNotFound, st)
	allowsOrigin(t, h, appOrigin, "404 unknown project")
	st, h, _ = send(t, srv, "OPTIONS", "/p/nope/v1/contacts", "", "Origin", appOrigin, "Access-Control-Request-Method", "GET")
	require.Equal(t, http.StatusNotFound, st, "a preflight to an unknown project")
	allowsOrigin(t, h, appOrigin, "404 preflight")

	// A server error: the store is gone.
	require.NoError(t, lk.Store().Close())
	st, h, _ = send(t, srv, "GET", "/p/other/v1/contacts", "", "Origin", appOrigin, "Authorization", "Bearer "+key)
	require.GreaterOrEqual(t, st, 500)
	allowsOrigin(t, h, appOrigin, "5xx")
}

// tokens returns the access and refresh tokens of a token set.
func tokens(t *testing.T, body string) (access, refresh string) {
	t.Helper()
	var ts tokenSet
	require.NoError(t, json.Unmarshal([]byte(body), &ts))
	require.NotEmpty(t, ts.AccessToken, body)
	require.NotEmpty(t, ts.RefreshToken, body)
	return ts.AccessToken, ts.RefreshToken
}

// An origin that is not listed, or no origin, gets no CORS header: its
// preflight is answered as any OPTIONS request is (405), and the console
// never sends CORS headers, not even to a listed origin.
func TestCORS_unlistedOriginAndConsole(t *testing.T) {
	srv, _, key := corsServer(t, &latchkey.Options{CORSOrigins: []string{appOrigin}})
	for _, origin := range []string{evilOrigin, "https://app.example.com:8443", "http://app.example.com", "null", ""} {
		for _, ep := range v1Endpoints {
			name := "from " + origin + " " + ep.path
			hdr := []string{"Access-Control-Request-Method", ep.method}
			if origin != "" {
				hdr = append(hdr, "Origin", origin)
			}
			st, h, _ := send(t, srv, "OPTIONS", ep.path, "", hdr...)
			require.Equal(t, http.StatusMethodNotAllowed, st, name)
			assert.Equal(t, ep.allow, h.Get("Allow"), name)
			noCORS(t, h, name)
			st, h, _ = send(t, srv, ep.method, "/p/acme"+ep.path, "", "Origin", origin, "Authorization", "Bearer "+key)
			require.Less(t, st, 500, name)
			noCORS(t, h, name)
		}
	}
	// Two Origin headers: no origin is allowed.
	st, h, _ := send(t, srv, "OPTIONS", "/v1/contacts", "", "Origin", appOrigin, "Origin", appOrigin,
		"Access-Control-Request-Method", "GET")
	require.Equal(t, http.StatusMethodNotAllowed, st)
	noCORS(t, h, "two origins")

	for _, m := range []string{"GET", "OPTIONS", "POST"} {
		_, h, _ := send(t, srv, m, "/console/", "", "Origin", appOrigin, "Access-Control-Request-Method", "POST")
		noCORS(t, h, "console "+m)
		assert.NotContains(t, h.Values("Vary"), "Origin")
		_, h, _ = send(t, srv, m, "/p/acme/console/", "", "Origin", appOrigin)
		noCORS(t, h, "console of acme "+m)
	}

	// The public documents stay readable by any origin.
	for _, p := range []string{"/.well-known/openid-configuration", "/.well-known/jwks.json", "/openapi.json"} {
		for _, origin := range []string{appOrigin, evilOrigin} {
			st, h, _ := send(t, srv, "GET", "/p/acme"+p, "", "Origin", origin)
			require.Equal(t, http.StatusOK, st, p)
			assert.Equal(t, "*", h.Get("Access-Control-Allow-Origin"), p)
			st, h, _ = send(t, srv, "OPTIONS", "/p/acme"+p, "", "Origin", origin, "Access-Control-Request-Method", "GET")
			require.Equal(t, http.StatusNoContent, st, p)
			assert.Equal(t, "*", h.Get("Access-Control-Allow-Origin"), p)
			// Always, their errors too: a method they do not serve.
			st, h, _ = send(t, srv, "POST", "/p/acme"+p, "", "Origin", origin)
			require.Equal(t, http.StatusMethodNotAllowed, st, p)
			assert.NotEmpty(t, h.Get("Allow"), p)
			assert.Equal(t, "*", h.Get("Access-Control-Allow-Origin"), p+" 405")
		}
	}
}

// By default no origin is listed: the /v1 API sends no CORS headers and no
// Vary, as before the option existed.
func TestCORS_noOriginsByDefault(t *testing.T) {
	srv, _, _ := corsServer(t, nil)
	for _, ep := range v1Endpoints {
		st, h, _ := send(t, srv, "OPTIONS", ep.path, "", "Origin", appOrigin, "Access-Control-Request-Method", ep.method)
		require.Equal(t, http.StatusMethodNotAllowed, st, ep.path)
		noCORS(t, h, ep.path)
		assert.Empty(t, h.Values("Vary"), ep.path)
		_, h, _ = send(t, srv, ep.method, ep.path, "", "Origin", appOrigin)
		noCORS(t, h, ep.path)
	}
}

// New refuses an origin that is not scheme://host[:port].
func TestOptions_CORSOriginsChecked(t *testing.T) {
	for _, o := range []string{
		"*", "null", "", "app.example.com", "https://app.example.com/", "https://app.example.com/app",
		"https://app.example.com?x=1", "https://app.example.com#top", "https://user@app.example.com",
		"https://", "https://app.example.com:", "/relative",
	} {
		_, err := latchkey.New(openStore(t), testMasterKey, &latchkey.Options{
			CORSOrigins: []string{appOrigin, o}, Logger: testLogger(t),
		})
		require.Error(t, err, "%q", o)
		assert.Contains(t, err.Error(), "CORSOrigins", "%q", o)
	}
}
