package postgres_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// testLogger routes a store's log lines to the test's output.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// openStore opens a Store on url, closed in t.Cleanup.
func openStore(t testing.TB, url string) *postgres.Store {
	t.Helper()
	st, err := postgres.Open(context.Background(), url, &postgres.Options{Logger: testLogger(t)})
	require.NoError(t, err, "Open")
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// newStore returns a Store on a fresh database of its own.
func newStore(t testing.TB) *postgres.Store {
	t.Helper()
	return openStore(t, pgtest.NewDatabase(t))
}

// newShared returns two Stores, two pools, on one fresh database, and its URL.
func newShared(t testing.TB) (a, b *postgres.Store, url string) {
	t.Helper()
	url = pgtest.NewDatabase(t)
	return openStore(t, url), openStore(t, url), url
}

// connect opens a plain connection to url for looking behind the store.
func connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// t0 is a fixed time with sub-microsecond digits, so that tests see the
// truncation.
var t0 = time.Date(2026, 11, 21, 10, 15, 30, 123456789, time.UTC)

// mustProject creates project id.
func mustProject(t testing.TB, st store.Store, id string) {
	t.Helper()
	require.NoError(t, st.CreateProject(context.Background(), store.Project{ID: id, CreatedAt: t0}))
}

// mustUser creates a user of project and returns it.
func mustUser(t testing.TB, st store.Store, project, email string) store.User {
	t.Helper()
	u := store.User{ID: store.NewID(store.PrefixUser), ProjectID: project, Email: email, PasswordHash: "h", CreatedAt: t0}
	require.NoError(t, st.CreateUser(context.Background(), u))
	return u
}
