package remote

// The test harness: a real Latchkey server (SQLite in a temporary file,
// latchkey.Latchkey, httptest) behind a gate that can cut it off the
// network, and helpers that mint and revoke tokens as a user and an
// operator would.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/internal/fixturehash"
	"github.com/latchkey-dev/latchkey/internal/testutil"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
	"github.com/latchkey-dev/latchkey/store/sqlite/sqlitetest"
)

var testMasterKey = []byte("0123456789abcdef0123456789abcdef")

const testPassword = "correct horse battery staple"

// gate stands in front of the Latchkey server. While blocked it drops every
// new request's connection, as a server that is down would; it records the
// query of every feed request and counts the reads of the key set.
type gate struct {
	next       http.Handler
	blocked    atomic.Bool
	jwksReads  atomic.Int32
	mu         sync.Mutex
	feedCalls  []string // raw query of each feed request, in order
	feedTimes  []time.Time
	corruptFor atomic.Bool
	// capWaits answers every long poll at once, with Retry-After: 1, as
	// the feed answers one over its cap of long polls per API key.
	capWaits atomic.Bool
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.blocked.Load() {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		http.Error(w, "down", http.StatusBadGateway)
		return
	}
	switch r.URL.Path {
	case latchkey.PathRevocations:
		g.mu.Lock()
		g.feedCalls = append(g.feedCalls, r.URL.RawQuery)
		g.feedTimes = append(g.feedTimes, time.Now())
		g.mu.Unlock()
		if q := r.URL.Query(); g.capWaits.Load() && q.Has("wait") {
			q.Del("wait")
			r.URL.RawQuery = q.Encode()
			w.Header().Set("Retry-After", "1")
		}
		if g.corruptFor.Load() {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"data":[{"id":"rev_x","kind":"api_key","subject":"nope","revoked_at":"2026-01-01T00:00:00.000000Z"}],"pagination":{"limit":100,"has_more":false,"next_cursor":""}}`)
			return
		}
	case latchkey.PathJWKS:
		g.jwksReads.Add(1)
	}
	g.next.ServeHTTP(w, r)
}

// feedTimesSince returns when the feed requests after the first n came.
func (g *gate) feedTimesSince(n int) []time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]time.Time(nil), g.feedTimes[n:]...)
}

// feedQueries returns the queries of the feed requests so far.
func (g *gate) feedQueries() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.feedCalls...)
}

// harness is a running Latchkey server.
type harness struct {
	t     testing.TB
	st    store.Store
	lk    *latchkey.Latchkey
	srv   *httptest.Server
	gate  *gate
	base  string
	clock *testutil.Clock // nil: real time
}

// newHarness starts Latchkey on a fresh SQLite file, serving project
// default at the server's root with the server's URL as issuer. A non-nil
// clock is Latchkey's time.
func newHarness(t testing.TB, clock *testutil.Clock) *harness {
	t.Helper()
	return newHarnessWith(t, clock, nil)
}

// newHarnessWith is newHarness with tune, if not nil, changing Latchkey's
// options before it starts.
func newHarnessWith(t testing.TB, clock *testutil.Clock, tune func(*latchkey.Options)) *harness {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlitetest.Path(t), &sqlite.Options{Logger: quietLogger()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	h := &harness{t: t, st: st, clock: clock}
	opts := &latchkey.Options{
		Logger:        quietLogger(),
		Issuer:        func(string) string { return h.base },
		PruneInterval: -1,
	}
	if clock != nil {
		opts.Now = clock.Now
	}
	if tune != nil {
		tune(opts)
	}
	h.lk, err = latchkey.New(st, testMasterKey, opts)
	require.NoError(t, err)
	h.gate = &gate{next: h.lk.Handler()}
	h.srv = httptest.NewUnstartedServer(h.gate)
	h.base = "http://" + h.srv.Listener.Addr().String()
	h.srv.Start()
	t.Cleanup(func() {
		_ = h.lk.Close() // long polls answer at once
		h.srv.Close()
	})
	return h
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// verifier starts a verifier on the harness's server with the API key and
// opts (Now defaults to the harness's clock), closed at the end of the
// test.
func (h *harness) verifier(apiKey string, opts *Options) *Verifier {
	h.t.Helper()
	v, err := h.newVerifier(apiKey, opts)
	require.NoError(h.t, err)
	h.t.Cleanup(func() { _ = v.Close() })
	return v
}

func (h *harness) newVerifier(apiKey string, opts *Options) (*Verifier, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil && h.clock != nil {
		o.Now = h.clock.Now
	}
	if o.Logger == nil {
		o.Logger = quietLogger()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return New(ctx, h.base, apiKey, &o)
}

// apiKey creates a permanent API key of project default and returns its id
// and token.
func (h *harness) apiKey(name string) (string, string) {
	h.t.Helper()
	return h.apiKeyOf(store.DefaultProject, name)
}

func (h *harness) apiKeyOf(project, name string) (string, string) {
	h.t.Helper()
	k, token, err := h.lk.APIKeys().Create(context.Background(), project, name)
	require.NoError(h.t, err)
	return k.ID, token
}

// user creates a user of project default whose password is testPassword,
// stored as lk.Users().Create stores one, and returns its id.
func (h *harness) user(email string, tags ...string) string {
	h.t.Helper()
	now := time.Now()
	if h.clock != nil {
		now = h.clock.Now()
	}
	u := store.User{
		ID: store.NewID(store.PrefixUser), ProjectID: store.DefaultProject, Email: email,
		PasswordHash: fixturehash.Of(testPassword), Tags: tags, CreatedAt: store.Truncate(now),
	}
	require.NoError(h.t, h.st.CreateUser(context.Background(), u))
	return u.ID
}

// login signs the user in over HTTP and returns the access and refresh
// tokens.
func (h *harness) login(email string) (string, string) {
	h.t.Helper()
	body := `{"email":"` + email + `","password":"` + testPassword + `"}`
	status, out := h.post(latchkey.PathLogin, body)
	require.Equal(h.t, http.StatusOK, status, out)
	var ts struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	require.NoError(h.t, json.Unmarshal([]byte(out), &ts))
	return ts.AccessToken, ts.RefreshToken
}

// logout ends the session of the refresh token over HTTP.
func (h *harness) logout(refresh string) {
	h.t.Helper()
	status, out := h.post(latchkey.PathLogout, `{"refresh_token":"`+refresh+`"}`)
	require.Equal(h.t, http.StatusNoContent, status, out)
}

// post sends a JSON POST to the Latchkey handler itself, not through the
// gate, so that users can sign in and out during an outage of the feed.
func (h *harness) post(path, body string) (int, string) {
	h.t.Helper()
	req := httptest.NewRequest(http.MethodPost, h.base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.lk.Handler().ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// serve sends GET / with the bearer token (none for "") to handler.
func serve(handler http.Handler, token string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "/whoami", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	return rec
}

// closedURL returns the URL of a loopback port that nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "http://" + addr
}

func pageReq(limit int) paginate.Request { return paginate.Request{Limit: limit} }

// cursorOf is the feed's cursor after rv.
func cursorOf(rv store.Revocation) string {
	return paginate.Cursor{ID: rv.ID, CreatedAt: rv.RevokedAt}.String()
}

// refusedWithin polls v.Verify(token) every millisecond until it refuses
// the token with an error matching reason, and returns how long that took;
// the test fails if it takes longer than limit.
func refusedWithin(t *testing.T, v *Verifier, token string, reason error, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		_, err := v.Verify(context.Background(), token)
		if err != nil {
			require.ErrorIs(t, err, keys.ErrInvalidToken)
			require.ErrorIs(t, err, reason)
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("the token was still accepted %s after the revocation", limit)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitFor polls cond every 10 ms until it holds, failing the test after
// limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// logBuffer is a concurrency-safe log destination that tests read.
type logBuffer struct{ testutil.Buffer }

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// count returns how many log lines contain s.
func (b *logBuffer) count(s string) int {
	n := 0
	for line := range strings.SplitSeq(b.String(), "\n") {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// isStale reports whether err is the fail-closed refusal.
func isStale(err error) bool {
	return errors.Is(err, ErrStale) && !errors.Is(err, keys.ErrInvalidToken)
}

// tamper returns token with the part-th part (0: header, 1: claims) replaced
// by the base64url of JSON object m.
func tamper(t *testing.T, token string, part int, m map[string]any) string {
	t.Helper()
	parts := strings.Split(token, ".")
	require.Len(t, parts, 3)
	b, err := json.Marshal(m)
	require.NoError(t, err)
	parts[part] = b64(b)
	return strings.Join(parts, ".")
}

// claimsOf decodes the claims of token without verifying it.
func claimsOf(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	require.Len(t, parts, 3)
	b, err := b64dec(parts[1])
	require.NoError(t, err)
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	require.NoError(t, d.Decode(&m))
	return m
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func b64dec(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }
