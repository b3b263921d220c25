package postgres_test

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store/postgres"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// TestOpen_ConcurrentMigrate starts several instances on one empty database
// at once: the advisory lock makes one of them apply each migration and the
// others find it recorded. On a database whose default isolation is
// SERIALIZABLE too: the migrating transaction runs READ COMMITTED, so the
// instance that waited for the lock sees what the other committed.
func TestOpen_ConcurrentMigrate(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name  string
		newDB func(testing.TB) string
	}{{"ReadCommitted", pgtest.NewDatabase}, {"Serializable", pgtest.NewSerializableDatabase}} {
		t.Run(mode.name, func(t *testing.T) { testConcurrentMigrate(t, mode.newDB(t)) })
	}
}

func testConcurrentMigrate(t *testing.T, url string) {
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			st, err := postgres.Open(context.Background(), url, &postgres.Options{Logger: testLogger(t), MaxConns: 2})
			if err == nil {
				_ = st.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "Open #%d", i)
	}
	conn := connect(t, url)
	var rows, distinct, minV int
	require.NoError(t, conn.QueryRow(context.Background(),
		`SELECT count(*), count(DISTINCT version), min(version) FROM schema_migrations`).Scan(&rows, &distinct, &minV))
	assert.Equal(t, 1, minV)
	entries, err := os.ReadDir("migrations")
	require.NoError(t, err)
	assert.Equal(t, len(entries), rows, "one row per migration")
	assert.Equal(t, rows, distinct, "each migration applied once")
}

// TestOpen_NoMigrate checks that NoMigrate leaves the database empty until
// Migrate runs, and that Migrate can run again harmlessly.
func TestOpen_NoMigrate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	st, err := postgres.Open(ctx, url, &postgres.Options{NoMigrate: true, Logger: testLogger(t)})
	require.NoError(t, err)
	defer st.Close()

	conn := connect(t, url)
	var exists bool
	require.NoError(t, conn.QueryRow(ctx, `SELECT to_regclass('projects') IS NOT NULL`).Scan(&exists))
	assert.False(t, exists, "projects table before Migrate")

	require.NoError(t, st.Migrate(ctx))
	require.NoError(t, st.Migrate(ctx), "second Migrate")
	require.NoError(t, conn.QueryRow(ctx, `SELECT to_regclass('projects') IS NOT NULL`).Scan(&exists))
	assert.True(t, exists, "projects table after Migrate")
	mustProject(t, st, "default")
}

// TestOpen_Errors checks that Open reports bad input and an unreachable
// server without echoing the password.
func TestOpen_Errors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, err := postgres.Open(ctx, "postgres://u:s3cr3t@127.0.0.1:1/x?sslmode=disable&connect_timeout=2", nil)
	require.Error(t, err, "unreachable server")
	assert.NotContains(t, err.Error(), "s3cr3t")

	_, err = postgres.Open(ctx, "postgres://u:s3cr3t@[::1/x", nil)
	require.Error(t, err, "unparsable url")
	assert.NotContains(t, err.Error(), "s3cr3t")

	_, err = postgres.Open(ctx, pgtest.AdminURL(t), &postgres.Options{MaxConns: -1})
	require.Error(t, err, "negative MaxConns")
}

// TestStore_Close checks that calls after Close fail.
func TestStore_Close(t *testing.T) {
	t.Parallel()
	st, err := postgres.Open(context.Background(), pgtest.NewDatabase(t), nil)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	_, err = st.ListProjects(context.Background())
	assert.Error(t, err, "ListProjects after Close")
}
