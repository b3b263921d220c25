package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// post sends a JSON body.
func (s *server) post(path, body string) result {
	s.t.Helper()
	return s.do("POST", path, "", body)
}

// form sends a form body with a bearer token.
func (s *server) form(path, token string, values url.Values) result {
	s.t.Helper()
	req, err := http.NewRequest("POST", s.base+path, strings.NewReader(values.Encode()))
	require.NoError(s.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := s.client.Do(req)
	require.NoError(s.t, err)
	defer res.Body.Close()
	var v map[string]any
	require.NoError(s.t, json.NewDecoder(res.Body).Decode(&v))
	b, _ := json.Marshal(v)
	return result{status: res.StatusCode, header: res.Header, body: b}
}

// Logout on one server process ends the session on another process serving
// the same SQLite file, at its next request.
func TestE2E_logoutEndsTheSessionOnAnotherProcess(t *testing.T) {
	t.Parallel()
	dir := newDataDir(t)
	ok(t, dir, "pw-ada-secret\n", "user create", "-project", "default", "-email", "ada@example.com")
	a := startServer(t, dir)
	b := startServer(t, dir)
	access, refresh := a.login("", "ada@example.com", "pw-ada-secret")
	require.Equal(t, http.StatusOK, b.do("GET", "/v1/contacts", access, "").status)

	r := a.post("/v1/identity/logout", fmt.Sprintf(`{"refresh_token":%q}`, refresh))
	require.Equal(t, http.StatusNoContent, r.status, string(r.body))
	b.problem("GET", "/v1/contacts", access, http.StatusUnauthorized, "invalid_token")
	r = b.post("/v1/identity/refresh", fmt.Sprintf(`{"refresh_token":%q}`, refresh))
	assert.Equal(t, http.StatusUnauthorized, r.status)
	assert.Equal(t, "invalid_refresh_token", r.json(t)["code"])
	// An unknown token: 204 too.
	assert.Equal(t, http.StatusNoContent, a.post("/v1/identity/logout", `{"refresh_token":"rt_nope"}`).status)
}

// user disable, user enable and user list on the command line, while a
// server runs: the disabled user's tokens are refused at the next request.
func TestE2E_userCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ok(t, dir, "", "project create", "acme")
	for _, e := range []string{"ada@example.com", "bob@example.com", "cy@example.org"} {
		ok(t, dir, "pw-"+e+"\n", "user create", "-project", "acme", "-email", e, "-tags", "staff, ops")
	}
	s := startServer(t, dir)
	access, refresh := s.login("/p/acme", "ada@example.com", "pw-ada@example.com")

	lines := ok(t, dir, "", "user disable", "-project", "acme", "-email", "ADA@example.com")
	require.Len(t, lines, 1)
	u := lines[0]
	assert.Equal(t, "ada@example.com", u["email"])
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`, u["disabled_at"])
	assert.Equal(t, []any{"staff", "ops"}, u["tags"])
	assert.NotContains(t, u, "password_hash")
	s.problem("GET", "/p/acme/v1/contacts", access, http.StatusUnauthorized, "invalid_token")
	r := s.post("/p/acme/v1/identity/refresh", fmt.Sprintf(`{"refresh_token":%q}`, refresh))
	assert.Equal(t, http.StatusUnauthorized, r.status)
	r = s.post("/p/acme/v1/identity/login", `{"email":"ada@example.com","password":"pw-ada@example.com"}`)
	assert.Equal(t, http.StatusUnauthorized, r.status)
	assert.Equal(t, "invalid_credentials", r.json(t)["code"])

	lines = ok(t, dir, "", "user enable", "-project", "acme", "-email", "ada@example.com")
	require.Len(t, lines, 1)
	assert.Nil(t, lines[0]["disabled_at"], "null when enabled")
	assert.Contains(t, lines[0], "disabled_at")
	s.login("/p/acme", "ada@example.com", "pw-ada@example.com")
	s.problem("GET", "/p/acme/v1/contacts", access, http.StatusUnauthorized, "invalid_token")

	lines = ok(t, dir, "", "user list", "-project", "acme")
	require.Len(t, lines, 3)
	for i, e := range []string{"ada@example.com", "bob@example.com", "cy@example.org"} {
		assert.Equal(t, e, lines[i]["email"], "oldest first")
		assert.Contains(t, lines[i], "disabled_at")
	}
	lines = ok(t, dir, "", "user list", "-project", "acme", "-email-prefix", "B")
	require.Len(t, lines, 1)
	assert.Equal(t, "bob@example.com", lines[0]["email"])

	for _, args := range [][]string{
		{"user disable", "-project", "acme", "-email", "nobody@example.com"},
		{"user enable", "-project", "nope", "-email", "ada@example.com"},
	} {
		res := cli(t, dir, "", args...)
		assert.Equal(t, 1, res.code, "%v", args)
		assert.NotEmpty(t, res.stderr)
	}
	res := cli(t, dir, "", "user disable", "-project", "acme")
	assert.Equal(t, 2, res.code, "a usage error")
}

// The issuer: serve mints iss from -public-url (or http://ADDR); the CLI
// mints with -public-url or LATCHKEY_PUBLIC_URL, and otherwise with the
// public URL serve recorded.
// The discovery document names the issuer; introspection and the feed work
// with an API key made on the command line.
func TestE2E_issuerDiscoveryIntrospectionFeed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ok(t, dir, "", "project create", "acme")
	ok(t, dir, "pw-ada-secret\n", "user create", "-project", "acme", "-email", "ada@example.com")
	s := startServer(t, dir, "-public-url", "https://id.example.com/")
	issOf := func(tok string) any {
		claims := jwt.MapClaims{}
		_, _, err := jwt.NewParser().ParseUnverified(tok, claims)
		require.NoError(t, err)
		return claims["iss"]
	}
	access, _ := s.login("/p/acme", "ada@example.com", "pw-ada-secret")
	assert.Equal(t, "https://id.example.com/p/acme", issOf(access))
	d := s.do("GET", "/p/acme/.well-known/openid-configuration", "", "")
	require.Equal(t, http.StatusOK, d.status)
	assert.Equal(t, "https://id.example.com/p/acme", d.json(t)["issuer"])
	assert.Equal(t, "https://id.example.com/p/acme/v1/identity/revocations", d.json(t)["revocation_feed_endpoint"])
	assert.Equal(t, "*", d.header.Get("Access-Control-Allow-Origin"))
	d = s.do("GET", "/.well-known/openid-configuration", "", "")
	assert.Equal(t, "https://id.example.com", d.json(t)["issuer"], "default is {public}")

	plain := ok(t, dir, "", "key create", "-project", "acme", "-name", "no flag")[0]
	assert.Equal(t, "https://id.example.com/p/acme", issOf(plain["token"].(string)), "the CLI mints with the public URL serve recorded")
	withFlag := ok(t, dir, "", "key create", "-project", "acme", "-name", "flag", "-public-url", "https://id.example.com")[0]
	assert.Equal(t, "https://id.example.com/p/acme", issOf(withFlag["token"].(string)))
	res := cliEnv(t, dir, "", []string{"LATCHKEY_PUBLIC_URL=https://auth.example.net"}, "key create", "-project", "acme", "-name", "env")
	require.Equal(t, 0, res.code, res.stderr)
	fromEnv := res.lines[0]
	assert.Equal(t, "https://auth.example.net/p/acme", issOf(fromEnv["token"].(string)))
	res = cli(t, dir, "", "key create", "-project", "acme", "-name", "bad", "-public-url", "ftp://x")
	assert.Equal(t, 2, res.code)

	// Introspection: an API key of the project asks about a token.
	caller := plain["token"].(string)
	r := s.form("/p/acme/v1/identity/introspect", caller, url.Values{"token": {access}})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	v := r.json(t)
	assert.Equal(t, true, v["active"])
	assert.Equal(t, "user", v["token_type"])
	assert.Equal(t, "https://id.example.com/p/acme", v["iss"])
	assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
	r = s.form("/p/acme/v1/identity/introspect", caller, url.Values{"token": {withFlag["token"].(string)}})
	assert.Equal(t, "api_key", r.json(t)["token_type"])
	r = s.form("/p/acme/v1/identity/introspect", access, url.Values{"token": {access}})
	assert.Equal(t, http.StatusForbidden, r.status)

	// A key revoked on the command line: inactive at once, and in the feed.
	ok(t, dir, "", "key revoke", "-project", "acme", withFlag["id"].(string))
	r = s.form("/p/acme/v1/identity/introspect", caller, url.Values{"token": {withFlag["token"].(string)}})
	assert.JSONEq(t, `{"active":false}`, string(r.body))
	feed := s.do("GET", "/p/acme/v1/identity/revocations?wait=5", caller, "")
	require.Equal(t, http.StatusOK, feed.status, string(feed.body))
	var p struct {
		Data []map[string]any `json:"data"`
	}
	require.NoError(t, json.Unmarshal(feed.body, &p))
	require.Len(t, p.Data, 1)
	assert.Equal(t, "api_key", p.Data[0]["kind"])
	assert.Equal(t, withFlag["id"], p.Data[0]["subject"])

	// The long poll answers when the CLI, another process, revokes.
	got := make(chan result, 1)
	cursor := strings.Join([]string{p.Data[0]["id"].(string), p.Data[0]["revoked_at"].(string)}, ":")
	go func() {
		got <- s.do("GET", "/p/acme/v1/identity/revocations?wait=30&cursor="+url.QueryEscape(cursor), caller, "")
	}()
	time.Sleep(200 * time.Millisecond)
	ok(t, dir, "", "key revoke", "-project", "acme", fromEnv["id"].(string))
	acked := time.Now()
	select {
	case r := <-got:
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		assert.Contains(t, string(r.body), fromEnv["id"].(string))
		assert.Less(t, time.Since(acked), time.Second)
	case <-time.After(15 * time.Second):
		t.Fatal("the long poll did not answer the CLI's revocation")
	}
}

// audit list prints the audit log, newest first, and pages with -limit and
// -cursor.
func TestE2E_auditList(t *testing.T) {
	t.Parallel()
	dir := newDataDir(t)
	ok(t, dir, "pw-of-ada\n", "user create", "-project", "default", "-email", "ada@example.com")
	k := ok(t, dir, "", "key create", "-project", "default", "-name", "k")[0]
	ok(t, dir, "", "key revoke", "-project", "default", k["id"].(string))
	all := ok(t, dir, "", "audit list", "-project", "default")
	var actions []string
	for _, e := range all {
		actions = append(actions, e["action"].(string))
	}
	require.GreaterOrEqual(t, len(actions), 3)
	assert.Equal(t, []string{"apikey.revoke", "apikey.create", "user.create"}, actions[:3], "newest first")
	for _, e := range all[:3] {
		assert.Equal(t, "cli", e["actor"])
	}
	assert.Equal(t, k["id"], all[0]["target"])

	page := ok(t, dir, "", "audit list", "-project", "default", "-limit", "2")
	require.Len(t, page, 3, "two entries and the pagination line")
	pg := page[2]["pagination"].(map[string]any)
	assert.Equal(t, true, pg["has_more"])
	next := ok(t, dir, "", "audit list", "-project", "default", "-limit", "2", "-cursor", pg["next_cursor"].(string))
	assert.Equal(t, all[2]["id"], next[0]["id"])
	res := cli(t, dir, "", "audit list", "-project", "default", "-limit", "0")
	assert.Equal(t, 2, res.code)
}
