// Package postgres is a [store.Store] on PostgreSQL, through
// github.com/jackc/pgx/v5's connection pool. Several server instances on
// several machines may share one database: every rule of the store
// contract holds across them.
//
// # Usage
//
//	st, err := postgres.Open(ctx, "postgres://latchkey@db:5432/latchkey", nil)
//	if err != nil {
//		return err
//	}
//	defer st.Close()
//	err = st.CreateProject(ctx, store.Project{ID: store.DefaultProject, CreatedAt: time.Now()})
//
// # Schema and migrations
//
// The schema is a numbered, append-only list of migrations embedded in the
// package (migrations/0001_init.sql, ...). [Open] applies the missing ones,
// each in its own transaction with its row in schema_migrations, under a
// transaction-level advisory lock, so instances starting at once do not
// race. [Options].NoMigrate leaves migrating to an explicit [Store.Migrate].
//
// # Semantics
//
//   - Ids are text COLLATE "C" and compare byte by byte whatever the
//     database's collation. Rows are keyed by (project_id, id).
//   - Times are timestamptz: microsecond precision, returned in UTC.
//   - Emails are unique per project case-insensitively through a UNIQUE
//     constraint on the store.NormalizeEmail form, kept beside the email as
//     given.
//   - Tags are text[]; a user read back always has a non-nil slice.
//   - ListContacts is a keyset query, (created_at, id) > (cursor) ORDER BY
//     created_at, id LIMIT n+1, on the index (project_id, created_at, id),
//     never OFFSET. Contact inserts of one project are serialized by a row
//     lock on the project, which also keeps the greatest (created_at, id) the
//     project has had; a new contact is placed after it.
//   - RotateRefresh is one conditional UPDATE ... RETURNING, a
//     compare-and-swap that READ COMMITTED makes safe under concurrency,
//     followed only on failure by a read that classifies the call.
//   - Throttling counts with INSERT ... ON CONFLICT DO UPDATE in fixed
//     windows shared by every instance; ended windows are pruned as
//     failures are added.
//   - PostgreSQL errors are translated here: unique violations to
//     store.ErrConflict, foreign-key violations (an unknown project or user)
//     to store.ErrNotFound, data exceptions (invalid UTF-8, a NUL byte, a
//     time out of range) to store.ErrInvalid. Transactions that fail with a
//     serialization failure or deadlock are retried.
//
// Tests of this package, and of any package that needs a PostgreSQL
// database, get a fresh one from package pgtest.
package postgres
