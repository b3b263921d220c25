package latchkey_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/internal/testutil"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
	"github.com/latchkey-dev/latchkey/store/sqlite"
	"github.com/latchkey-dev/latchkey/store/sqlite/sqlitetest"
)

// TestSlowBody_IsNeverAnsweredOK: a login, refresh or logout whose body is
// cut off by the server's ReadTimeout (the client sent half of it and
// stalled) is answered 400 invalid_request, never the empty 200 that
// net/http sends for a handler that wrote nothing.
func TestSlowBody_IsNeverAnsweredOK(t *testing.T) {
	_, h := newPathLatchkey(t, openStore(t), nil)
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ReadTimeout = 200 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)

	for _, path := range []string{"/v1/identity/login", "/v1/identity/refresh", "/v1/identity/logout"} {
		t.Run(path, func(t *testing.T) {
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			require.NoError(t, err)
			defer conn.Close()
			half := `{"email":"someone@example.com",`
			_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				path, srv.Listener.Addr(), 2*len(half), half)
			require.NoError(t, err)
			// The rest never comes; the server's read deadline passes.
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(time.Minute)))
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err, "the server answers a request whose body it gave up on")
			defer res.Body.Close()
			require.NotEqual(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, http.StatusBadRequest, res.StatusCode)
			assert.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
			var p struct{ Code string }
			require.NoError(t, json.NewDecoder(res.Body).Decode(&p))
			assert.Equal(t, "invalid_request", p.Code)
		})
	}
}

// hangingStore is a SQLite store whose reads of a request's records and
// pages, while hang is set, hang until the caller's context ends, as a
// PostgreSQL server that stopped answering: no error of the store's own
// ever comes. Every other call is the store's own.
type hangingStore struct {
	*sqlite.Store
	hang    *atomic.Bool
	waiting *atomic.Int32 // calls hanging now; nil: not counted
}

func (s hangingStore) wait(ctx context.Context) error {
	if !s.hang.Load() {
		return nil
	}
	if s.waiting != nil {
		s.waiting.Add(1)
		defer s.waiting.Add(-1)
	}
	<-ctx.Done()
	return fmt.Errorf("test: the database stopped answering: %w", ctx.Err())
}

func (s hangingStore) ListContactsVersioned(ctx context.Context, projectID string, req paginate.Request) (uint64, paginate.Page[store.Contact], error) {
	if err := s.wait(ctx); err != nil {
		return 0, paginate.Page[store.Contact]{}, err
	}
	return s.Store.ListContactsVersioned(ctx, projectID, req)
}

func (s hangingStore) ListContacts(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[store.Contact], error) {
	if err := s.wait(ctx); err != nil {
		return paginate.Page[store.Contact]{}, err
	}
	return s.Store.ListContacts(ctx, projectID, req)
}

func (s hangingStore) GetAPIKey(ctx context.Context, projectID, id string) (store.APIKey, error) {
	if err := s.wait(ctx); err != nil {
		return store.APIKey{}, err
	}
	return s.Store.GetAPIKey(ctx, projectID, id)
}

func (s hangingStore) GetSigningKey(ctx context.Context, projectID, id string) (store.SigningKey, error) {
	if err := s.wait(ctx); err != nil {
		return store.SigningKey{}, err
	}
	return s.Store.GetSigningKey(ctx, projectID, id)
}

func (s hangingStore) GetRefreshFamily(ctx context.Context, projectID, id string) (store.RefreshFamily, error) {
	if err := s.wait(ctx); err != nil {
		return store.RefreshFamily{}, err
	}
	return s.Store.GetRefreshFamily(ctx, projectID, id)
}

func (s hangingStore) ChangeVersion(ctx context.Context) (uint64, error) {
	if err := s.wait(ctx); err != nil {
		return 0, err
	}
	return s.Store.ChangeVersion(ctx)
}

func (s hangingStore) GetUserByEmail(ctx context.Context, projectID, email string) (store.User, error) {
	if err := s.wait(ctx); err != nil {
		return store.User{}, err
	}
	return s.Store.GetUserByEmail(ctx, projectID, email)
}

// TestStoreHangs_AnsweredUnavailable: with a store that stops answering,
// every request that needs it is answered 503 unavailable with Retry-After
// once Options.StoreTimeout has passed, one deadline for all of its store
// calls: also an authenticated list whose token check was deferred to the
// list's read, which then needs a second read for the check.
func TestStoreHangs_AnsweredUnavailable(t *testing.T) {
	sq, err := sqlite.Open(context.Background(), sqlitetest.Path(t), &sqlite.Options{Logger: testLogger(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sq.Close() })
	st := hangingStore{Store: sq, hang: new(atomic.Bool)}
	// Short, so that the test is quick; nothing depends on how long the
	// healthy requests take but the warm-up's retries.
	lk, h := newPathLatchkey(t, st, &latchkey.Options{StoreTimeout: time.Second})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	client := srv.Client()
	client.Timeout = 2 * time.Minute // only so that a request left unanswered fails the test
	contract(t).WrapClient(client)
	in := instance{url: srv.URL, client: client}
	createContact(t, st, "default", "Secret Contact")

	ctx := context.Background()
	_, apiKey, err := lk.APIKeys().Create(ctx, "default", "hung")
	require.NoError(t, err)
	// A login token, minted as a login mints it (a login's hash could
	// take longer than StoreTimeout on a busy machine).
	u, err := lk.Users().Create(ctx, "default", "alice@example.com", "correct horse", nil)
	require.NoError(t, err)
	now := time.Now()
	fam := store.RefreshFamily{ID: store.NewID(store.PrefixFamily), ProjectID: "default", UserID: u.ID,
		IssuedAt: now, ExpiresAt: now.Add(time.Hour), CreatedAt: now, EndsAt: now.Add(time.Hour)}
	require.NoError(t, st.CreateRefreshFamily(ctx, fam, u.PasswordHash))
	loginToken, _, err := lk.Keyring().MintLoginToken(ctx, "default", u, fam.ID)
	require.NoError(t, err)
	for _, tok := range []string{apiKey, loginToken} {
		// Warm: the next check is deferred to the list's read. A healthy
		// request slower than StoreTimeout is a 503 too: ask again.
		for range 2 {
			require.Eventually(t, func() bool {
				status, _ := in.call(t, "GET", "/v1/contacts", tok, "")
				return status == http.StatusOK
			}, time.Minute, 10*time.Millisecond)
		}
	}

	st.hang.Store(true)
	for _, c := range []struct{ name, method, path, token, body string }{
		{"contacts with an API key", "GET", "/v1/contacts", apiKey, ""},
		{"contacts with a login token", "GET", "/v1/contacts", loginToken, ""},
		{"login", "POST", "/v1/identity/login", "", `{"email":"alice@example.com","password":"correct horse"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, body := in.do(t, c.method, c.path, c.token, c.body)
			require.NotNil(t, res, "no answer: %s", body)
			assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, body)
			assert.Equal(t, "unavailable", codeOf(body))
			assert.NotEmpty(t, res.Header.Get("Retry-After"))
			assert.NotContains(t, body, "Secret Contact")
		})
	}
}

// TestStoreTimeout_SparesLongPolls: the wait of a long poll of the
// revocation feed is not store work: a wait longer than StoreTimeout ends
// with the (empty) page, not with a 503. The deadline (1 s) leaves the
// request's store work time on a slow machine; the wait is twice as long.
func TestStoreTimeout_SparesLongPolls(t *testing.T) {
	st := openStore(t)
	lk, h := newPathLatchkey(t, st, &latchkey.Options{StoreTimeout: time.Second})
	_, apiKey, err := lk.APIKeys().Create(context.Background(), "default", "feed")
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	contract(t).WrapClient(srv.Client())
	in := instance{url: srv.URL, client: srv.Client()}
	status, body := in.call(t, "GET", "/v1/identity/revocations?wait=2", apiKey, "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"data":[]`)
}

// TestClientDisconnect_NotLoggedAsError: a client that gives up on a
// request (here while the store is slow to answer) is logged as a
// disconnect at Debug level, not as an internal error.
func TestClientDisconnect_NotLoggedAsError(t *testing.T) {
	sq, err := sqlite.Open(context.Background(), sqlitetest.Path(t), &sqlite.Options{Logger: testLogger(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sq.Close() })
	st := hangingStore{Store: sq, hang: new(atomic.Bool), waiting: new(atomic.Int32)}
	logs := &testutil.Buffer{}
	lk, err := latchkey.New(st, testMasterKey, &latchkey.Options{
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = lk.Close() })
	_, apiKey, err := lk.APIKeys().Create(context.Background(), "default", "gone")
	require.NoError(t, err)
	srv := httptest.NewServer(lk.Handler())
	t.Cleanup(srv.Close)

	st.hang.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/contacts", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+apiKey)
	done := make(chan error, 1)
	go func() {
		res, err := srv.Client().Do(req)
		if err == nil {
			res.Body.Close()
		}
		done <- err
	}()
	// Give up once the request is waiting for the store.
	require.Eventually(t, func() bool { return st.waiting.Load() > 0 }, time.Minute, time.Millisecond)
	cancel()
	require.Error(t, <-done)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "client disconnected") },
		time.Minute, time.Millisecond, "the disconnect is logged")
	assert.Contains(t, logs.String(), "level=DEBUG")
	assert.NotContains(t, logs.String(), "level=ERROR")
	assert.NotContains(t, logs.String(), "internal error")
}

// TestStoreHangs_AnsweredUnavailableOnPostgres: PostgreSQL holding every
// table a list and its token check read under a lock (another session's
// LOCK TABLE: the statements wait, no error comes) gets GET /v1/contacts
// with a warm API key a 503 with Retry-After once StoreTimeout has passed,
// as every other request that needs the store.
func TestStoreHangs_AnsweredUnavailableOnPostgres(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	st, err := postgres.Open(t.Context(), dbURL, &postgres.Options{Logger: testLogger(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	lk, h := newPathLatchkey(t, st, &latchkey.Options{StoreTimeout: time.Second})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	client := srv.Client()
	client.Timeout = 2 * time.Minute // only so that a request left unanswered fails the test
	contract(t).WrapClient(client)
	in := instance{url: srv.URL, client: client}
	createContact(t, st, "default", "Secret Contact")
	_, apiKey, err := lk.APIKeys().Create(t.Context(), "default", "hung")
	require.NoError(t, err)
	for range 2 { // warm: the next check is read with the page
		require.Eventually(t, func() bool {
			status, _ := in.call(t, "GET", "/v1/contacts", apiKey, "")
			return status == http.StatusOK
		}, time.Minute, 10*time.Millisecond)
	}

	locker, err := pgx.Connect(t.Context(), dbURL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = locker.Close(context.Background()) })
	tx, err := locker.Begin(t.Context())
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	_, err = tx.Exec(t.Context(), "LOCK TABLE contacts, api_keys, signing_keys, projects IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)

	res, body := in.do(t, "GET", "/v1/contacts", apiKey, "")
	require.NotNil(t, res, "no answer: %s", body)
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, body)
	assert.Equal(t, "unavailable", codeOf(body))
	assert.NotEmpty(t, res.Header.Get("Retry-After"))
	assert.NotContains(t, body, "Secret Contact")
}
