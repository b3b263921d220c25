package sqlite

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/latchkey-dev/latchkey/store"
)

// TestChangeVersion_ConcurrentCallsSeeEarlierCommits: concurrent calls,
// while another goroutine commits, follow the contract. Each call
// notes how many commits had returned before it began, and how many had
// started when it returned; a call that began after a commit returned that
// had started after another call returned must have a greater version than
// that other call.
func TestChangeVersion_ConcurrentCallsSeeEarlierCommits(t *testing.T) {
	t.Parallel()
	s := openFile(t, filepath.Join(t.TempDir(), "v.db"), nil)
	ctx := t.Context()
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
	type call struct {
		before int64 // commits returned before the call began
		after  int64 // commits started when the call had returned
		v      uint64
	}
	const callers, commits = 16, 60
	var started, done atomic.Int64
	var stop atomic.Bool
	results := make([][]call, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			for !stop.Load() {
				c := call{before: done.Load()}
				v, err := s.ChangeVersion(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				c.v, c.after = v, started.Load()
				results[i] = append(results[i], c)
			}
		})
	}
	for i := range commits {
		started.Add(1)
		_, err := s.CreateContact(ctx, store.Contact{ID: fmt.Sprintf("ct_%02d", i), ProjectID: "p", Name: "n", CreatedAt: time.Now()})
		require.NoError(t, err)
		done.Add(1)
	}
	stop.Store(true)
	wg.Wait()
	// below[n]: the greatest version of a call that returned with fewer
	// than n commits started. Commit n started after those calls returned.
	below := make([]uint64, commits+2)
	for _, rs := range results {
		for _, c := range rs {
			below[c.after+1] = max(below[c.after+1], c.v)
		}
	}
	for n := 1; n < len(below); n++ {
		below[n] = max(below[n], below[n-1])
	}
	checked := 0
	for _, rs := range results {
		for _, c := range rs {
			// Commit c.before returned before c began.
			if c.before > 0 && below[c.before] > 0 {
				require.Less(t, below[c.before], c.v, "a call began after a commit, yet its version is not past a call that returned before the commit started")
				checked++
			}
		}
	}
	require.Greater(t, checked, callers*commits/2)
}

// TestChangeVersion_HoldsNoSnapshot: the probes end their read
// transaction after each call, so it never keeps a checkpoint from
// resetting the WAL (which would then grow without bound).
func TestChangeVersion_HoldsNoSnapshot(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	for _, path := range []string{filepath.Join(t.TempDir(), "v.db"), MemoryPath} {
		s := openFile(t, path, nil)
		_, err := s.ChangeVersion(t.Context())
		require.NoError(t, err)
		require.NoError(t, s.Close())
		_, err = s.ChangeVersion(t.Context())
		require.Error(t, err, path)
	}
}

// TestChangeVersion_ReaderReuse: calls that take the same read-only
// connection again, with no commit in between, agree without reading the
// shared version; a commit through another handle of the file (another
// process's Store) or through a connection that is no Store at all (an
// operator's sqlite3 shell) changes the value the next call on that
// connection returns.
func TestChangeVersion_ReaderReuse(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "v.db")
	s := openFile(t, path, &Options{MaxOpenConns: 1})
	other := openFile(t, path, nil)
	ctx := t.Context()
	version := func() uint64 {
		t.Helper()
		v, err := s.ChangeVersion(ctx)
		require.NoError(t, err)
		return v
	}
	seen := map[uint64]string{}
	step := func(what string) uint64 {
		t.Helper()
		v := version()
		prev, ok := seen[v]
		require.Falsef(t, ok, "after %s, ChangeVersion() = %d, its value after %s", what, v, prev)
		seen[v] = what
		require.Equalf(t, v, version(), "a second call after %s, with no commit between", what)
		return v
	}
	step("Open")
	require.NoError(t, other.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
	step("a commit by another Store")
	raw, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	require.NoError(t, err)
	defer raw.Close()
	require.NoError(t, sqlitex.ExecuteTransient(raw, "UPDATE projects SET created_at = created_at + 1", nil))
	step("a commit by a connection of no Store")
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "q", CreatedAt: time.Now()}))
	step("a commit by the Store itself")
}
