package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/mysql"
	"github.com/latchkey-dev/latchkey/store/mysql/mytest"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// TestHealth_Cached: the store is checked at most once per healthTTL of the
// (fake) clock, whatever the number of requests, concurrent ones included;
// a failing check is answered false until a later check passes; a check
// runs on even when the request that started it is cancelled.
func TestHealth_Cached(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		now   = time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
		calls atomic.Int32
		fail  atomic.Bool
	)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	h := &health{log: slog.New(slog.DiscardHandler), now: clock, check: func(ctx context.Context) error {
		calls.Add(1)
		if err := ctx.Err(); err != nil {
			return err
		}
		if fail.Load() {
			return store.ErrUnavailable
		}
		return nil
	}}
	ctx := t.Context()

	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() { defer wg.Done(); assert.True(t, h.ok(ctx)) }()
	}
	wg.Wait()
	assert.EqualValues(t, 1, calls.Load(), "concurrent requests share one check")
	fail.Store(true)
	advance(healthTTL - time.Nanosecond)
	assert.True(t, h.ok(ctx), "an answer younger than healthTTL is reused")
	assert.EqualValues(t, 1, calls.Load())
	advance(time.Nanosecond)
	assert.False(t, h.ok(ctx), "an answer healthTTL old is not")
	assert.EqualValues(t, 2, calls.Load())
	assert.False(t, h.ok(ctx))
	fail.Store(false)
	advance(healthTTL)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	assert.True(t, h.ok(cancelled), "the check does not end with the request")
	assert.EqualValues(t, 3, calls.Load())
}

// TestE2E_healthzReadOnlyPostgres runs the server on PostgreSQL: /healthz
// is 200 while the database takes writes; when its sessions become
// read-only (a standby's are: the server's connections are ended, as a
// failover ends them, and it reconnects to a database that cannot write),
// /healthz is 503 with only {"status":"unavailable"} and Retry-After, and
// so is a login (as problem+json); a server started on the read-only database starts and
// answers 503 too, and records its public URL once the database takes
// writes again; then /healthz is 200.
func TestE2E_healthzReadOnlyPostgres(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	dir := t.TempDir()
	ok(t, dir, "", "project create", "-db", db, "acme")
	ok(t, dir, "pw-of-ada\n", "user create", "-db", db, "-project", "acme", "-email", "ada@example.com")
	s := startServer(t, dir, "-db", db)
	healthz := func(s *server) (int, string) {
		r := s.do("GET", "/healthz", "", "")
		return r.status, strings.TrimSpace(string(r.body))
	}
	st, body := healthz(s)
	require.Equal(t, http.StatusOK, st)
	require.JSONEq(t, `{"status":"ok"}`, body)

	pgtest.SetReadOnly(t, db, true)
	endSessions(t, db)
	require.Eventually(t, func() bool { st, _ := healthz(s); return st == http.StatusServiceUnavailable },
		15*time.Second, 50*time.Millisecond, "/healthz on a database that cannot write")
	_, body = healthz(s)
	assert.JSONEq(t, `{"status":"unavailable"}`, body, "reveals nothing else")
	assert.NotEmpty(t, s.do("GET", "/healthz", "", "").header.Get("Retry-After"), "a 503 says when to try again")
	r := s.do("POST", "/p/acme/v1/identity/login", "", `{"email":"ada@example.com","password":"pw-of-ada"}`)
	assert.Equal(t, http.StatusServiceUnavailable, r.status, string(r.body))
	assert.NotEmpty(t, r.header.Get("Retry-After"))

	const standbyURL = "http://standby.example.test"
	standby := startServer(t, dir, "-db", db, "-public-url", standbyURL)
	st, body = healthz(standby)
	assert.Equal(t, http.StatusServiceUnavailable, st, "a server started on a database that cannot write")
	assert.JSONEq(t, `{"status":"unavailable"}`, body)

	pgtest.SetReadOnly(t, db, false)
	endSessions(t, db)
	for _, srv := range []*server{s, standby} {
		require.Eventually(t, func() bool { st, _ := healthz(srv); return st == http.StatusOK },
			15*time.Second, 50*time.Millisecond, "/healthz once the database takes writes again")
	}
	r = s.do("POST", "/p/acme/v1/identity/login", "", `{"email":"ada@example.com","password":"pw-of-ada"}`)
	assert.Equal(t, http.StatusOK, r.status, string(r.body))
	// The server started on the read-only database records its public URL
	// once it can: a key made on the command line carries it.
	require.Eventually(t, func() bool {
		k := ok(t, dir, "", "key create", "-db", db, "-project", "acme", "-name", "cli")[0]
		return issuerOf(t, k["token"].(string)) == standbyURL+"/p/acme"
	}, 15*time.Second, 200*time.Millisecond, "the public URL of the server started on the read-only database")
}

// TestE2E_healthzReadOnlyMySQL runs two servers on one MySQL or MariaDB
// database, the second with read-only sessions (a replica's writes are
// refused alike; MariaDB has no read-only database, and the server's
// read_only is shared by every test): the first's /healthz is 200 and its
// login works; the second starts, and its /healthz is 503 with only
// {"status":"unavailable"}, and so is a login, with Retry-After.
func TestE2E_healthzReadOnlyMySQL(t *testing.T) {
	t.Parallel()
	db := mytest.NewDatabase(t)
	dir := t.TempDir()
	ok(t, dir, "", "project create", "-db", db, "acme")
	ok(t, dir, "pw-of-ada\n", "user create", "-db", db, "-project", "acme", "-email", "ada@example.com")
	st, err := mysql.Open(t.Context(), db, nil)
	require.NoError(t, err)
	readOnly := "transaction_read_only"
	if st.MariaDB() {
		readOnly = "tx_read_only" // MariaDB before 11.1
	}
	require.NoError(t, st.Close())
	healthz := func(s *server) (int, string) {
		r := s.do("GET", "/healthz", "", "")
		return r.status, strings.TrimSpace(string(r.body))
	}
	login := func(s *server) result {
		return s.do("POST", "/p/acme/v1/identity/login", "", `{"email":"ada@example.com","password":"pw-of-ada"}`)
	}

	s := startServer(t, dir, "-db", db)
	code, body := healthz(s)
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `{"status":"ok"}`, body)

	sep := "?"
	if strings.Contains(db, "?") {
		sep = "&" // the local server's URL has parameters of its own
	}
	replica := startServer(t, dir, "-db", db+sep+readOnly+"=1")
	code, body = healthz(replica)
	assert.Equal(t, http.StatusServiceUnavailable, code, "a server whose sessions cannot write")
	assert.JSONEq(t, `{"status":"unavailable"}`, body, "reveals nothing else")
	r := login(replica)
	assert.Equal(t, http.StatusServiceUnavailable, r.status, string(r.body))
	assert.NotEmpty(t, r.header.Get("Retry-After"))

	code, _ = healthz(s)
	assert.Equal(t, http.StatusOK, code, "the server that can write")
	r = login(s)
	assert.Equal(t, http.StatusOK, r.status, string(r.body))
}

// endSessions ends every other session on the database of dbURL, as a
// failover or a restart does.
func endSessions(t *testing.T, dbURL string) {
	t.Helper()
	c, err := pgx.Connect(t.Context(), dbURL)
	require.NoError(t, err)
	defer c.Close(context.Background())
	_, err = c.Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if err != nil && !errors.Is(err, context.Canceled) {
		require.NoError(t, err)
	}
}
