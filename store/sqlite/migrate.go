package sqlite

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one numbered, embedded schema change.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations returns the embedded migrations in version order. Their
// names are NNNN_description.sql, numbered from 1, each number once. A
// number may be missing (it is taken by a change made beside this one);
// each migration is applied by its own number, so one that arrives later
// with a lower number is still applied.
func loadMigrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, n := range names {
		base := path.Base(n)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("sqlite: migration %s: name must be NNNN_description.sql", base)
		}
		b, err := migrationFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: strings.TrimSuffix(base, ".sql"), sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if i > 0 && m.version == ms[i-1].version {
			return nil, fmt.Errorf("sqlite: migrations %s and %s have one version", ms[i-1].name, m.name)
		}
	}
	return ms, nil
}

const (
	createMigrationsTableSQL = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER NOT NULL PRIMARY KEY,
	name       TEXT    NOT NULL,
	applied_at INTEGER NOT NULL
)`
	maxMigrationSQL     = `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`
	migrationAppliedSQL = `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`
	recordMigrationSQL  = `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`
)

// Migrate applies the embedded migrations the database lacks, in order, each
// in its own write transaction together with its row in schema_migrations.
// It is safe to run from several processes at once: each transaction begins
// with BEGIN IMMEDIATE and re-checks schema_migrations, so every migration is
// applied exactly once. It fails, changing nothing, when the database has a
// migration newer than this build knows. Open calls it unless
// Options.NoMigrate is set.
func (s *Store) Migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	if err := s.inTx(ctx, func(t *wtx) error {
		_, err := t.exec(createMigrationsTableSQL)
		return err
	}); err != nil {
		return wrap("migrate", err)
	}
	for _, m := range ms {
		applied := false
		err := s.inTx(ctx, func(t *wtx) error {
			var newest, n int
			if err := t.queryRow(maxMigrationSQL, func(st *sqlite.Stmt) error {
				newest = st.ColumnInt(0)
				return nil
			}); err != nil {
				return err
			}
			if known := ms[len(ms)-1].version; newest > known {
				return fmt.Errorf("database has schema version %d, newer than this build's %d", newest, known)
			}
			if err := t.queryRow(migrationAppliedSQL, func(st *sqlite.Stmt) error {
				n = st.ColumnInt(0)
				return nil
			}, m.version); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			// The script runs inside the transaction (in a savepoint of
			// its own), so the schema change and its record commit
			// together.
			if err := sqlitex.ExecuteScript(t.conn, m.sql, nil); err != nil {
				return err
			}
			if _, err := t.exec(recordMigrationSQL, m.version, m.name, time.Now().UnixMicro()); err != nil {
				return err
			}
			applied = true
			return nil
		})
		if err != nil {
			return wrap("migrate "+m.name, err)
		}
		if applied {
			// A file's schema changing is news to its operator; a fresh
			// ":memory:" database (a test's) is migrated every time.
			level := slog.LevelInfo
			if s.memory {
				level = slog.LevelDebug
			}
			s.logger.Log(ctx, level, "sqlite: applied migration", "migration", m.name)
		}
	}
	return nil
}
