package mysql_test

import (
	"strings"
	"testing"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/mysql/mytest"
	"github.com/latchkey-dev/latchkey/storetest"
)

// TestConformance runs the store conformance suite against MySQL or
// MariaDB, each case on a database of its own: the single-handle cases, the
// contention cases, the cases for two pools (two instances) on one
// database, and the unwritable database's cases.
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
	t.Run("Unwritable", func(t *testing.T) {
		// MariaDB has no read-only database (MySQL's ALTER DATABASE ...
		// READ ONLY is 8.0.22+), and read_only is the whole server's,
		// which other tests share: the second store's sessions are
		// read-only instead (tx_read_only, as a replica's writes are
		// refused with SQLSTATE 25006), and it opens on the migrated
		// database without writing.
		storetest.RunUnwritable(t, func(t *testing.T) (store.Store, func(t *testing.T) store.Store) {
			url := mytest.NewDatabase(t)
			return openStore(t, url), func(t *testing.T) store.Store {
				return openStore(t, readOnlySessions(t, url))
			}
		})
	})
}

// readOnlySessions returns url with a driver parameter that makes every
// session of the pool read-only: tx_read_only on MariaDB before 11.1,
// transaction_read_only on MySQL.
func readOnlySessions(t *testing.T, url string) string {
	t.Helper()
	st := openStore(t, url)
	name := "transaction_read_only"
	if st.MariaDB() {
		name = "tx_read_only"
	}
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + name + "=1"
}
