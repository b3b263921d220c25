package sqlite_test

import (
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
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

// newFileStore opens a fresh database file in the test's temporary
// directory, with the production settings (WAL, synchronous=FULL).
func newFileStore(t *testing.T) store.Store {
	return open(t, filepath.Join(t.TempDir(), "latchkey.db"))
}

// newMemoryStore opens a fresh private in-memory database.
func newMemoryStore(t *testing.T) store.Store {
	return open(t, sqlite.MemoryPath)
}

func TestConformance(t *testing.T) {
	t.Run("file", func(t *testing.T) { storetest.Run(t, newFileStore) })
	t.Run("memory", func(t *testing.T) { storetest.Run(t, newMemoryStore) })
}

func TestConcurrency(t *testing.T) {
	t.Run("file", func(t *testing.T) { storetest.RunConcurrency(t, newFileStore) })
	t.Run("memory", func(t *testing.T) { storetest.RunConcurrency(t, newMemoryStore) })
}

func TestShared(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) (a, b store.Store) {
		path := filepath.Join(t.TempDir(), "latchkey.db")
		return open(t, path), open(t, path)
	})
}
