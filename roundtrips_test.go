package latchkey_test

import (
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/store/postgres"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// roundTripCounter is a TCP proxy in front of the PostgreSQL test server
// that reads the protocol its clients send and counts their round trips:
// every Sync message (which ends an extended-protocol exchange: a prepare,
// or an execution) and every simple Query. It counts what the wire carries,
// so a statement prepared on the side is counted too, but for the pool's
// liveness ping ("-- ping"), which pgxpool sends before handing out a
// connection idle for over a second: whether one is sent depends on how
// long the machine took since the last statement, not on the request.
type roundTripCounter struct {
	ln     net.Listener
	target string
	n      atomic.Int64
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
}

// newRoundTripCounter starts a counter in front of the server of dbURL and
// returns it and dbURL pointing at it (without TLS, so that the protocol
// can be read); t.Cleanup stops it.
func newRoundTripCounter(t *testing.T, dbURL string) (*roundTripCounter, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	c := &roundTripCounter{ln: ln, target: u.Host}
	c.wg.Add(1)
	go c.serve()
	t.Cleanup(c.stop)
	u.Host = ln.Addr().String()
	q := u.Query()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	return c, u.String()
}

func (c *roundTripCounter) serve() {
	defer c.wg.Done()
	for {
		client, err := c.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", c.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		c.mu.Lock()
		c.conns = append(c.conns, client, server)
		c.mu.Unlock()
		go func() { _, _ = io.Copy(client, server); _ = client.Close() }()
		go func() { c.forward(client, server); _ = server.Close() }()
	}
}

// forward copies the client's messages to the server, counting the round
// trips among them. The first message is the startup packet (no type byte);
// every later one is a type byte and a length that counts itself.
func (c *roundTripCounter) forward(client, server net.Conn) {
	var hdr [5]byte
	if _, err := io.ReadFull(client, hdr[:4]); err != nil {
		return
	}
	n := int(binary.BigEndian.Uint32(hdr[:4]))
	if n < 4 || n > 1<<20 {
		return
	}
	startup := make([]byte, n)
	copy(startup, hdr[:4])
	if _, err := io.ReadFull(client, startup[4:]); err != nil {
		return
	}
	if _, err := server.Write(startup); err != nil {
		return
	}
	for {
		if _, err := io.ReadFull(client, hdr[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(hdr[1:]))
		if n < 4 || n > 1<<20 {
			return
		}
		msg := make([]byte, 5+n-4)
		copy(msg, hdr[:])
		if _, err := io.ReadFull(client, msg[5:]); err != nil {
			return
		}
		if hdr[0] == 'S' || hdr[0] == 'Q' && string(msg[5:]) != "-- ping\x00" {
			c.n.Add(1)
		}
		if _, err := server.Write(msg); err != nil {
			return
		}
	}
}

func (c *roundTripCounter) stop() {
	_ = c.ln.Close()
	c.mu.Lock()
	for _, conn := range c.conns {
		_ = conn.Close()
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// behindCounter starts a Latchkey API server on a new PostgreSQL database
// reached through a roundTripCounter, with a pool of one connection (each
// statement is prepared once, on it, during a test's warm-up requests).
func behindCounter(t *testing.T) (*roundTripCounter, *postgres.Store, instance) {
	t.Helper()
	counter, dbURL := newRoundTripCounter(t, pgtest.NewDatabase(t))
	st, err := postgres.Open(t.Context(), dbURL, &postgres.Options{Logger: testLogger(t), MaxConns: 1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	lk, h := newPathLatchkey(t, st, &latchkey.Options{})
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	contract(t).WrapClient(hs.Client())
	return counter, st, instance{lk: lk, url: hs.URL, client: hs.Client()}
}

// TestContacts_OneRoundTripOnPostgres counts the database round trips of
// GET /v1/contacts on PostgreSQL: once the token is known to the verifier
// (its second request on), a request with an API key or with a login token
// costs exactly one, the statement that reads the token's records with the
// page, for the first page and for a page after a cursor alike.
func TestContacts_OneRoundTripOnPostgres(t *testing.T) {
	counter, st, srv := behindCounter(t)
	lk := srv.lk
	ctx := t.Context()
	for i := range 30 {
		createContact(t, st, "default", "Contact "+string(rune('A'+i)))
	}
	_, apiKey, err := lk.APIKeys().Create(ctx, "default", "counted")
	require.NoError(t, err)
	_, err = lk.Users().Create(ctx, "default", "ada@example.com", "pw-ada-secret", nil)
	require.NoError(t, err)
	st1, body := srv.call(t, "POST", "/v1/identity/login", "", `{"email":"ada@example.com","password":"pw-ada-secret"}`)
	require.Equal(t, http.StatusOK, st1, body)
	var ts tokenSet
	require.NoError(t, json.Unmarshal([]byte(body), &ts))

	_, page1 := srv.call(t, "GET", "/v1/contacts?limit=5", apiKey, "")
	var p struct {
		Pagination struct {
			NextCursor string `json:"next_cursor"`
		} `json:"pagination"`
	}
	require.NoError(t, json.Unmarshal([]byte(page1), &p))
	require.NotEmpty(t, p.Pagination.NextCursor, page1)
	after := "/v1/contacts?limit=5&cursor=" + url.QueryEscape(p.Pagination.NextCursor)

	for _, c := range []struct{ name, token, path string }{
		{"API key, page 1", apiKey, "/v1/contacts?limit=5"},
		{"API key, after a cursor", apiKey, after},
		{"login token, page 1", ts.AccessToken, "/v1/contacts?limit=5"},
		{"login token, after a cursor", ts.AccessToken, after},
	} {
		for i := range 4 {
			before := counter.n.Load()
			status, body := srv.call(t, "GET", c.path, c.token, "")
			require.Equal(t, http.StatusOK, status, "%s: %s", c.name, body)
			got := counter.n.Load() - before
			t.Logf("%s, request %d: %d round trips", c.name, i+1, got)
			if i >= 2 { // warm: the token verified and every statement prepared
				require.Equalf(t, int64(1), got, "%s, request %d: database round trips", c.name, i+1)
			}
		}
	}
}

// TestContacts_RefusedFromNextRequestAcrossHandles: two instances, each
// with its own pool and caches, on one database. Once instance A knows a
// token (its requests cost one round trip), a revocation of its API key,
// the retirement of its signing key, or the end of its session made
// through instance B is refused by A's very next request, with the 401 of
// the bearer check and nothing of the page.
func TestContacts_RefusedFromNextRequestAcrossHandles(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	a := startInstance(t, dbURL, time.Now)
	b := startInstance(t, dbURL, time.Now)
	ctx := t.Context()
	_, err := a.lk.CreateProject(ctx, "shared")
	require.NoError(t, err)
	createContact(t, a.lk.Store(), "shared", "Secret Contact")
	ada, err := a.lk.Users().Create(ctx, "shared", "ada@example.com", "pw-ada-secret", nil)
	require.NoError(t, err)

	warm := func(t *testing.T, token string) {
		t.Helper()
		for range 3 {
			st, body := a.call(t, "GET", "/v1/contacts", token, "")
			require.Equal(t, http.StatusOK, st, body)
			require.Contains(t, body, "Secret Contact")
		}
	}
	refused := func(t *testing.T, token, what string) {
		t.Helper()
		st, body := a.call(t, "GET", "/v1/contacts", token, "")
		require.Equalf(t, http.StatusUnauthorized, st, "the request right after %s: %s", what, body)
		require.Equal(t, "invalid_token", codeOf(body))
		require.NotContains(t, body, "Secret Contact")
		st, _ = a.call(t, "HEAD", "/v1/contacts", token, "")
		require.Equalf(t, http.StatusUnauthorized, st, "HEAD after %s", what)
	}
	login := func(t *testing.T) tokenSet {
		t.Helper()
		st, body := a.call(t, "POST", "/v1/identity/login", "", `{"email":"ada@example.com","password":"pw-ada-secret"}`)
		require.Equal(t, http.StatusOK, st, body)
		var ts tokenSet
		require.NoError(t, json.Unmarshal([]byte(body), &ts))
		return ts
	}

	t.Run("APIKeyRevoked", func(t *testing.T) {
		key, token, err := a.lk.APIKeys().Create(ctx, "shared", "backend")
		require.NoError(t, err)
		warm(t, token)
		require.NoError(t, b.lk.APIKeys().Revoke(ctx, "shared", key.ID))
		refused(t, token, "the revocation")
	})
	t.Run("SessionEnded", func(t *testing.T) {
		ts := login(t)
		warm(t, ts.AccessToken)
		st, body := b.call(t, "POST", "/v1/identity/logout", "", `{"refresh_token":"`+ts.RefreshToken+`"}`)
		require.Equal(t, http.StatusNoContent, st, body)
		refused(t, ts.AccessToken, "the logout")
	})
	t.Run("UserDisabled", func(t *testing.T) {
		ts := login(t)
		warm(t, ts.AccessToken)
		_, err := b.lk.Users().Disable(ctx, "shared", ada.ID)
		require.NoError(t, err)
		refused(t, ts.AccessToken, "disabling the user")
		_, err = b.lk.Users().Enable(ctx, "shared", ada.ID)
		require.NoError(t, err)
	})
	t.Run("SigningKeyRetired", func(t *testing.T) {
		_, token, err := a.lk.APIKeys().Create(ctx, "shared", "old-signer")
		require.NoError(t, err)
		ts := login(t)
		warm(t, token)
		warm(t, ts.AccessToken)
		old, err := b.lk.Store().ActiveSigningKey(ctx, "shared")
		require.NoError(t, err)
		_, err = b.lk.Keyring().Rotate(ctx, "shared")
		require.NoError(t, err)
		warm(t, token) // rotation alone changes nothing
		require.NoError(t, b.lk.Keyring().Retire(ctx, "shared", old.ID))
		refused(t, token, "retiring its signing key")
		refused(t, ts.AccessToken, "retiring its signing key")
	})
}

// TestContacts_StoreDownOnPostgres: when the database becomes unreachable
// after a token is known (its request would be the one combined read), the
// list is answered 503 unavailable with Retry-After, and nothing of a page.
func TestContacts_StoreDownOnPostgres(t *testing.T) {
	proxy, st, srv := behindCounter(t)
	createContact(t, st, "default", "Secret Contact")
	_, apiKey, err := srv.lk.APIKeys().Create(t.Context(), "default", "down")
	require.NoError(t, err)
	for range 2 {
		status, body := srv.call(t, "GET", "/v1/contacts", apiKey, "")
		require.Equal(t, http.StatusOK, status, body)
	}

	proxy.stop()
	res, body := srv.do(t, "GET", "/v1/contacts", apiKey, "")
	require.NotNil(t, res, body)
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, body)
	require.Equal(t, "unavailable", codeOf(body))
	require.NotEmpty(t, res.Header.Get("Retry-After"))
	require.NotContains(t, body, "Secret Contact")
}

// TestLogin_RoundTripsOnPostgres counts the database round trips of
// POST /v1/identity/login on PostgreSQL, once every statement is prepared:
// a successful login, a wrong password and an unknown email each cost at
// most four: the throttling check of both keys, the user, then the session
// and the signing key, or the two failure counts. A success after failures
// costs one more, the clearing of the account's count.
func TestLogin_RoundTripsOnPostgres(t *testing.T) {
	counter, _, srv := behindCounter(t)
	_, err := srv.lk.Users().Create(t.Context(), "default", "ada@example.com", "pw-ada-secret", nil)
	require.NoError(t, err)
	for _, c := range []struct {
		name, body string
		status     int
	}{
		{"success", `{"email":"ada@example.com","password":"pw-ada-secret"}`, http.StatusOK},
		{"wrong password", `{"email":"ada@example.com","password":"pw-wrong-secret"}`, http.StatusUnauthorized},
		{"unknown email", `{"email":"bob@example.com","password":"pw-ada-secret"}`, http.StatusUnauthorized},
		{"success after failures", `{"email":"ada@example.com","password":"pw-ada-secret"}`, http.StatusOK},
	} {
		for i := range 3 {
			if c.name == "success after failures" {
				status, body := srv.call(t, "POST", "/v1/identity/login", "", `{"email":"ada@example.com","password":"pw-wrong-secret"}`)
				require.Equal(t, http.StatusUnauthorized, status, body)
			}
			before := counter.n.Load()
			status, body := srv.call(t, "POST", "/v1/identity/login", "", c.body)
			require.Equal(t, c.status, status, "%s: %s", c.name, body)
			got := counter.n.Load() - before
			t.Logf("%s, login %d: %d round trips", c.name, i+1, got)
			want := int64(4)
			if c.name == "success after failures" {
				want = 5
			}
			if i >= 1 { // warm: every statement prepared
				require.LessOrEqualf(t, got, want, "%s, login %d: database round trips", c.name, i+1)
			}
		}
	}
}
