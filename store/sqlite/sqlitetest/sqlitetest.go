// Package sqlitetest gives tests a new SQLite database file of their own,
// migrated, as [sqlite.Open] leaves a new file: a copy, in the test's
// temporary directory, of one database migrated once per test process.
// Migrating a database runs every migration's statements, which is dear
// under the race detector; copying the file costs a fraction of it (the
// figures: docs/benchmarks.md, "The test suite").
//
// # Usage
//
//	func TestSomething(t *testing.T) {
//		st, err := sqlite.Open(t.Context(), sqlitetest.Path(t), nil)
//		...
//	}
package sqlitetest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/latchkey-dev/latchkey/store/sqlite"
)

// Path returns the path of a new database file, latchkey.db in a temporary
// directory of t's, holding every migration and no row beyond
// schema_migrations'. The file is t's to open, change and delete; it is
// removed with the directory when t ends.
func Path(t testing.TB) string {
	t.Helper()
	b, err := migrated()
	if err != nil {
		t.Fatalf("sqlitetest: migrating the template database: %v", err)
	}
	path := filepath.Join(t.TempDir(), "latchkey.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatalf("sqlitetest: %v", err)
	}
	return path
}

// migrated returns the bytes of a database file that sqlite.Open created
// and migrated, and Close left whole (no write-ahead log beside it). It is
// made on the first call of the process.
var migrated = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "latchkey-sqlitetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "latchkey.db")
	st, err := sqlite.Open(context.Background(), path, &sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	if err := st.Close(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("the closed database left a write-ahead log (%v)", err)
	}
	return os.ReadFile(path)
})
