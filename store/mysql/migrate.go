package mysql

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// migrationFiles holds the schema's migrations, numbered and append-only:
// migrations/NNNN_name.sql. A released migration is never edited; a change
// is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock starts the name of the GET_LOCK lock held while migrating,
// so that instances starting at once migrate one after the other. Named
// locks are per server, so the name ends with the MD5 of the database's
// name (a lock name is at most 64 characters; a database name may be 64).
const migrationLock = "latchkey_migrate:"

// migrationLockWait bounds the wait for another instance's migration, in
// seconds.
const migrationLockWait = 300

// migration is one numbered schema change: its statements, run one at a
// time.
type migration struct {
	version    int
	name       string
	statements []string
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
		ms = append(ms, migration{version: v, name: name, statements: splitStatements(string(b))})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i := range ms {
		if ms[i].version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d", ms[i].name, i+1)
		}
	}
	return ms, nil
}

// splitStatements splits a migration file into its statements: comment
// lines (starting with --) are dropped, and a line ending with ';' ends a
// statement.
func splitStatements(text string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			stmt := strings.TrimSuffix(strings.TrimSpace(cur.String()), ";")
			out = append(out, stmt)
			cur.Reset()
		}
	}
	if rest := strings.TrimSpace(cur.String()); rest != "" {
		out = append(out, rest)
	}
	return out
}

const (
	// schema_migrations records, per migration, how many of its statements
	// have been applied: MySQL commits each DDL statement on its own, so a
	// migration interrupted half-way (a crash, a lost connection) resumes
	// after its last applied statement at the next Migrate.
	createMigrationsTableSQL = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version INT NOT NULL PRIMARY KEY,
	name VARCHAR(255) NOT NULL,
	statements_applied INT NOT NULL,
	complete BOOL NOT NULL,
	applied_at DATETIME(6) NOT NULL
) ENGINE = InnoDB`
	getLockSQL         = `SELECT GET_LOCK(CONCAT(?, MD5(DATABASE())), ?)`
	releaseLockSQL     = `DO RELEASE_LOCK(CONCAT(?, MD5(DATABASE())))`
	migrationStateSQL  = `SELECT statements_applied, complete FROM schema_migrations WHERE version = ?`
	recordMigrationSQL = `INSERT INTO schema_migrations (version, name, statements_applied, complete, applied_at)
	VALUES (?, ?, ?, ?, UTC_TIMESTAMP(6))
	ON DUPLICATE KEY UPDATE statements_applied = VALUES(statements_applied), complete = VALUES(complete),
	applied_at = VALUES(applied_at)`
	migrationNewestSQL = `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`
)

// Migrate applies the migrations the database lacks, in order, one
// statement at a time, recording each statement applied in
// schema_migrations (so an interrupted migration resumes where it
// stopped). It holds a named lock (GET_LOCK) on one connection meanwhile,
// so several instances may call Migrate at once: one applies each
// migration and the others find it recorded. Open calls Migrate unless
// Options.NoMigrate is set.
//
// A database migrated by a newer Latchkey (it records versions this one
// does not know) is left alone and logged at Warn.
func (s *Store) Migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("mysql: migrate: %w", err)
	}
	return s.migrate(ctx, ms)
}

// migrate applies the migrations of ms the database lacks, as Migrate
// describes.
func (s *Store) migrate(ctx context.Context, ms []migration) error {
	conn, err := s.acquire(ctx)
	if err != nil {
		return wrap("migrate", err)
	}
	defer conn.Close()
	// A database that records every migration complete is left as it is,
	// without the lock and the DDL: a store opens on a read-only server or
	// session too.
	if done, newest, err := migrated(ctx, conn, ms); err != nil {
		return wrap("migrate", err)
	} else if done {
		s.warnIfNewer(ctx, newest, len(ms))
		return nil
	}
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, getLockSQL, migrationLock, migrationLockWait).Scan(&got); err != nil {
		return wrap("migrate: lock", err)
	}
	if !got.Valid || got.Int64 != 1 {
		return fmt.Errorf("mysql: migrate: another instance held the migration lock for %d s: %w", migrationLockWait, errors.New("lock wait timed out"))
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), releaseLockSQL, migrationLock) //nolint:errcheck // the lock ends with the connection anyway
	if _, err := conn.ExecContext(ctx, createMigrationsTableSQL); err != nil {
		return wrap("migrate", err)
	}
	for _, m := range ms {
		var applied int
		var complete bool
		err := conn.QueryRowContext(ctx, migrationStateSQL, m.version).Scan(&applied, &complete)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return wrap("migrate", err)
		}
		if complete {
			continue
		}
		for i := applied; i < len(m.statements); i++ {
			if _, err := conn.ExecContext(ctx, m.statements[i]); err != nil {
				return wrap(fmt.Sprintf("migration %s, statement %d", m.name, i+1), err)
			}
			done := i+1 == len(m.statements)
			if _, err := conn.ExecContext(ctx, recordMigrationSQL, m.version, m.name, i+1, done); err != nil {
				return wrap("migrate", err)
			}
		}
		s.log.InfoContext(ctx, "mysql: applied migration", "migration", m.name)
	}
	var newest int
	if err := conn.QueryRowContext(ctx, migrationNewestSQL).Scan(&newest); err != nil {
		return wrap("migrate", err)
	}
	s.warnIfNewer(ctx, newest, len(ms))
	return nil
}

// warnIfNewer logs at Warn when the database records a migration newer
// than this build knows.
func (s *Store) warnIfNewer(ctx context.Context, newest, known int) {
	if newest > known {
		s.log.WarnContext(ctx, "mysql: database schema is newer than this build",
			"database_version", newest, "known_version", known)
	}
}

// completeMigrationsSQL lists the migrations recorded complete.
const completeMigrationsSQL = `SELECT version FROM schema_migrations WHERE complete`

// erNoSuchTable is ER_NO_SUCH_TABLE: a database never migrated.
const erNoSuchTable = 1146

// migrated reports whether the database records every migration of ms
// complete (and maybe newer ones, of a newer build), and the newest version
// it records complete, reading only.
func migrated(ctx context.Context, conn *sql.Conn, ms []migration) (done bool, newest int, err error) {
	rows, err := conn.QueryContext(ctx, completeMigrationsSQL)
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) && myErr.Number == erNoSuchTable {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	defer rows.Close()
	have := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return false, 0, err
		}
		have[v] = true
		newest = max(newest, v)
	}
	if err := rows.Err(); err != nil {
		return false, 0, err
	}
	for _, m := range ms {
		if !have[m.version] {
			return false, newest, nil
		}
	}
	return true, newest, nil
}
