package latchkey_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/mysql"
	"github.com/latchkey-dev/latchkey/store/mysql/mytest"
	"github.com/latchkey-dev/latchkey/store/sqlite"
	"github.com/latchkey-dev/latchkey/store/sqlite/sqlitetest"
)

// node is one server process: its own store handle on a shared SQLite file,
// its own Latchkey (caches and all), served over real HTTP with the example
// server's routing.
type node struct {
	t   *testing.T
	lk  *latchkey.Latchkey
	srv *httptest.Server
}

// nodePair starts two nodes on one database; opts, if not nil, gives each
// node's options.
type nodePair func(t *testing.T, opts func() *latchkey.Options) (a, b *node)

// onEachBackend runs test with two nodes on one SQLite file, as two
// processes would run, and with two nodes on one MySQL or MariaDB database
// (mytest: skipped without a server, failed in CI), as two instances would.
func onEachBackend(t *testing.T, test func(t *testing.T, twoNodes nodePair)) {
	t.Run("sqlite", func(t *testing.T) { test(t, twoSQLiteNodes) })
	t.Run("mysql", func(t *testing.T) { test(t, twoMySQLNodes) })
}

// twoSQLiteNodes starts two nodes on one SQLite file, as two processes
// would run.
func twoSQLiteNodes(t *testing.T, opts func() *latchkey.Options) (a, b *node) {
	t.Helper()
	path := sqlitetest.Path(t)
	return twoNodesOn(t, opts, func() store.Store {
		st, err := sqlite.Open(context.Background(), path, &sqlite.Options{Logger: testLogger(t)})
		require.NoError(t, err)
		return st
	})
}

// twoMySQLNodes starts two nodes on one MySQL or MariaDB database, each
// with its own pool, as two server instances would run.
func twoMySQLNodes(t *testing.T, opts func() *latchkey.Options) (a, b *node) {
	t.Helper()
	dbURL := mytest.NewDatabase(t)
	return twoNodesOn(t, opts, func() store.Store {
		st, err := mysql.Open(context.Background(), dbURL, &mysql.Options{Logger: testLogger(t), MaxConns: 8})
		require.NoError(t, err)
		return st
	})
}

// twoNodesOn starts two nodes, each on a store open returns.
func twoNodesOn(t *testing.T, opts func() *latchkey.Options, open func() store.Store) (a, b *node) {
	t.Helper()
	start := func() *node {
		st := open()
		t.Cleanup(func() { _ = st.Close() })
		var o *latchkey.Options
		if opts != nil {
			o = opts()
		}
		lk, h := newPathLatchkey(t, st, o)
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		contract(t).WrapClient(srv.Client())
		return &node{t: t, lk: lk, srv: srv}
	}
	return start(), start()
}

// call sends a request to the node and returns the status, headers and body.
func (n *node) call(method, path, contentType, body string, header ...string) (int, http.Header, string) {
	n.t.Helper()
	req, err := http.NewRequest(method, n.srv.URL+path, strings.NewReader(body))
	require.NoError(n.t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := n.srv.Client().Do(req)
	require.NoError(n.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(n.t, err)
	return res.StatusCode, res.Header, string(raw)
}

func (n *node) post(path, body string) (int, string) {
	n.t.Helper()
	st, _, b := n.call(http.MethodPost, path, "application/json", body)
	return st, b
}

func (n *node) get(path, token string) (int, string) {
	n.t.Helper()
	st, _, b := n.call(http.MethodGet, path, "", "", "Authorization", "Bearer "+token)
	return st, b
}

// login logs email in and returns the token set.
func (n *node) login(email, password string) (access, refresh string) {
	n.t.Helper()
	st, body := n.post("/v1/identity/login", `{"email":"`+email+`","password":"`+password+`"}`)
	require.Equal(n.t, http.StatusOK, st, body)
	var ts struct{ AccessToken, RefreshToken string }
	require.NoError(n.t, json.Unmarshal([]byte(body), &struct {
		A *string `json:"access_token"`
		R *string `json:"refresh_token"`
	}{&ts.AccessToken, &ts.RefreshToken}))
	return ts.AccessToken, ts.RefreshToken
}

func problemCode(t *testing.T, body string) string {
	t.Helper()
	var p struct{ Code string }
	require.NoError(t, json.Unmarshal([]byte(body), &p), body)
	return p.Code
}

// Logout on one instance ends the session on every other at its next
// request: the refresh token (401 invalid_refresh_token) and the login
// tokens (401 invalid_token), including one that instance had cached.
func TestLogout_EndsTheSessionOnEveryInstance(t *testing.T) {
	onEachBackend(t, testLogoutEndsTheSessionOnEveryInstance)
}

func testLogoutEndsTheSessionOnEveryInstance(t *testing.T, twoNodes nodePair) {
	a, b := twoNodes(t, nil)
	ctx := context.Background()
	_, err := a.lk.Users().Create(ctx, "default", "ada@example.com", "pw-ada-secret", nil)
	require.NoError(t, err)
	access, refresh := a.login("ada@example.com", "pw-ada-secret")
	st, body := b.post("/v1/identity/refresh", `{"refresh_token":"`+refresh+`"}`)
	require.Equal(t, http.StatusOK, st, body)
	var next struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &next))
	for _, tok := range []string{access, next.AccessToken} {
		st, body := b.get("/v1/contacts", tok)
		require.Equal(t, http.StatusOK, st, body) // b has them cached now
	}

	st, body = a.post("/v1/identity/logout", `{"refresh_token":"`+next.RefreshToken+`"}`)
	require.Equal(t, http.StatusNoContent, st, body)
	for _, tok := range []string{access, next.AccessToken} {
		st, body := b.get("/v1/contacts", tok)
		assert.Equal(t, http.StatusUnauthorized, st)
		assert.Equal(t, "invalid_token", problemCode(t, body))
	}
	st, body = b.post("/v1/identity/refresh", `{"refresh_token":"`+next.RefreshToken+`"}`)
	assert.Equal(t, http.StatusUnauthorized, st)
	assert.Equal(t, "invalid_refresh_token", problemCode(t, body))
}

// A refresh racing a logout on another instance never leaves a usable
// successor: once both have answered, whatever the refresh returned is
// refused.
func TestLogout_RacingRefresh(t *testing.T) { onEachBackend(t, testLogoutRacingRefresh) }

func testLogoutRacingRefresh(t *testing.T, twoNodes nodePair) {
	a, b := twoNodes(t, nil)
	ctx := context.Background()
	_, err := a.lk.Users().Create(ctx, "default", "ada@example.com", "pw-ada-secret", nil)
	require.NoError(t, err)
	for range 20 {
		_, refresh := a.login("ada@example.com", "pw-ada-secret")
		var wg sync.WaitGroup
		var refreshStatus int
		var refreshBody string
		wg.Add(2)
		go func() {
			defer wg.Done()
			refreshStatus, refreshBody = b.post("/v1/identity/refresh", `{"refresh_token":"`+refresh+`"}`)
		}()
		go func() {
			defer wg.Done()
			st, _ := a.post("/v1/identity/logout", `{"refresh_token":"`+refresh+`"}`)
			assert.Equal(t, http.StatusNoContent, st)
		}()
		wg.Wait()
		if refreshStatus != http.StatusOK {
			continue
		}
		var next struct {
			AccessToken  string `json:"access_token"`
			RefreshToken string `json:"refresh_token"`
		}
		require.NoError(t, json.Unmarshal([]byte(refreshBody), &next))
		st, _ := a.post("/v1/identity/refresh", `{"refresh_token":"`+next.RefreshToken+`"}`)
		assert.Equal(t, http.StatusUnauthorized, st, "a successor outlived the logout")
		st, _ = b.get("/v1/contacts", next.AccessToken)
		assert.Equal(t, http.StatusUnauthorized, st, "an access token outlived the logout")
	}
}

// Disabling a user on one instance refuses their tokens on the other from
// the next request; enabling restores login, not the sessions.
func TestDisableUser_EndsSessionsEverywhere(t *testing.T) {
	onEachBackend(t, testDisableUserEndsSessionsEverywhere)
}

func testDisableUserEndsSessionsEverywhere(t *testing.T, twoNodes nodePair) {
	a, b := twoNodes(t, nil)
	ctx := context.Background()
	u, err := a.lk.Users().Create(ctx, "default", "ada@example.com", "pw-ada-secret", nil)
	require.NoError(t, err)
	access, refresh := a.login("ada@example.com", "pw-ada-secret")
	st, _ := b.get("/v1/contacts", access)
	require.Equal(t, http.StatusOK, st)

	_, err = a.lk.Users().Disable(ctx, "default", u.ID)
	require.NoError(t, err)
	st, body := b.get("/v1/contacts", access)
	assert.Equal(t, http.StatusUnauthorized, st, body)
	st, body = b.post("/v1/identity/login", `{"email":"ada@example.com","password":"pw-ada-secret"}`)
	assert.Equal(t, http.StatusUnauthorized, st)
	assert.Equal(t, "invalid_credentials", problemCode(t, body))

	_, err = b.lk.Users().Enable(ctx, "default", u.ID)
	require.NoError(t, err)
	a.login("ada@example.com", "pw-ada-secret")
	st, _ = b.post("/v1/identity/refresh", `{"refresh_token":"`+refresh+`"}`)
	assert.Equal(t, http.StatusUnauthorized, st, "the ended session stays ended")
}

// Tokens carry iss from Options.Issuer; the discovery document names the
// issuer and the endpoints under it, with CORS for any origin; Latchkey
// itself accepts a token whatever its iss.
func TestDiscoveryAndIssuer(t *testing.T) { onEachBackend(t, testDiscoveryAndIssuer) }

func testDiscoveryAndIssuer(t *testing.T, twoNodes nodePair) {
	issuer := func(p string) string {
		if p == store.DefaultProject {
			return "https://id.example.com"
		}
		return "https://id.example.com/p/" + p
	}
	a, b := twoNodes(t, func() *latchkey.Options { return &latchkey.Options{Issuer: issuer} })
	_, other := twoNodes(t, nil) // reachable under no configured name
	ctx := context.Background()
	_, err := a.lk.CreateProject(ctx, "acme")
	require.NoError(t, err)
	_, err = a.lk.Users().Create(ctx, "acme", "ada@example.com", "pw-ada-secret", nil)
	require.NoError(t, err)

	st, h, body := a.call(http.MethodGet, "/p/acme/.well-known/openid-configuration", "", "", "Origin", "https://app.example.org")
	require.Equal(t, http.StatusOK, st, body)
	assert.Equal(t, "*", h.Get("Access-Control-Allow-Origin"))
	assert.JSONEq(t, `{"issuer":"https://id.example.com/p/acme",
		"jwks_uri":"https://id.example.com/p/acme/.well-known/jwks.json",
		"introspection_endpoint":"https://id.example.com/p/acme/v1/identity/introspect",
		"introspection_endpoint_auth_methods_supported":["client_secret_basic","bearer"],
		"revocation_feed_endpoint":"https://id.example.com/p/acme/v1/identity/revocations",
		"id_token_signing_alg_values_supported":["EdDSA"]}`, body)
	st, _, body = a.call(http.MethodGet, "/.well-known/openid-configuration", "", "")
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, `"issuer":"https://id.example.com"`)
	st, _, body = other.call(http.MethodGet, "/p/x/.well-known/openid-configuration", "", "")
	assert.Equal(t, http.StatusNotFound, st, body)
	st, _, body = other.call(http.MethodGet, "/.well-known/openid-configuration", "", "")
	require.Equal(t, http.StatusOK, st)
	assert.Contains(t, body, `"issuer":"`+other.srv.URL+`"`, "no issuer configured: the request's base_url")

	for _, p := range []string{"/p/acme/.well-known/openid-configuration", "/p/acme/.well-known/jwks.json"} {
		st, h, _ := a.call(http.MethodOptions, p, "", "", "Origin", "https://app.example.org",
			"Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "if-none-match")
		assert.Equal(t, http.StatusNoContent, st, p)
		assert.Equal(t, "*", h.Get("Access-Control-Allow-Origin"), p)
		assert.Contains(t, h.Get("Access-Control-Allow-Methods"), "GET", p)
		assert.Equal(t, "if-none-match", h.Get("Access-Control-Allow-Headers"), p)
		st, h, _ = a.call(http.MethodGet, p, "", "")
		assert.Equal(t, http.StatusOK, st)
		assert.Equal(t, "*", h.Get("Access-Control-Allow-Origin"), p)
	}

	body = func() string {
		st, body := a.post("/p/acme/v1/identity/login", `{"email":"ada@example.com","password":"pw-ada-secret"}`)
		require.Equal(t, http.StatusOK, st, body)
		return body
	}()
	var ts struct {
		AccessToken string `json:"access_token"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &ts))
	claims := jwt.MapClaims{}
	_, _, err = jwt.NewParser().ParseUnverified(ts.AccessToken, claims)
	require.NoError(t, err)
	assert.Equal(t, "https://id.example.com/p/acme", claims["iss"])
	st, body = b.get("/p/acme/v1/contacts", ts.AccessToken)
	assert.Equal(t, http.StatusOK, st, body)
}

// feedPage is a page of the revocation feed.
type feedPage struct {
	Data []struct {
		ID        string `json:"id"`
		Kind      string `json:"kind"`
		Subject   string `json:"subject"`
		RevokedAt string `json:"revoked_at"`
	} `json:"data"`
	Pagination struct {
		Limit      int    `json:"limit"`
		HasMore    bool   `json:"has_more"`
		NextCursor string `json:"next_cursor"`
	} `json:"pagination"`
}

// The revocation feed lists, oldest first and paged like every list, one
// item per revocation: an API key revoked, a signing key retired, a session
// ended by logout or replay, a user disabled. It needs an API key of the
// project; a login token is 403.
func TestRevocationFeed(t *testing.T) { onEachBackend(t, testRevocationFeed) }

func testRevocationFeed(t *testing.T, twoNodes nodePair) {
	a, b := twoNodes(t, func() *latchkey.Options {
		return &latchkey.Options{Identity: &identity.Options{NoReuseWindow: true}}
	})
	ctx := context.Background()
	lk := a.lk
	u, err := lk.Users().Create(ctx, "default", "ada@example.com", "pw-ada-secret", nil)
	require.NoError(t, err)
	_, err = lk.Users().Create(ctx, "default", "bob@example.com", "pw-bob-secret", nil)
	require.NoError(t, err)

	access, refresh := a.login("ada@example.com", "pw-ada-secret")
	st, body := a.get("/v1/identity/revocations", access)
	assert.Equal(t, http.StatusForbidden, st, body)
	assert.Equal(t, "forbidden", problemCode(t, body))
	st, body = a.get("/v1/identity/revocations", "")
	assert.Equal(t, http.StatusUnauthorized, st, body)

	// One of each, made on either node.
	key, _, err := lk.APIKeys().Create(ctx, "default", "doomed")
	require.NoError(t, err)
	require.NoError(t, b.lk.APIKeys().Revoke(ctx, "default", key.ID))
	old, err := lk.Store().ActiveSigningKey(ctx, "default")
	require.NoError(t, err)
	_, err = lk.Keyring().Rotate(ctx, "default")
	require.NoError(t, err)
	require.NoError(t, b.lk.Keyring().Retire(ctx, "default", old.ID))
	st, _ = a.post("/v1/identity/logout", `{"refresh_token":"`+refresh+`"}`)
	require.Equal(t, http.StatusNoContent, st)
	_, bobRefresh := b.login("bob@example.com", "pw-bob-secret")
	for range 2 { // the second exchange of one token is a replay
		st, _ = b.post("/v1/identity/refresh", `{"refresh_token":"`+bobRefresh+`"}`)
	}
	require.Equal(t, http.StatusUnauthorized, st)
	_, err = lk.Users().Disable(ctx, "default", u.ID)
	require.NoError(t, err)
	_, reader, err := lk.APIKeys().Create(ctx, "default", "verifier")
	require.NoError(t, err)

	var all []string
	cursor := ""
	for {
		q := "/v1/identity/revocations?limit=2"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		st, body := b.get(q, reader)
		require.Equal(t, http.StatusOK, st, body)
		var p feedPage
		require.NoError(t, json.Unmarshal([]byte(body), &p))
		assert.Equal(t, 2, p.Pagination.Limit)
		for _, it := range p.Data {
			assert.Regexp(t, `^rev_[0-9a-v]{26}$`, it.ID)
			assert.Regexp(t, regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`), it.RevokedAt)
			all = append(all, it.Kind+" "+it.Subject)
		}
		if !p.Pagination.HasMore {
			assert.Equal(t, "", p.Pagination.NextCursor)
			break
		}
		require.Len(t, p.Data, 2, "a page with more is full")
		cursor = p.Pagination.NextCursor
	}
	require.Len(t, all, 5, "%v", all)
	assert.Equal(t, []string{"api_key " + key.ID, "signing_key " + old.ID}, all[:2])
	assert.Regexp(t, `^session rf_[0-9a-v]{26}$`, all[2], "the logout")
	assert.Regexp(t, `^session rf_[0-9a-v]{26}$`, all[3], "the replay")
	assert.NotEqual(t, all[2], all[3])
	assert.Equal(t, "user "+u.ID, all[4], "the disabled user; their sessions need no items")

	for _, bad := range []string{"wait=0", "wait=61", "wait=abc", "wait=1&wait=2", "wait=", "wait=-1", "wait=%zz"} {
		st, body := b.get("/v1/identity/revocations?"+bad, reader)
		assert.Equal(t, http.StatusBadRequest, st, bad)
		assert.Equal(t, "invalid_parameter", problemCode(t, body), bad)
	}
	st, body = b.get("/v1/identity/revocations?limit=0", reader)
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Equal(t, "invalid_parameter", problemCode(t, body))
	st, body = b.get("/v1/identity/revocations?cursor=nope", reader)
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Equal(t, "invalid_cursor", problemCode(t, body))
}

// A long poll answers as soon as a revocation lands, made by another
// instance, and answers an empty page when its wait runs out.
func TestRevocationFeed_LongPoll(t *testing.T) { onEachBackend(t, testRevocationFeedLongPoll) }

func testRevocationFeedLongPoll(t *testing.T, twoNodes nodePair) {
	a, b := twoNodes(t, nil)
	ctx := context.Background()
	_, reader, err := a.lk.APIKeys().Create(ctx, "default", "verifier")
	require.NoError(t, err)
	doomed, _, err := a.lk.APIKeys().Create(ctx, "default", "doomed")
	require.NoError(t, err)

	start := time.Now()
	st, body := b.get("/v1/identity/revocations?wait=1", reader)
	require.Equal(t, http.StatusOK, st, body)
	assert.GreaterOrEqual(t, time.Since(start), time.Second, "waited its second")
	var p feedPage
	require.NoError(t, json.Unmarshal([]byte(body), &p))
	assert.Empty(t, p.Data)
	assert.NotNil(t, p.Data)

	done := make(chan feedPage, 1)
	started := time.Now()
	go func() {
		_, body := b.get("/v1/identity/revocations?wait=20", reader)
		var p feedPage
		_ = json.Unmarshal([]byte(body), &p)
		done <- p
	}()
	time.Sleep(300 * time.Millisecond)
	revoked := time.Now()
	require.NoError(t, a.lk.APIKeys().Revoke(ctx, "default", doomed.ID))
	select {
	case p := <-done:
		require.Len(t, p.Data, 1)
		assert.Equal(t, doomed.ID, p.Data[0].Subject)
		assert.Less(t, time.Since(revoked), time.Second, "seen within a second of the revocation")
		assert.Greater(t, time.Since(started), 250*time.Millisecond, "it waited")
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll did not answer when the revocation landed")
	}
}
