package main

// End-to-end tests: TestMain builds the example server once; each test runs
// it on a fresh data directory and a free port, and drives it over real HTTP
// and through its command line, as a user would.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/internal/openapitest"
	"github.com/latchkey-dev/latchkey/internal/testutil"
	"github.com/latchkey-dev/latchkey/store/mysql/mytest"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// serverBin is the example server built by TestMain.
var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "latchkey-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "server")
	if out, err := testutil.GoBuild(context.Background(), serverBin, "."); err != nil {
		fmt.Fprintf(os.Stderr, "building the example server: %v\n%s", err, out)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// childEnv is the environment of the server and CLI processes: the test's,
// without a master key override.
func childEnv(extra ...string) []string {
	env := slices.DeleteFunc(os.Environ(), func(s string) bool { return strings.HasPrefix(s, masterKeyEnv+"=") })
	return testutil.ProgramEnv(append(env, extra...))
}

// server is a running example server.
type server struct {
	t      *testing.T
	cmd    *exec.Cmd
	base   string
	stderr *testutil.Buffer
	stdout []map[string]any // the JSON lines printed up to "listening"
	done   chan error
	// client checks every exchange against the OpenAPI document.
	client *http.Client
}

// startServer runs the server on dir and a free port, and waits until it
// prints that it listens.
func startServer(t *testing.T, dir string, args ...string) *server {
	t.Helper()
	return startServerEnv(t, dir, nil, args...)
}

// startServerEnv is startServer with env added to the server's environment.
func startServerEnv(t *testing.T, dir string, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(serverBin, append([]string{"serve", "-addr", "127.0.0.1:0", "-data", dir}, args...)...)
	cmd.Env = childEnv(env...)
	contract := openapitest.New(t, &openapitest.Options{
		ProjectPrefix: "/p/",
		Unchecked:     []string{"/healthz"}, // the example server's own
		RequestIDs:    true,
	})
	s := &server{t: t, cmd: cmd, stderr: &testutil.Buffer{}, done: make(chan error, 1),
		client: &http.Client{Transport: contract.Transport(nil)}}
	cmd.Stderr = s.stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan map[string]any)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var v map[string]any
			if json.Unmarshal(sc.Bytes(), &v) == nil {
				lines <- v
			}
		}
		close(lines)
		s.done <- cmd.Wait()
	}()
	timeout := time.After(30 * time.Second)
	for s.base == "" {
		select {
		case v, ok := <-lines:
			if !ok {
				t.Fatalf("server exited before listening; stderr:\n%s", s.stderr)
			}
			s.stdout = append(s.stdout, v)
			if v["event"] == "listening" {
				s.base = v["base_url"].(string)
			}
		case <-timeout:
			_ = cmd.Process.Kill()
			t.Fatalf("server did not listen within 30 s; stderr:\n%s", s.stderr)
		}
	}
	go func() {
		for range lines {
		}
	}()
	t.Cleanup(func() { s.stop() })
	return s
}

// stop sends SIGTERM and waits for the exit; it returns the exit error.
func (s *server) stop() error {
	if s.cmd.ProcessState != nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		s.done <- err
		return err
	case <-time.After(40 * time.Second):
		_ = s.cmd.Process.Kill()
		return errors.New("server did not stop within 40 s")
	}
}

// result is what one HTTP request got.
type result struct {
	status int
	header http.Header
	body   []byte
}

func (r result) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(r.body, &v), "body: %s", r.body)
	return v
}

// do sends a request to the server.
func (s *server) do(method, path, token, body string) result {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	require.NoError(s.t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := s.client.Do(req)
	require.NoError(s.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(s.t, err)
	return result{status: res.StatusCode, header: res.Header, body: b}
}

// problem checks a problem+json answer and returns it.
func (s *server) problem(method, path, token string, status int, code string) result {
	s.t.Helper()
	r := s.do(method, path, token, "")
	require.Equal(s.t, status, r.status, "%s %s: %s", method, path, r.body)
	require.Equal(s.t, "application/problem+json", r.header.Get("Content-Type"))
	p := r.json(s.t)
	require.Equal(s.t, code, p["code"], "%s %s", method, path)
	require.EqualValues(s.t, status, p["status"])
	for _, k := range []string{"type", "title", "detail"} {
		require.NotEmpty(s.t, p[k], k)
	}
	require.NotEmpty(s.t, r.header.Get("X-Request-Id"))
	require.Equal(s.t, r.header.Get("X-Request-Id"), p["request_id"], "the body names the request's id")
	return r
}

// login returns the access and refresh tokens of a user.
func (s *server) login(prefix, email, password string) (string, string) {
	s.t.Helper()
	r := s.do("POST", prefix+"/v1/identity/login", "", fmt.Sprintf(`{"email":%q,"password":%q}`, email, password))
	require.Equal(s.t, http.StatusOK, r.status, string(r.body))
	v := r.json(s.t)
	require.EqualValues(s.t, 86400, v["expires_in"])
	return v["access_token"].(string), v["refresh_token"].(string)
}

// page is a decoded contacts page.
type page struct {
	Data []struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		CreatedAt string `json:"created_at"`
	} `json:"data"`
	Pagination struct {
		Limit      int    `json:"limit"`
		HasMore    bool   `json:"has_more"`
		NextCursor string `json:"next_cursor"`
	} `json:"pagination"`
}

func (s *server) list(prefix, token, query string) page {
	s.t.Helper()
	r := s.do("GET", prefix+"/v1/contacts"+query, token, "")
	require.Equal(s.t, http.StatusOK, r.status, string(r.body))
	var p page
	require.NoError(s.t, json.Unmarshal(r.body, &p))
	return p
}

// pageAll lists every contact with the given limit, calling between after
// each page that has a successor, and returns the ids in order.
func (s *server) pageAll(prefix, token string, limit int, between func()) []string {
	s.t.Helper()
	var ids []string
	q := fmt.Sprintf("?limit=%d", limit)
	for {
		p := s.list(prefix, token, q)
		require.Equal(s.t, limit, p.Pagination.Limit)
		require.LessOrEqual(s.t, len(p.Data), limit)
		for _, c := range p.Data {
			ids = append(ids, c.ID)
		}
		if !p.Pagination.HasMore {
			require.Equal(s.t, "", p.Pagination.NextCursor)
			return ids
		}
		require.Len(s.t, p.Data, limit)
		q = fmt.Sprintf("?limit=%d&cursor=%s", limit, url.QueryEscape(p.Pagination.NextCursor))
		if between != nil {
			between()
		}
	}
}

// cliResult is what one command line run printed.
type cliResult struct {
	code   int
	lines  []map[string]any
	stderr string
}

// cli runs the command line on dir with stdin, and returns its exit status
// and output.
func cli(t *testing.T, dir, stdin string, args ...string) cliResult {
	t.Helper()
	return cliEnv(t, dir, stdin, nil, args...)
}

func cliEnv(t *testing.T, dir, stdin string, env []string, args ...string) cliResult {
	t.Helper()
	if len(args) > 0 && strings.Contains(args[0], " ") {
		args = append(strings.Fields(args[0]), args[1:]...)
	}
	if dir != "" {
		args = insertFlags(args, "-data", dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, serverBin, args...)
	cmd.Env = childEnv(env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := cliResult{stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("running %v: %v", args, err)
	}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if line == "" {
			continue
		}
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &v), "stdout line %q is not JSON", line)
		res.lines = append(res.lines, v)
	}
	return res
}

// insertFlags puts flags right after the command words ("key revoke"), so
// they come before the positional arguments.
func insertFlags(args []string, flags ...string) []string {
	n := 0
	for n < len(args) && n < 2 && !strings.HasPrefix(args[n], "-") {
		n++
	}
	if n == 2 && lookup(args[0]+" "+args[1]) == nil {
		n = 1
	}
	out := append([]string{}, args[:n]...)
	out = append(out, flags...)
	return append(out, args[n:]...)
}

// ok runs the command line and requires success; it returns the lines.
func ok(t *testing.T, dir, stdin string, args ...string) []map[string]any {
	t.Helper()
	res := cli(t, dir, stdin, args...)
	require.Equal(t, 0, res.code, "%v: stderr: %s", args, res.stderr)
	return res.lines
}

func TestE2E_paging237(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ok(t, dir, "", "project create", "pages")
	ok(t, dir, "", "contact seed", "-project", "pages", "-n", "237")
	key := ok(t, dir, "", "key create", "-project", "pages", "-name", "pager")[0]
	token := key["token"].(string)
	s := startServer(t, dir)

	var first []string
	for _, limit := range []int{1, 25, 100} {
		ids := s.pageAll("/p/pages", token, limit, nil)
		require.Len(t, ids, 237, "limit %d", limit)
		seen := map[string]bool{}
		for _, id := range ids {
			require.False(t, seen[id], "id %s twice", id)
			seen[id] = true
		}
		if first == nil {
			first = ids
		}
		require.Equal(t, first, ids, "same order at every page size")
	}
	// The order is ascending (created_at, id).
	var all page
	q := "?limit=100"
	for {
		p := s.list("/p/pages", token, q)
		all.Data = append(all.Data, p.Data...)
		if !p.Pagination.HasMore {
			break
		}
		q = "?limit=100&cursor=" + url.QueryEscape(p.Pagination.NextCursor)
	}
	for i := 1; i < len(all.Data); i++ {
		a, b := all.Data[i-1], all.Data[i]
		require.True(t, a.CreatedAt < b.CreatedAt || a.CreatedAt == b.CreatedAt && a.ID < b.ID, "%v before %v", a, b)
	}
	// The project default has none of them.
	tokD := ok(t, dir, "", "key create", "-project", "default", "-name", "d")[0]["token"].(string)
	assert.Empty(t, s.list("", tokD, "").Data)
}

func TestE2E_pagingWhileAnotherProcessInserts(t *testing.T) {
	t.Parallel()
	dir := newDataDir(t)
	ok(t, dir, "", "contact seed", "-project", "default", "-n", "60")
	token := ok(t, dir, "", "key create", "-project", "default", "-name", "k")[0]["token"].(string)
	s := startServer(t, dir)
	before := s.pageAll("", token, 100, nil)
	require.Len(t, before, 60)

	var added []string
	got := s.pageAll("", token, 10, func() {
		c := ok(t, dir, "", "contact create", "-project", "default", "-name", fmt.Sprintf("late %d", len(added)))[0]
		added = append(added, c["id"].(string))
	})
	require.Equal(t, append(before, added...), got, "every contact once: the old ones in order, then the new ones")
}

func TestE2E_limitsAndCursors(t *testing.T) {
	t.Parallel()
	dir := newDataDir(t)
	ok(t, dir, "", "contact seed", "-project", "default", "-n", "150")
	token := ok(t, dir, "", "key create", "-project", "default", "-name", "k")[0]["token"].(string)
	s := startServer(t, dir)

	p := s.list("", token, "")
	assert.Equal(t, 25, p.Pagination.Limit)
	assert.Len(t, p.Data, 25)
	p = s.list("", token, "?limit=1000")
	assert.Equal(t, 100, p.Pagination.Limit, "clamped")
	assert.Len(t, p.Data, 100)
	assert.True(t, p.Pagination.HasMore)

	for _, q := range []string{"limit=0", "limit=-1", "limit=abc", "limit=1.5", "limit=", "limit=1e2", "limit=%2B1", "limit=5&limit=5", "limit=5&limit=6"} {
		s.problem("GET", "/v1/contacts?"+q, token, http.StatusBadRequest, "invalid_parameter")
	}
	good := url.QueryEscape(p.Pagination.NextCursor)
	for _, q := range []string{
		"cursor=garbage", "cursor=", "cursor=" + strings.ReplaceAll(good, "%3A", ""),
		"cursor=ct_x:not-a-time", "cursor=ct_x:2026-13-01T00:00:00.000000Z", "cursor=ct_x:2026-01-01T00:00:00Z",
		"cursor=ct_x:2026-01-01T00:00:00.000000%2B00:00", "cursor=:2026-01-01T00:00:00.000000Z",
		"cursor=" + good + "&cursor=" + good,
	} {
		s.problem("GET", "/v1/contacts?"+q, token, http.StatusBadRequest, "invalid_cursor")
	}
	// A cursor naming no contact is still a position.
	p = s.list("", token, "?cursor="+url.QueryEscape("ct_zzz:2000-01-01T00:00:00.000000Z"))
	assert.Len(t, p.Data, 25)
}

func TestE2E_projectIsolation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, p := range []string{"a", "b"} {
		ok(t, dir, "", "project create", p)
		ok(t, dir, "pw-"+p+"-secret\n", "user create", "-project", p, "-email", "ada@example.com")
		ok(t, dir, "", "contact create", "-project", p, "-name", "contact of "+p)
	}
	keyA := ok(t, dir, "", "key create", "-project", "a", "-name", "k")[0]["token"].(string)
	s := startServer(t, dir)

	loginA, _ := s.login("/p/a", "ada@example.com", "pw-a-secret")
	loginB, _ := s.login("/p/b", "ada@example.com", "pw-b-secret")
	assert.Equal(t, "contact of a", s.list("/p/a", loginA, "").Data[0].Name)
	assert.Equal(t, "contact of a", s.list("/p/a", keyA, "").Data[0].Name)
	assert.Equal(t, "contact of b", s.list("/p/b", loginB, "").Data[0].Name)
	for _, tok := range []string{loginA, keyA} {
		r := s.problem("GET", "/p/b/v1/contacts", tok, http.StatusUnauthorized, "invalid_token")
		assert.Contains(t, r.header.Get("WWW-Authenticate"), `error="invalid_token"`)
		s.problem("GET", "/v1/contacts", tok, http.StatusUnauthorized, "invalid_token")
	}
	// A's password does not open B, and A's refresh token does not refresh in B.
	r := s.do("POST", "/p/b/v1/identity/login", "", `{"email":"ada@example.com","password":"pw-a-secret"}`)
	assert.Equal(t, http.StatusUnauthorized, r.status)
	_, refreshA := s.login("/p/a", "ada@example.com", "pw-a-secret")
	r = s.do("POST", "/p/b/v1/identity/refresh", "", `{"refresh_token":"`+refreshA+`"}`)
	assert.Equal(t, http.StatusUnauthorized, r.status)
	r = s.do("POST", "/p/a/v1/identity/refresh", "", `{"refresh_token":"`+refreshA+`"}`)
	assert.Equal(t, http.StatusOK, r.status, string(r.body))

	s.problem("GET", "/p/nope/v1/contacts", keyA, http.StatusNotFound, "not_found")
	s.problem("GET", "/p/a/v1/nope", keyA, http.StatusNotFound, "not_found")
	r = s.problem("DELETE", "/p/a/v1/contacts", keyA, http.StatusMethodNotAllowed, "method_not_allowed")
	assert.Equal(t, "GET, HEAD", r.header.Get("Allow"))
}

func TestE2E_revocationByTheCLIWhileServing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir)
	key := ok(t, dir, "", "key create", "-project", "default", "-name", "backend")[0]
	require.ElementsMatch(t, []string{"id", "name", "token"}, memberNames(key))
	token := key["token"].(string)
	require.Equal(t, http.StatusOK, s.do("GET", "/v1/contacts", token, "").status)

	listed := ok(t, dir, "", "key list", "-project", "default")
	require.Len(t, listed, 1)
	assert.ElementsMatch(t, []string{"id", "name", "created_at", "last_used_at", "revoked_at", "scopes", "expires_at", "revokes_at"}, memberNames(listed[0]))
	assert.Nil(t, listed[0]["revoked_at"])

	revoked := ok(t, dir, "", "key revoke", "-project", "default", key["id"].(string))
	require.NotNil(t, revoked[0]["revoked_at"])
	s.problem("GET", "/v1/contacts", token, http.StatusUnauthorized, "invalid_token")

	listed = ok(t, dir, "", "key list", "-project", "default")
	assert.NotNil(t, listed[0]["revoked_at"])
	assert.NotContains(t, fmt.Sprint(listed), token)
	res := cli(t, dir, "", "key revoke", "-project", "default", "key_nope")
	assert.Equal(t, 1, res.code)
}

func TestE2E_projectCreatedByTheCLIIsServedAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir)
	s.problem("GET", "/p/fresh/.well-known/jwks.json", "", http.StatusNotFound, "not_found")
	ok(t, dir, "", "project create", "fresh")
	r := s.do("GET", "/p/fresh/.well-known/jwks.json", "", "")
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	ok(t, dir, "secret-of-new\n", "user create", "-project", "fresh", "-email", "new@example.com", "-tags", "admin, ops")
	tok, _ := s.login("/p/fresh", "new@example.com", "secret-of-new")
	assert.Empty(t, s.list("/p/fresh", tok, "").Data)
}

func TestE2E_healthz(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir())
	r := s.do("GET", "/healthz", "", "")
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "ok", r.json(t)["status"])
	r = s.problem("POST", "/healthz", "", http.StatusMethodNotAllowed, "method_not_allowed")
	assert.Equal(t, "GET, HEAD", r.header.Get("Allow"))
}

func TestE2E_requestLogNeverHoldsSecrets(t *testing.T) {
	t.Parallel()
	dir := newDataDir(t)
	ok(t, dir, "hunter2-password\n", "user create", "-project", "default", "-email", "ada@example.com")
	s := startServer(t, dir)
	access, refresh := s.login("", "ada@example.com", "hunter2-password")
	s.do("GET", "/v1/contacts?limit=5&access_token=query-secret", access, "")
	s.do("POST", "/v1/identity/refresh", "", `{"refresh_token":"`+refresh+`"}`)
	require.NoError(t, s.stop())

	logs := s.stderr.String()
	for _, secret := range []string{"hunter2-password", access, refresh, "query-secret"} {
		assert.NotContains(t, logs, secret)
	}
	var requests int
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &v), "log line %q is not JSON", line)
		if v["msg"] == "request" {
			requests++
			for _, k := range []string{"method", "path", "status", "duration", "request_id"} {
				assert.Contains(t, v, k)
			}
		}
	}
	assert.Equal(t, 3, requests)
}

// TestE2E_requestID checks that every answer carries an X-Request-Id (the
// client's own when it is safe, else a new one), that problem bodies name
// it, and that the request's log line holds it.
func TestE2E_requestID(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir())
	send := func(path, id string) result {
		t.Helper()
		req, err := http.NewRequest("GET", s.base+path, nil)
		require.NoError(t, err)
		if id != "" {
			req.Header.Set("X-Request-Id", id)
		}
		res, err := s.client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return result{status: res.StatusCode, header: res.Header, body: b}
	}

	r := send("/v1/contacts", "support-ticket-7.a_b")
	require.Equal(t, http.StatusUnauthorized, r.status)
	assert.Equal(t, "support-ticket-7.a_b", r.header.Get("X-Request-Id"), "a safe id is kept")
	assert.Equal(t, "support-ticket-7.a_b", r.json(t)["request_id"])

	unsafe := `x","injected":"` + strings.Repeat("y", 70)
	r = send("/p/nope/v1/contacts", unsafe)
	require.Equal(t, http.StatusNotFound, r.status)
	fresh := r.header.Get("X-Request-Id")
	assert.Regexp(t, `^[A-Za-z0-9._-]{1,64}$`, fresh, "an unsafe id is replaced")
	assert.Equal(t, fresh, r.json(t)["request_id"])

	r = send("/healthz", "")
	require.Equal(t, http.StatusOK, r.status)
	healthID := r.header.Get("X-Request-Id")
	assert.NotEmpty(t, healthID, "the server's own routes have ids too")
	assert.NotEqual(t, fresh, healthID)

	require.NoError(t, s.stop())
	logged := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(s.stderr.String()), "\n") {
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &v), "log line %q is not JSON", line)
		if v["msg"] == "request" {
			id, _ := v["request_id"].(string)
			logged[id] = true
		}
	}
	assert.Equal(t, map[string]bool{"support-ticket-7.a_b": true, fresh: true, healthID: true}, logged)
	assert.NotContains(t, s.stderr.String(), "injected")
}

func TestE2E_gracefulShutdown(t *testing.T) {
	t.Parallel()
	dir := newDataDir(t)
	ok(t, dir, "pw-of-ada\n", "user create", "-project", "default", "-email", "ada@example.com")
	s := startServer(t, dir)

	// A request in flight: headers and half the body sent.
	body := `{"email":"ada@example.com","password":"pw-of-ada"}`
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /v1/identity/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body[:10])
	require.NoError(t, err)
	time.Sleep(200 * time.Millisecond) // let the server read the headers
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	time.Sleep(200 * time.Millisecond)
	_, err = io.WriteString(conn, body[10:])
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	assert.Equal(t, http.StatusOK, res.StatusCode, string(b))
	assert.Contains(t, string(b), "access_token")

	select {
	case err := <-s.done:
		s.done <- err
		require.NoError(t, err, "exit status; stderr:\n%s", s.stderr)
	case <-time.After(20 * time.Second):
		t.Fatal("server did not exit after SIGTERM")
	}
	assert.Contains(t, s.stderr.String(), `"msg":"stopped"`)
	// New connections are refused after shutdown.
	_, err = net.DialTimeout("tcp", strings.TrimPrefix(s.base, "http://"), time.Second)
	assert.Error(t, err)
}

func TestE2E_masterKey(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	ok(t, dir, "", "project create", "mk")
	fi, err := os.Stat(filepath.Join(dir, "master.key"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	fi, err = os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

	// LATCHKEY_MASTER_KEY overrides the file; a data directory used only
	// with it gets no master.key.
	dir2 := t.TempDir()
	random := make([]byte, 32)
	_, _ = rand.Read(random)
	res := cliEnv(t, dir2, "", []string{masterKeyEnv + "=" + base64.StdEncoding.EncodeToString(random)}, "project create", "mk2")
	require.Equal(t, 0, res.code, res.stderr)
	res = cliEnv(t, dir2, "", []string{masterKeyEnv + "=" + base64.StdEncoding.EncodeToString(random)}, "key create", "-project", "default", "-name", "k")
	require.Equal(t, 0, res.code, res.stderr)
	_, err = os.Stat(filepath.Join(dir2, "master.key"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	res = cliEnv(t, dir2, "", []string{masterKeyEnv + "=dG9vIHNob3J0"}, "key list", "-project", "default")
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stderr, masterKeyEnv)
	// A lost master.key is not silently replaced beside a database sealed
	// with it, and another key is refused with a clear message.
	require.NoError(t, os.Rename(filepath.Join(dir, "master.key"), filepath.Join(dir, "kept.key")))
	res = cli(t, dir, "", "key list", "-project", "default")
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stderr, "master.key does not exist")
	_, err = os.Stat(filepath.Join(dir, "master.key"))
	assert.ErrorIs(t, err, os.ErrNotExist, "no new key was made")
	res = cliEnv(t, dir, "", []string{masterKeyEnv + "=" + base64.StdEncoding.EncodeToString(random)}, "key list", "-project", "default")
	assert.Equal(t, 1, res.code)
	assert.Equal(t, "latchkey: the master key in "+masterKeyEnv+" does not open the stored signing keys (another key made them); "+
		masterKeyEnv+" is used instead of "+filepath.Join(dir, "master.key")+" while it is set: set it to the key that made them, or unset it\n", res.stderr)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "master.key"), []byte(base64.StdEncoding.EncodeToString(random)), 0o600))
	res = cli(t, dir, "", "key list", "-project", "default")
	assert.Equal(t, 1, res.code)
	assert.Equal(t, "latchkey: the master key in "+filepath.Join(dir, "master.key")+" does not open the stored signing keys (another key made them); "+
		"put back the key that made them, or set "+masterKeyEnv+" to it\n", res.stderr)
	require.NoError(t, os.Rename(filepath.Join(dir, "kept.key"), filepath.Join(dir, "master.key")))
	ok(t, dir, "", "key list", "-project", "default")

	// A key of zero bytes is a key never set: refused, with a clear message.
	res = cliEnv(t, t.TempDir(), "", []string{masterKeyEnv + "=" + strings.Repeat("A", 43) + "="}, "project create", "zero")
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stderr, "all zero")
}

func TestE2E_commandLineErrors(t *testing.T) {
	t.Parallel()
	dir := newDataDir(t)
	cases := []struct {
		name  string
		stdin string
		args  []string
		code  int
	}{
		{"unknown command", "", []string{"frobnicate"}, 2},
		{"unknown verb", "", []string{"key", "rotate", "-data", dir}, 2},
		{"flag after argument", "", []string{"key", "revoke", "-data", dir, "key_x", "-project", "default"}, 2},
		{"missing flag", "", []string{"key", "create", "-data", dir, "-name", "x"}, 2},
		{"bad project name", "", []string{"project", "create", "-data", dir, "Bad_Name"}, 2},
		{"no password", "", []string{"user", "create", "-data", dir, "-project", "default", "-email", "a@b.c"}, 1},
		{"unknown project", "", []string{"contact", "create", "-data", dir, "-project", "nope", "-name", "x"}, 1},
		{"seed nothing", "", []string{"contact", "seed", "-data", dir, "-project", "default", "-n", "0"}, 2},
		{"bad flag", "", []string{"serve", "-data", dir, "-nope"}, 2},
		{"unknown database", "", []string{"key", "list", "-data", dir, "-db", "redis://x", "-project", "default"}, 2},
		{"empty db", "", []string{"key", "list", "-data", dir, "-db", "", "-project", "default"}, 2},
		{"not a number", "", []string{"contact", "seed", "-data", dir, "-project", "default", "-n", "abc"}, 2},
		{"not an email", "pw-long-enough\n", []string{"user", "create", "-data", dir, "-project", "default", "-email", "notanemail"}, 2},
		{"malformed tags", "pw-long-enough\n", []string{"user", "create", "-data", dir, "-project", "default", "-email", "t@example.com", "-tags", "admin,,Ops Team"}, 2},
		{"long contact name", "", []string{"contact", "create", "-data", dir, "-project", "default", "-name", strings.Repeat("n", 1000)}, 2},
		{"bidi key name", "", []string{"key", "create", "-data", dir, "-project", "default", "-name", "invoice\u202egnp.exe"}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := cli(t, "", tc.stdin, tc.args...)
			assert.Equal(t, tc.code, res.code, res.stderr)
			assert.Empty(t, res.lines, "nothing on stdout")
			assert.True(t, strings.HasPrefix(res.stderr, "latchkey: "), res.stderr)
			assert.NotContains(t, res.stderr, "latchkey: latchkey:", "no stutter")
			assert.NotContains(t, res.stderr, "login-address-limit", "the benchmark's flag is not advertised")
			assert.NotContains(t, res.stderr, "Usage of", "the command's own usage, not the flag package's")
			if tc.code == 2 && !strings.HasPrefix(tc.name, "unknown") && tc.name != "unknown database" {
				assert.Equal(t, 3, strings.Count(res.stderr, "\n"), "one message and the command's usage:\n%s", res.stderr)
			}
		})
	}
	// A key command naming an unknown project says so, not that the key is
	// missing.
	for _, cmd := range []string{"key revoke", "key roll"} {
		res := cli(t, dir, "", cmd, "-project", "nope", "key_x")
		assert.Equal(t, 1, res.code, cmd)
		assert.Equal(t, "latchkey: no project \"nope\"\n", res.stderr, cmd)
	}
	ok(t, dir, "", "project create", "dup")
	res := cli(t, dir, "", "project create", "dup")
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stderr, "already exists")
	ok(t, dir, "pw-of-a-user\n", "user create", "-project", "dup", "-email", "a@example.com")
	res = cli(t, dir, "pw-of-a-user\n", "user create", "-project", "dup", "-email", "A@example.com")
	assert.Equal(t, 1, res.code)
}

func TestE2E_demo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, "-demo")
	var demo map[string]any
	for _, v := range s.stdout {
		if v["event"] == "demo" {
			demo = v
		}
	}
	require.NotNil(t, demo, "stdout: %v", s.stdout)
	require.Equal(t, true, demo["seeded"])
	password := demo["password"].(string)
	require.GreaterOrEqual(t, len(password), 20)
	tok, _ := s.login("", "admin@example.com", password)
	ids := s.pageAll("", tok, 100, nil)
	assert.Len(t, ids, 1000)
	require.NoError(t, s.stop())
	assert.Contains(t, s.stderr.String(), "curl")
	assert.Contains(t, s.stderr.String(), "The web console (API keys, Signing keys, Users, Audit log): "+s.base+"/console/")

	// A second -demo run seeds nothing and shows no password.
	s = startServer(t, dir, "-demo")
	for _, v := range s.stdout {
		if v["event"] == "demo" {
			assert.Equal(t, false, v["seeded"])
			assert.NotContains(t, v, "password")
		}
	}
	assert.NotContains(t, s.stderr.String(), password)
	assert.Contains(t, s.stderr.String(), "\n  echo 'NEW PASSWORD' | go run ./examples/server user set-password -data "+shellQuote(dir)+" -project default -email admin@example.com\n",
		"how to set a new password when the printed one is lost")
	tok, _ = s.login("", "admin@example.com", password)
	assert.Len(t, s.pageAll("", tok, 100, nil), 1000)
	require.NoError(t, s.stop())
	assert.Contains(t, s.stderr.String(), "The web console (API keys, Signing keys, Users, Audit log): "+s.base+"/console/")
}

func TestE2E_demoWalkthroughAsPasted(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { walkthrough(t) })
	t.Run("postgres", func(t *testing.T) { walkthrough(t, "-db", pgtest.NewDatabase(t)) })
	t.Run("mysql", func(t *testing.T) { walkthrough(t, "-db", mytest.NewDatabase(t)) })
}

// walkthrough runs the demo's printed lines, as pasted, against a server
// started with -demo and args.
func walkthrough(t *testing.T, args ...string) {
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("curl is missing: CI must run the demo walkthrough (apt-get install curl)")
		}
		t.Skip("curl not installed")
	}
	dir := t.TempDir()
	s := startServer(t, dir, append([]string{"-demo"}, args...)...)
	// The lines printed to try, as a user pastes them, with the built
	// binary in place of "go run ./examples/server".
	// stderr reaches the test through a pipe: wait for the banner.
	var text string
	i := -1
	for deadline := time.Now().Add(10 * time.Second); i < 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		text = s.stderr.String()
		i = strings.Index(text, "# 401 invalid_token from now on")
		if i >= 0 {
			i = strings.Index(text, "    B=http")
		}
	}
	require.GreaterOrEqual(t, i, 0, text)
	var script []string
	for _, line := range strings.Split(text[i:], "\n") {
		if !strings.HasPrefix(line, "    ") {
			break
		}
		line = strings.ReplaceAll(strings.TrimPrefix(line, "    "), "go run ./examples/server", serverBin)
		script = append(script, line)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sh := exec.CommandContext(ctx, "sh", "-c", strings.Join(script, "\n"))
	sh.Env = childEnv()
	sh.Dir = filepath.Dir(dir)
	// The printed CLI lines use the default data directory unless -data
	// was given; the server here runs with -data, so they carry it.
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "%s", out)
	o := string(out)
	assert.Contains(t, o, `"access_token"`)
	assert.Contains(t, o, `"next_cursor"`)
	assert.Contains(t, o, `"refresh_token"`)
	assert.Contains(t, o, `"token"`)
	assert.Equal(t, 2, strings.Count(o, `"pagination":{"limit":3,"has_more":true`), "two pages with the login token:\n%s", o)
	assert.Equal(t, 1, strings.Count(o, `"pagination":{"limit":2,"has_more":true`), "one page with the API key:\n%s", o)
	assert.Contains(t, o, "\n204\n", "the logout")
	assert.Equal(t, 2, strings.Count(o, `"code":"invalid_token"`), "the revoked key, then the login token of the ended session:\n%s", o)
	assert.Contains(t, o, `"code":"invalid_token"`, "the revoked key is refused")
}

func memberNames(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestE2E_postgresTwoInstances runs two servers on one PostgreSQL database
// (LATCHKEY_TEST_POSTGRES): what the command line changes, and what one
// server does, the other sees at once.
func TestE2E_postgresTwoInstances(t *testing.T) {
	t.Parallel()
	twoInstances(t, pgtest.NewDatabase(t))
}

// TestE2E_mysqlTwoInstances is TestE2E_postgresTwoInstances on one MySQL or
// MariaDB database (LATCHKEY_TEST_MYSQL).
func TestE2E_mysqlTwoInstances(t *testing.T) {
	t.Parallel()
	twoInstances(t, mytest.NewDatabase(t))
}

// twoInstances runs two servers on the database db: what the command line
// changes, and what one server does, the other sees at once.
func twoInstances(t *testing.T, db string) {
	dir := t.TempDir() // only the master key lives here
	ok(t, dir, "", "project create", "-db", db, "shared")
	ok(t, dir, "pw-of-ada\n", "user create", "-db", db, "-project", "shared", "-email", "ada@example.com")
	ok(t, dir, "", "contact seed", "-db", db, "-project", "shared", "-n", "120")
	key := ok(t, dir, "", "key create", "-db", db, "-project", "shared", "-name", "k")[0]
	s1 := startServer(t, dir, "-db", db)
	s2 := startServer(t, dir, "-db", db)

	token := key["token"].(string)
	ids1 := s1.pageAll("/p/shared", token, 50, nil)
	ids2 := s2.pageAll("/p/shared", token, 50, nil)
	require.Len(t, ids1, 120)
	require.Equal(t, ids1, ids2)

	// Logged in on one instance, refreshed on the other.
	access, refresh := s1.login("/p/shared", "ada@example.com", "pw-of-ada")
	require.Len(t, s2.list("/p/shared", access, "?limit=3").Data, 3)
	r := s2.do("POST", "/p/shared/v1/identity/refresh", "", `{"refresh_token":"`+refresh+`"}`)
	require.Equal(t, http.StatusOK, r.status, string(r.body))

	ok(t, dir, "", "key revoke", "-db", db, "-project", "shared", key["id"].(string))
	s1.problem("GET", "/p/shared/v1/contacts", token, http.StatusUnauthorized, "invalid_token")
	s2.problem("GET", "/p/shared/v1/contacts", token, http.StatusUnauthorized, "invalid_token")
}

// TestE2E_console checks that the example server serves the web console for
// the default project at /console/ and for project P at /p/P/console/ (the
// browser tests in keys/console drive it through the same routing).
func TestE2E_console(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ok(t, dir, "", "project create", "acme")
	s := startServer(t, dir)
	for _, base := range []string{"", "/p/acme"} {
		r := s.do("GET", base+"/console/signin", "", "")
		require.Equal(t, http.StatusOK, r.status, "GET %s/console/signin: %s", base, r.body)
		assert.Contains(t, string(r.body), `type="password"`)
		assert.Contains(t, r.header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
		assert.Equal(t, "DENY", r.header.Get("X-Frame-Options"))
	}
	r := s.do("GET", "/p/nope/console/signin", "", "")
	assert.Equal(t, http.StatusNotFound, r.status, "an unknown project has no console")
}

func TestE2E_accessLogRate(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), "-access-log-rate", "1")
	const n = 30
	start := time.Now()
	for range n {
		require.Equal(t, http.StatusOK, s.do("GET", "/healthz", "", "").status)
	}
	elapsed := time.Since(start)
	require.NoError(t, s.stop())

	var lines, counted int
	for _, line := range strings.Split(strings.TrimSpace(s.stderr.String()), "\n") {
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &v), "log line %q is not JSON", line)
		unlogged, _ := v["unlogged"].(float64)
		switch v["msg"] {
		case "request":
			lines++
			counted += 1 + int(unlogged)
		case "requests not logged":
			counted += int(unlogged)
		}
	}
	// At most one line in each second of the clock the requests spanned.
	assert.LessOrEqual(t, lines, int(elapsed/time.Second)+2)
	assert.Equal(t, n, counted, "the lines and their unlogged counts add up to every request")
}

// TestE2E_clientLeavingIsNotLoggedAsAnError: a client that leaves a long
// poll of the revocation feed (a remote verifier stopping, say) is no
// fault of the server: its access log line says 499, as nginx's does, not
// a 5xx, and no error is logged.
func TestE2E_clientLeavingIsNotLoggedAsAnError(t *testing.T) {
	t.Parallel()
	dir := newDataDir(t)
	token := ok(t, dir, "", "key create", "-project", "default", "-name", "follower")[0]["token"].(string)
	s := startServer(t, dir)
	require.Equal(t, http.StatusOK, s.do("GET", "/v1/identity/revocations", token, "").status)

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", s.base+"/v1/identity/revocations?wait=60", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	time.AfterFunc(time.Second, cancel)
	_, err = http.DefaultClient.Do(req)
	require.ErrorIs(t, err, context.Canceled)

	// The feed's lines: the first request's, then the long poll's.
	var lines []map[string]any
	require.Eventually(t, func() bool {
		lines = nil
		for _, l := range strings.Split(strings.TrimSpace(s.stderr.String()), "\n") {
			var v map[string]any
			if json.Unmarshal([]byte(l), &v) == nil && v["msg"] == "request" && v["path"] == "/v1/identity/revocations" {
				lines = append(lines, v)
			}
		}
		return len(lines) == 2
	}, time.Minute, 10*time.Millisecond, "the long poll's access log line; stderr:\n%s", s.stderr)
	line := lines[1]
	assert.EqualValues(t, 499, line["status"], "%v", line)
	assert.Equal(t, "INFO", line["level"])
	require.NoError(t, s.stop())
	assert.NotContains(t, s.stderr.String(), `"level":"ERROR"`)
}
