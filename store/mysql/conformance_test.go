package mysql_test

import (
	"testing"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/mysql/mytest"
	"github.com/latchkey-dev/latchkey/storetest"
)

// TestConformance runs the store conformance suite against MySQL or
// MariaDB, each case on a database of its own: the single-handle cases, the
// contention cases, and the cases for two pools (two instances) on one
// database.
func TestConformance(t *testing.T) {
	mytest.AdminURL(t) // skip (or fail in CI) once, not in every case
	newStore := func(t *testing.T) store.Store { return openStore(t, mytest.NewDatabase(t)) }
	t.Run("Run", func(t *testing.T) { storetest.Run(t, newStore) })
	t.Run("Concurrency", func(t *testing.T) { storetest.RunConcurrency(t, newStore) })
	t.Run("Shared", func(t *testing.T) {
		storetest.RunShared(t, func(t *testing.T) (a, b store.Store) {
			url := mytest.NewDatabase(t)
			return openStore(t, url), openStore(t, url)
		})
	})
}
