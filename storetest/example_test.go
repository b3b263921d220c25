package storetest_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
	"github.com/latchkey-dev/latchkey/storetest"
)

// openStore opens a fresh SQLite store in the test's temporary directory and
// closes it when the test ends. The cleanup ignores Close's error: one case
// closes the store itself.
func openStore(t *testing.T, path string) store.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path, nil)
	require.NoErrorf(t, err, "sqlite.Open(%q)", path)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// A backend runs the three suites from its own tests. This is how the
// SQLite store does it; a third-party backend does the same with its own
// factory.
func Example() {
	newStore := func(t *testing.T) store.Store {
		return openStore(t, filepath.Join(t.TempDir(), "latchkey.db"))
	}
	testConformance := func(t *testing.T) { storetest.Run(t, newStore) }
	testConcurrency := func(t *testing.T) { storetest.RunConcurrency(t, newStore) }
	testShared := func(t *testing.T) {
		storetest.RunShared(t, func(t *testing.T) (a, b store.Store) {
			path := filepath.Join(t.TempDir(), "latchkey.db")
			return openStore(t, path), openStore(t, path) // two handles, one database
		})
	}
	_, _, _ = testConformance, testConcurrency, testShared
}
