package sqlite_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
	"github.com/latchkey-dev/latchkey/store/sqlite/sqlitetest"
	"github.com/latchkey-dev/latchkey/storetest"
)

// open opens the database at path with the test's logger and closes it when
// the test ends.
func open(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path, &sqlite.Options{Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	if err != nil {
		t.Fatalf("sqlite.Open(%q) = %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// newMemoryStore opens a fresh private in-memory database.
func newMemoryStore(t *testing.T) store.Store {
	return open(t, sqlite.MemoryPath)
}

// newFileStore opens, with the production settings (WAL, synchronous=FULL),
// a new database file migrated as a running system's is
// (sqlitetest.Path), without running the migrations again for every case.
func newFileStore(t *testing.T) store.Store {
	return open(t, sqlitetest.Path(t))
}

// envMemoryConformance, set to any value, adds the conformance suite's run
// on in-memory databases (sqlite.MemoryPath): CI sets it in a run of its
// own. It is not run under the README's test command, which must stay
// short: every case migrates its in-memory database, which under the race
// detector makes it one of the longest runs. An in-memory store is the
// file store's SQL on one connection; under the README's command
// TestConcurrency runs on it too, as do the tests of the packages that use
// one.
const envMemoryConformance = "LATCHKEY_TEST_SQLITE_MEMORY"

func TestConformance(t *testing.T) {
	t.Parallel()
	t.Run("file", func(t *testing.T) { storetest.Run(t, newFileStore) })
	if os.Getenv(envMemoryConformance) != "" {
		t.Run("memory", func(t *testing.T) { storetest.Run(t, newMemoryStore) })
	}
}

func TestConcurrency(t *testing.T) {
	t.Parallel()
	t.Run("file", func(t *testing.T) { storetest.RunConcurrency(t, newFileStore) })
	t.Run("memory", func(t *testing.T) { storetest.RunConcurrency(t, newMemoryStore) })
}

func TestShared(t *testing.T) {
	t.Parallel()
	storetest.RunShared(t, func(t *testing.T) (a, b store.Store) {
		path := filepath.Join(t.TempDir(), "latchkey.db")
		return open(t, path), open(t, path)
	})
}

// TestOpen_CreatesPrivateFile: a database Open creates is readable by its
// owner only (it holds password hashes), also in a directory that already
// exists and that others may read, and so are its WAL and shared-memory
// files. An existing database keeps its mode.
func TestOpen_CreatesPrivateFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	path := filepath.Join(dir, "latchkey.db")
	st := open(t, path)
	require.NoError(t, st.CreateProject(context.Background(), store.Project{ID: "acme", CreatedAt: time.Now()}))
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(name)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), name)
	}
	require.NoError(t, st.Close())

	require.NoError(t, os.Chmod(path, 0o640))
	open(t, path)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "an existing file's mode is the owner's choice")
}
