package sqlitetest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	zs "zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
	"github.com/latchkey-dev/latchkey/store/sqlite/sqlitetest"
)

// dump returns the schema and the applied migrations of the database file
// at path, one line each.
func dump(t *testing.T, path string) string {
	t.Helper()
	conn, err := zs.OpenConn(path, zs.OpenReadOnly)
	require.NoError(t, err)
	defer conn.Close()
	var b strings.Builder
	for _, q := range []string{
		`SELECT type || ' ' || name || ' ' || COALESCE(sql, '') FROM sqlite_master ORDER BY type, name`,
		`SELECT 'migration ' || version || ' ' || name FROM schema_migrations ORDER BY version`,
	} {
		require.NoError(t, sqlitex.ExecuteTransient(conn, q, &sqlitex.ExecOptions{
			ResultFunc: func(st *zs.Stmt) error { b.WriteString(st.ColumnText(0) + "\n"); return nil },
		}))
	}
	return b.String()
}

// A Path holds what sqlite.Open makes of a new file, privately, and each
// Path is a database of its own.
func TestPath(t *testing.T) {
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	st, err := sqlite.Open(t.Context(), fresh, nil)
	require.NoError(t, err)
	require.NoError(t, st.Close())

	a, b := sqlitetest.Path(t), sqlitetest.Path(t)
	require.NotEqual(t, a, b)
	want := dump(t, fresh)
	require.Contains(t, want, "migration 1 ")
	require.Equal(t, want, dump(t, a))
	fi, err := os.Stat(a)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	sa, err := sqlite.Open(t.Context(), a, &sqlite.Options{NoMigrate: true})
	require.NoError(t, err)
	defer sa.Close()
	require.NoError(t, sa.CreateProject(t.Context(), store.Project{ID: "only-a", CreatedAt: time.Now()}))
	sb, err := sqlite.Open(t.Context(), b, &sqlite.Options{NoMigrate: true})
	require.NoError(t, err)
	defer sb.Close()
	_, err = sb.GetProject(t.Context(), "only-a")
	require.ErrorIs(t, err, store.ErrNotFound)
}
