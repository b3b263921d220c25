package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/latchkey-dev/latchkey/store"
)

// TestChangeVersion_HoldsNoSnapshot: the dedicated connection ends its read
// transaction after each call, so it never keeps a checkpoint from
// resetting the WAL (which would then grow without bound).
func TestChangeVersion_HoldsNoSnapshot(t *testing.T) {
	s := openFile(t, filepath.Join(t.TempDir(), "v.db"), nil)
	ctx := t.Context()
	v0, err := s.ChangeVersion(ctx)
	require.NoError(t, err)
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
	v1, err := s.ChangeVersion(ctx)
	require.NoError(t, err)
	require.NotEqual(t, v0, v1, "the store's own commit went unnoticed")
	busy := int64(-1)
	withWriter(t, s, func(conn *sqlite.Conn) {
		require.NoError(t, sqlitex.ExecuteTransient(conn, "PRAGMA wal_checkpoint(TRUNCATE)", &sqlitex.ExecOptions{
			ResultFunc: func(st *sqlite.Stmt) error { busy = st.ColumnInt64(0); return nil },
		}))
	})
	require.Zero(t, busy, "a checkpoint was blocked by a reader")
}

// TestChangeVersion_FailsAfterClose: a closed store reports an error, never
// a version a caller could trust.
func TestChangeVersion_FailsAfterClose(t *testing.T) {
	for _, path := range []string{filepath.Join(t.TempDir(), "v.db"), MemoryPath} {
		s := openFile(t, path, nil)
		_, err := s.ChangeVersion(t.Context())
		require.NoError(t, err)
		require.NoError(t, s.Close())
		_, err = s.ChangeVersion(t.Context())
		require.Error(t, err, path)
	}
}
