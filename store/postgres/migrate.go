package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// migrationFiles holds the schema's migrations, numbered and append-only:
// migrations/NNNN_name.sql. A released migration is never edited; a change
// is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLockKey is the pg_advisory_xact_lock key held while migrating,
// so that instances starting at once migrate one after the other. It is
// "latchkey" in ASCII.
const migrationLockKey int64 = 0x6c617463686b6579

// migration is one numbered schema change.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".sql")
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration file %q is not named NNNN_name.sql", e.Name())
		}
		b, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	// A number may be missing (taken by a change made beside this one):
	// each migration is applied by its own number, so one that arrives
	// later with a lower number is still applied. Each number is used once.
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("migrations %s and %s have one version", ms[i-1].name, ms[i].name)
		}
	}
	return ms, nil
}

const (
	createMigrationsTableSQL = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version integer PRIMARY KEY,
	name text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`
	// migrationIsolationSQL makes the migrating transaction READ
	// COMMITTED whatever the database's default: under REPEATABLE READ or
	// SERIALIZABLE its snapshot would be taken by the lock statement,
	// before the lock is granted, and it would not see the migration that
	// the instance it waited for committed.
	migrationIsolationSQL = `SET TRANSACTION ISOLATION LEVEL READ COMMITTED`
	migrationLockSQL      = `SELECT pg_advisory_xact_lock($1)`
	migrationAppliedSQL   = `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)`
	migrationNewestSQL    = `SELECT coalesce(max(version), 0) FROM schema_migrations`
	recordMigrationSQL    = `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`
	// migrationsKnownSQL counts the recorded migrations this build knows
	// ($1 is their versions).
	migrationsKnownSQL = `SELECT count(*) FROM schema_migrations WHERE version = ANY($1)`
	codeUndefinedTable = "42P01"
)

// migrated reports whether the database has every migration this build
// knows, from a read: a database that cannot take writes now (a standby, a
// read-only database) but is migrated can then be opened.
func (s *Store) migrated(ctx context.Context, ms []migration) (bool, error) {
	versions := make([]int, len(ms))
	for i, m := range ms {
		versions[i] = m.version
	}
	var n int
	err := s.read(ctx, "migrate", func(q querier) error {
		return q.QueryRow(ctx, migrationsKnownSQL, versions).Scan(&n)
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == codeUndefinedTable {
		return false, nil
	}
	return n == len(ms), err
}

// Migrate applies the migrations the database lacks, in order, each in its
// own transaction together with its row in schema_migrations. Every
// transaction first takes a transaction-level advisory lock, so several
// instances may call Migrate at once: one applies each migration and the
// others find it recorded. Open calls Migrate unless Options.NoMigrate is
// set.
//
// When every migration is recorded already, Migrate only reads, so that a
// migrated database that cannot take writes now (a standby in recovery, a
// database set read-only) can be opened.
//
// A database migrated by a newer Latchkey (it records versions this one does
// not know) is left alone and logged at Warn: migrations are append-only and
// keep older code working.
func (s *Store) Migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	pending := ms
	if done, err := s.migrated(ctx, ms); err != nil {
		return err
	} else if done {
		pending = nil
	}
	for _, m := range pending {
		applied := false
		err := s.inTx(ctx, "migration "+m.name, func(tx pgx.Tx) error {
			applied = false
			if _, err := tx.Exec(ctx, migrationIsolationSQL); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, migrationLockSQL, migrationLockKey); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, createMigrationsTableSQL); err != nil {
				return err
			}
			var done bool
			if err := tx.QueryRow(ctx, migrationAppliedSQL, m.version).Scan(&done); err != nil {
				return err
			}
			if done {
				return nil
			}
			// No arguments: pgx sends the file with the simple protocol,
			// which runs several statements.
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, recordMigrationSQL, m.version, m.name); err != nil {
				return err
			}
			applied = true
			return nil
		})
		if err != nil {
			return err
		}
		if applied {
			s.log.InfoContext(ctx, "postgres: applied migration", "migration", m.name)
		}
	}
	var newest int
	err = s.read(ctx, "migrate", func(q querier) error {
		return q.QueryRow(ctx, migrationNewestSQL).Scan(&newest)
	})
	if err != nil {
		return err
	}
	if known := ms[len(ms)-1].version; newest > known {
		s.log.WarnContext(ctx, "postgres: database schema is newer than this build",
			"database_version", newest, "known_version", known)
	}
	return nil
}
