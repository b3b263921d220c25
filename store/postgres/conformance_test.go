package postgres_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
	"github.com/latchkey-dev/latchkey/storetest"
)

// TestConformance runs the store conformance suite against PostgreSQL, each
// case on a database of its own: the single-handle cases, the contention
// cases, and the cases for two pools (two instances) on one database. It
// runs on databases with the server's default isolation (READ COMMITTED)
// and, when pgtest.EnvSerializable is set (CI runs it so, apart from the
// README's test command), again on databases whose
// default_transaction_isolation is serializable, where contention gives
// real serialization failures (40001) that the store must retry, as on the
// PostgreSQL-compatible distributed databases. Each case's database is in
// the state of one migrated once (by a store opened and closed on it): a
// copy of it, or an earlier case's database reset to it while the previous
// case runs (pgtest.Databases), so a case's store opens as it would on a
// running system.
func TestConformance(t *testing.T) {
	t.Parallel()
	pgtest.AdminURL(t) // skip (or fail in CI) once, not in every case
	for _, mode := range pgtest.Isolations() {
		t.Run(mode.Name, func(t *testing.T) {
			dbs := mode.Databases(t, migrate)
			newStore := func(t *testing.T) store.Store { return openStore(t, dbs.New(t)) }
			t.Run("Run", func(t *testing.T) { storetest.Run(t, newStore) })
			t.Run("Concurrency", func(t *testing.T) { storetest.RunConcurrency(t, newStore) })
			t.Run("Shared", func(t *testing.T) {
				storetest.RunShared(t, func(t *testing.T) (a, b store.Store) {
					url := dbs.New(t)
					return openStore(t, url), openStore(t, url)
				})
			})
			t.Run("Unwritable", func(t *testing.T) {
				// A database whose new sessions are read-only, as a hot
				// standby's are (SQLSTATE 25006 on every write); the
				// second store opens on it, so a migrated database that
				// cannot write can be opened.
				storetest.RunUnwritable(t, func(t *testing.T) (store.Store, func(t *testing.T) store.Store) {
					url := dbs.New(t)
					return openStore(t, url), func(t *testing.T) store.Store {
						pgtest.SetReadOnly(t, url, true)
						return openStore(t, url)
					}
				})
			})
		})
	}
}

// migrate applies the store's migrations to the database at url.
func migrate(ctx context.Context, url string) error {
	st, err := postgres.Open(ctx, url, &postgres.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	return st.Close()
}
