package postgres

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

// testDiscard drops a store's log lines.
var testDiscard = slog.New(slog.DiscardHandler)

// openInternal opens a Store on url, closed in t.Cleanup.
func openInternal(t testing.TB, url string) *Store {
	t.Helper()
	s, err := Open(context.Background(), url, &Options{Logger: testDiscard})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// rawConn opens a plain connection to url, closed in t.Cleanup.
func rawConn(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// waitBlocked waits until n sessions of the database wait for a lock.
func waitBlocked(t testing.TB, c *pgx.Conn, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got int
		require.NoError(t, c.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&got))
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions wait for a lock after 10s, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// it0 is a fixed time for the internal tests.
var it0 = time.Date(2026, 11, 21, 10, 15, 30, 123456000, time.UTC)

// seedUser creates project p and a user of it, and returns the user.
func seedUser(t testing.TB, s *Store, p string) store.User {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: p, CreatedAt: it0}))
	u := store.User{ID: store.NewID(store.PrefixUser), ProjectID: p, Email: store.NewID("e") + "@example.com", PasswordHash: "h", CreatedAt: it0}
	require.NoError(t, s.CreateUser(ctx, u))
	return u
}

// seedFamily creates a family of u at it0 that is live for an hour.
func seedFamily(t testing.TB, s *Store, u store.User) store.RefreshFamily {
	t.Helper()
	f := store.RefreshFamily{ID: store.NewID(store.PrefixFamily), ProjectID: u.ProjectID, UserID: u.ID,
		IssuedAt: it0, ExpiresAt: it0.Add(time.Hour), CreatedAt: it0}
	require.NoError(t, s.CreateRefreshFamily(context.Background(), f, u.PasswordHash))
	return f
}
