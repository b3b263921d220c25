package latchkey_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/internal/openapitest"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
	"github.com/latchkey-dev/latchkey/store/sqlite/sqlitetest"
	"github.com/latchkey-dev/latchkey/tenant"
)

var testMasterKey = []byte("0123456789abcdef0123456789abcdef")

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlitetest.Path(t), &sqlite.Options{Logger: testLogger(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

func newLatchkey(t *testing.T, st store.Store, opts *latchkey.Options) *latchkey.Latchkey {
	t.Helper()
	if opts == nil {
		opts = &latchkey.Options{}
	}
	opts.Logger = testLogger(t)
	lk, err := latchkey.New(st, testMasterKey, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = lk.Close() })
	return lk
}

// newPathLatchkey is newLatchkey routed as the example server routes:
// project P at /p/P, the project default also at /.
func newPathLatchkey(t *testing.T, st store.Store, opts *latchkey.Options) (*latchkey.Latchkey, http.Handler) {
	t.Helper()
	if opts == nil {
		opts = &latchkey.Options{}
	}
	opts.Resolver = tenant.FromRequest
	lk := newLatchkey(t, st, opts)
	return lk, tenant.ByPath("/p/", store.DefaultProject, lk.Handler())
}

// createContact creates a contact named name in project p.
func createContact(t *testing.T, st store.Store, p, name string) {
	t.Helper()
	_, err := st.CreateContact(context.Background(), store.Contact{
		ID: store.NewID(store.PrefixContact), ProjectID: p, Name: name, CreatedAt: time.Now(),
	})
	require.NoError(t, err)
}

type client struct {
	t *testing.T
	h http.Handler
}

// newClient returns a client of h whose every exchange is checked against
// the OpenAPI document.
func newClient(t *testing.T, h http.Handler) client {
	return client{t: t, h: contract(t).Handler(h)}
}

// contract returns a validator of the OpenAPI document for t, for requests
// routed as the example server routes them (project P under /p/P).
func contract(t *testing.T) *openapitest.Validator {
	return openapitest.New(t, &openapitest.Options{ProjectPrefix: "/p/", RequestIDs: true})
}

// do sends a request to the handler and returns the status, headers and
// body.
func (c client) do(method, path, token, body string) (int, http.Header, string) {
	c.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	c.h.ServeHTTP(w, req)
	return w.Code, w.Header(), w.Body.String()
}

// problem checks that the answer is problem+json with the status and code.
func (c client) problem(method, path, token string, status int, code string) http.Header {
	c.t.Helper()
	got, h, body := c.do(method, path, token, "")
	require.Equal(c.t, status, got, "%s %s: %s", method, path, body)
	require.Equal(c.t, "application/problem+json", h.Get("Content-Type"), body)
	var p struct {
		Code   string `json:"code"`
		Status int    `json:"status"`
	}
	require.NoError(c.t, json.Unmarshal([]byte(body), &p))
	require.Equal(c.t, code, p.Code)
	require.Equal(c.t, status, p.Status)
	return h
}

// login logs in and returns the access and refresh tokens.
func (c client) login(prefix, email, password string) (string, string) {
	c.t.Helper()
	st, _, body := c.do("POST", prefix+"/v1/identity/login", "", `{"email":"`+email+`","password":"`+password+`"}`)
	require.Equal(c.t, http.StatusOK, st, body)
	var ts struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		ExpiresIn    int    `json:"expires_in"`
	}
	require.NoError(c.t, json.Unmarshal([]byte(body), &ts))
	require.Equal(c.t, 86400, ts.ExpiresIn)
	return ts.AccessToken, ts.RefreshToken
}

func (c client) listNames(path, token string) []string {
	c.t.Helper()
	st, _, body := c.do("GET", path, token, "")
	require.Equal(c.t, http.StatusOK, st, body)
	var page struct {
		Data []struct {
			Name string `json:"name"`
		} `json:"data"`
	}
	require.NoError(c.t, json.Unmarshal([]byte(body), &page))
	names := []string{}
	for _, d := range page.Data {
		names = append(names, d.Name)
	}
	return names
}

func TestNew_ensuresDefaultProject(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	newLatchkey(t, st, nil)
	_, err := st.GetProject(ctx, store.DefaultProject)
	require.NoError(t, err)
	k1, err := st.ActiveSigningKey(ctx, store.DefaultProject)
	require.NoError(t, err)
	// A second instance on the same store keeps the project and its key.
	newLatchkey(t, st, nil)
	k2, err := st.ActiveSigningKey(ctx, store.DefaultProject)
	require.NoError(t, err)
	assert.Equal(t, k1.ID, k2.ID)
}

func TestNew_badMasterKey(t *testing.T) {
	_, err := latchkey.New(openStore(t), []byte("short"), nil)
	require.ErrorIs(t, err, keys.ErrMasterKey)
	_, err = latchkey.New(openStore(t), make([]byte, keys.MasterKeySize), nil)
	require.ErrorIs(t, err, keys.ErrMasterKey, "an all-zero key is a key never set")
	assert.Panics(t, func() { _, _ = latchkey.New(nil, testMasterKey, nil) })
}

func TestHandler_routes(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	lk := newLatchkey(t, st, nil)
	_, err := lk.Users().Create(ctx, "default", "ada@example.com", "pw-ada-secret", []string{"admin"})
	require.NoError(t, err)
	createContact(t, st, "default", "Grace")
	c := newClient(t, lk.Handler())

	access, refresh := c.login("", "ADA@example.com", "pw-ada-secret")
	assert.Equal(t, []string{"Grace"}, c.listNames("/v1/contacts", access))
	assert.Equal(t, []string{"Grace"}, c.listNames("/v1/contacts?limit=1", access))

	st2, _, body := c.do("POST", "/v1/identity/refresh", "", `{"refresh_token":"`+refresh+`"}`)
	require.Equal(t, http.StatusOK, st2, body)

	st2, h, body := c.do("GET", "/.well-known/jwks.json", "", "")
	require.Equal(t, http.StatusOK, st2, body)
	assert.Contains(t, body, `"kty":"OKP"`)
	assert.Contains(t, h.Get("Content-Type"), "json")

	h = c.problem("GET", "/v1/contacts", "", http.StatusUnauthorized, "invalid_token")
	assert.Contains(t, h.Get("WWW-Authenticate"), "Bearer")
	c.problem("GET", "/v1/contacts", "garbage", http.StatusUnauthorized, "invalid_token")
	c.problem("GET", "/v1/contacts?limit=0", access, http.StatusBadRequest, "invalid_parameter")
	c.problem("GET", "/v1/contacts?cursor=x", access, http.StatusBadRequest, "invalid_cursor")

	for _, p := range []string{"/", "/v1", "/v1/", "/v1/nope", "/v1/contacts/", "/v1/contacts/x", "/v2/contacts",
		"/.well-known/", "/v1//contacts", "/v1/./contacts", "/x/../v1/contacts", "/healthz"} {
		c.problem("GET", p, access, http.StatusNotFound, "not_found")
	}
	cases := map[string]string{
		"POST /v1/contacts":                        "GET, HEAD",
		"DELETE /v1/contacts":                      "GET, HEAD",
		"GET /v1/identity/login":                   "POST",
		"PUT /v1/identity/refresh":                 "POST",
		"GET /v1/identity/logout":                  "POST",
		"GET /v1/identity/introspect":              "POST",
		"POST /v1/identity/revocations":            "GET, HEAD",
		"POST /.well-known/jwks.json":              "GET, HEAD, OPTIONS",
		"DELETE /.well-known/openid-configuration": "GET, HEAD, OPTIONS",
	}
	for req, allow := range cases {
		method, path, _ := strings.Cut(req, " ")
		h := c.problem(method, path, access, http.StatusMethodNotAllowed, "method_not_allowed")
		assert.Equal(t, allow, h.Get("Allow"), req)
	}
}

func TestHandler_apiKeys(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	lk := newLatchkey(t, st, nil)
	createContact(t, st, "default", "Grace")
	k, token, err := lk.APIKeys().Create(ctx, "default", "backend")
	require.NoError(t, err)
	c := newClient(t, lk.Handler())
	assert.Equal(t, []string{"Grace"}, c.listNames("/v1/contacts", token))

	// Revoked by another Latchkey on the same store (as the CLI does):
	// refused on the very next request.
	other := newLatchkey(t, st, nil)
	require.NoError(t, other.APIKeys().Revoke(ctx, "default", k.ID))
	c.problem("GET", "/v1/contacts", token, http.StatusUnauthorized, "invalid_token")

	ks, err := lk.APIKeys().List(ctx, "default")
	require.NoError(t, err)
	require.Len(t, ks, 1)
	assert.True(t, ks[0].Revoked())
	assert.ErrorIs(t, lk.APIKeys().Revoke(ctx, "default", "key_nope"), store.ErrNotFound)
}

func TestHandler_resolver(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	boom := errors.New("boom")
	lk := newLatchkey(t, st, &latchkey.Options{Resolver: func(r *http.Request) (string, error) {
		switch p := r.Header.Get("X-Project"); p {
		case "":
			return "", tenant.ErrUnknownProject
		case "fail":
			return "", boom
		default:
			return p, nil
		}
	}})
	for _, p := range []string{"a", "b"} {
		_, err := lk.CreateProject(ctx, p)
		require.NoError(t, err)
		createContact(t, st, p, "in "+p)
	}
	_, tokA, err := lk.APIKeys().Create(ctx, "a", "k")
	require.NoError(t, err)

	h := contract(t).Handler(lk.Handler())
	send := func(project, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/v1/contacts", nil)
		req.Header.Set("X-Project", project)
		req.Header.Set("Authorization", "Bearer "+tokA)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	w := send("a", tokA)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Contains(t, w.Body.String(), `"in a"`)
	assert.Equal(t, http.StatusUnauthorized, send("b", tokA).Code, "a token of project a in project b")
	assert.Equal(t, http.StatusNotFound, send("", tokA).Code)
	assert.Equal(t, http.StatusNotFound, send("nope", tokA).Code)
	assert.Equal(t, http.StatusNotFound, send("Not A Slug", tokA).Code)
	w = send("fail", tokA)
	assert.Equal(t, http.StatusInternalServerError, w.Code)
	assert.NotContains(t, w.Body.String(), "boom")
}

func TestByPath(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	lk, h := newPathLatchkey(t, st, nil)
	for _, p := range []string{"default", "a"} {
		if p != "default" {
			_, err := lk.CreateProject(ctx, p)
			require.NoError(t, err)
		}
		_, err := lk.Users().Create(ctx, p, "ada@example.com", "pw-"+p+"-secret", nil)
		require.NoError(t, err)
		createContact(t, st, p, "in "+p)
	}
	c := newClient(t, h)

	tokA, _ := c.login("/p/a", "ada@example.com", "pw-a-secret")
	tokD, _ := c.login("", "ada@example.com", "pw-default-secret")
	tokD2, _ := c.login("/p/default", "ada@example.com", "pw-default-secret")
	assert.Equal(t, []string{"in a"}, c.listNames("/p/a/v1/contacts", tokA))
	assert.Equal(t, []string{"in default"}, c.listNames("/v1/contacts", tokD))
	assert.Equal(t, []string{"in default"}, c.listNames("/p/default/v1/contacts", tokD))
	assert.Equal(t, []string{"in default"}, c.listNames("/v1/contacts", tokD2))

	// Tokens never cross projects.
	c.problem("GET", "/p/a/v1/contacts", tokD, http.StatusUnauthorized, "invalid_token")
	c.problem("GET", "/v1/contacts", tokA, http.StatusUnauthorized, "invalid_token")
	st2, _, _ := c.do("POST", "/p/a/v1/identity/login", "", `{"email":"ada@example.com","password":"pw-default-secret"}`)
	assert.Equal(t, http.StatusUnauthorized, st2)

	for _, p := range []string{"/p/nope/v1/contacts", "/p/a", "/p/a/", "/p/", "/p", "/p//v1/contacts",
		"/p/A/v1/contacts", "/p/a/p/a/v1/contacts", "/p/a/../default/v1/contacts"} {
		c.problem("GET", p, tokA, http.StatusNotFound, "not_found")
	}
	hd := c.problem("POST", "/p/a/v1/contacts", tokA, http.StatusMethodNotAllowed, "method_not_allowed")
	assert.Equal(t, "GET, HEAD", hd.Get("Allow"))

	st2, _, body := c.do("GET", "/p/a/.well-known/jwks.json", "", "")
	assert.Equal(t, http.StatusOK, st2, body)

	// Without a fallback only /p/... is served.
	strict := newClient(t, tenant.ByPath("/p/", "", lk.Handler()))
	strict.problem("GET", "/v1/contacts", tokD, http.StatusNotFound, "not_found")
	assert.Equal(t, []string{"in a"}, strict.listNames("/p/a/v1/contacts", tokA))
}

func TestHandler_projectCreatedElsewhereIsServedAtOnce(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	_, h := newPathLatchkey(t, st, nil)
	c := newClient(t, h)
	c.problem("GET", "/p/late/.well-known/jwks.json", "", http.StatusNotFound, "not_found")

	other := newLatchkey(t, st, nil) // another process on the same store
	_, err := other.CreateProject(ctx, "late")
	require.NoError(t, err)
	st2, _, body := c.do("GET", "/p/late/.well-known/jwks.json", "", "")
	assert.Equal(t, http.StatusOK, st2, body)
}

func TestOptions_consoleRedirect(t *testing.T) {
	_, h := newPathLatchkey(t, openStore(t), nil)
	c := newClient(t, h)
	st2, hd, _ := c.do("GET", "/p/default/console", "", "")
	assert.Equal(t, http.StatusMovedPermanently, st2)
	assert.Equal(t, "console/", hd.Get("Location"))
}

func TestCreateProject(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	lk := newLatchkey(t, st, nil)

	p, err := lk.CreateProject(ctx, "acme")
	require.NoError(t, err)
	assert.Equal(t, "acme", p.ID)
	_, err = st.ActiveSigningKey(ctx, "acme")
	require.NoError(t, err, "a new project has a signing key")
	_, err = lk.CreateProject(ctx, "acme")
	assert.ErrorIs(t, err, store.ErrConflict)
	_, err = lk.CreateProject(ctx, "Not/A/Slug")
	assert.ErrorIs(t, err, store.ErrInvalid)
	_, err = lk.Users().Create(ctx, "nope", "b@example.com", "password", nil)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, _, err = lk.APIKeys().Create(ctx, "nope", "k")
	assert.ErrorIs(t, err, store.ErrNotFound)
}

// TestCreateProjectWith: a project is created with the algorithm asked
// for, or the Keyring's default; an unknown algorithm creates nothing.
func TestCreateProjectWith(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	lk := newLatchkey(t, st, &latchkey.Options{Keyring: &keys.KeyringOptions{Algorithm: keys.ES256}})
	for id, alg := range map[string]string{"ed": keys.EdDSA, "ec": keys.ES256, "rs": keys.RS256, "dflt": ""} {
		_, err := lk.CreateProjectWith(ctx, id, &latchkey.ProjectOptions{Algorithm: alg})
		require.NoError(t, err, id)
		k, err := st.ActiveSigningKey(ctx, id)
		require.NoError(t, err, id)
		want := alg
		if want == "" {
			want = keys.ES256
		}
		assert.Equal(t, want, k.Algorithm, id)
	}
	def, err := st.ActiveSigningKey(ctx, store.DefaultProject)
	require.NoError(t, err)
	assert.Equal(t, keys.ES256, def.Algorithm, "the default project takes the default algorithm")
	_, err = lk.CreateProjectWith(ctx, "bad", &latchkey.ProjectOptions{Algorithm: "HS256"})
	assert.ErrorIs(t, err, keys.ErrUnknownAlgorithm)
	_, err = st.GetProject(ctx, "bad")
	assert.ErrorIs(t, err, store.ErrNotFound, "nothing is created")
}

func TestOptions_defaultConsole(t *testing.T) {
	st := openStore(t)
	_, ph := newPathLatchkey(t, st, nil)
	c := newClient(t, ph)
	code, h, body := c.do("GET", "/console/signin", "", "")
	assert.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, h.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	assert.Contains(t, body, "<form")
	code, _, _ = c.do("GET", "/p/default/console/signin", "", "")
	assert.Equal(t, http.StatusOK, code)
}

func TestOptions_noConsole(t *testing.T) {
	st := openStore(t)
	_, h := newPathLatchkey(t, st, &latchkey.Options{NoConsole: true})
	c := newClient(t, h)
	c.problem("GET", "/console/signin", "", http.StatusNotFound, "not_found")
}
