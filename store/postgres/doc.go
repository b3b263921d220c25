// Package postgres is a [store.Store] on PostgreSQL, through
// github.com/jackc/pgx/v5's connection pool. Several server instances on
// several machines may share one database: every rule of the store
// contract holds across them. The Store also implements
// [store.RevocationWatcher] and [store.CheckedContactLister] (a page of
// contacts and a token's records in one statement).
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
// each in its own READ COMMITTED transaction with its row in
// schema_migrations, under a transaction-level advisory lock, so instances
// starting at once do not race. [Options].NoMigrate leaves migrating to an
// explicit [Store.Migrate].
//
// # Semantics
//
//   - Ids are text COLLATE "C" and compare byte by byte whatever the
//     database's collation. Rows are keyed by (project_id, id).
//   - Times are timestamptz: microsecond precision, returned in UTC.
//   - Emails are unique per project case-insensitively through a UNIQUE
//     constraint on the store.NormalizeEmail form, kept beside the email as
//     given. ListUsers matches a prefix as a byte range of that column, so
//     '%' and '_' are plain characters.
//   - Tags are text[]; a user read back always has a non-nil slice.
//   - The lists (contacts, users, revocations, audit entries) are keyset
//     queries, (time, id) > (cursor) ORDER BY time, id LIMIT n+1 (the audit
//     log newest first), on an index per project, never OFFSET.
//   - Contacts and the revocation feed place a new item after the greatest
//     position the project's list has had, kept on the project row and
//     raised by whole microseconds only when needed. The inserting
//     transaction locks that row, so the items of one project commit in
//     position order, whichever instance adds them: an item is never added
//     before one a reader has seen.
//   - RotateRefresh is one conditional UPDATE ... RETURNING, a
//     compare-and-swap that returns the family's user with it, followed
//     only on failure by a read that classifies the call. DisableUser
//     locks the user row before revoking its families;
//     CreateRefreshFamily inserts only under a lock on an enabled user,
//     and a rotation never passes a family DisableUser revoked: no session
//     of a disabled user stays live.
//   - The revoking writes add their feed item in the same transaction and
//     notify the channel latchkey_revocations; WatchRevocations listens on
//     it with a connection of its own while anybody waits.
//   - Throttling counts with INSERT ... ON CONFLICT DO UPDATE in fixed
//     windows shared by every instance; ended windows are pruned as
//     failures are added.
//
// # Errors, retries and isolation
//
// PostgreSQL errors are translated here: unique violations to
// store.ErrConflict, foreign-key violations (an unknown project or user) to
// store.ErrNotFound, data exceptions (invalid UTF-8, a NUL byte, a time out
// of range) to store.ErrInvalid, and a database that cannot be used now
// (connection failures, class 08, 57P01 to 57P03, class 53, no connection
// within Options.AcquireTimeout, retries exhausted) to store.ErrUnavailable.
//
// Every statement and transaction is run again, a bounded number of times
// with a jittered pause, when it fails with a serialization failure or a
// deadlock (40001, 40P01): the store works under READ COMMITTED (the
// PostgreSQL default) and under SERIALIZABLE, the isolation of the
// PostgreSQL-compatible distributed databases. A read is also run again once
// on another connection when its connection fails; a write only when nothing
// of it reached the server, or, for a transaction, when it failed before its
// COMMIT was sent. A write whose COMMIT was sent when the connection broke
// returns an error that does not match store.ErrUnavailable, since it may
// have been applied.
//
// The pool checks each idle connection before handing it out by peeking at
// its socket without blocking (a dropped connection has the server's
// farewell or its end waiting there), so that connections the server ended
// (a restart, a failover, pg_terminate_backend) are replaced without failing
// a call and without a round trip.
//
// The read every authenticated list makes (ListContactsChecked: the page
// and the token's records in one statement) is pipelined across callers:
// a few connections of the pool (Options.PipelineConns) each send every
// such read that is waiting as one batch, one round trip for all of them,
// so that under load the server and PostgreSQL spend a write, a read and a
// wake-up per batch rather than per request. Each statement still runs
// after its call began, so it sees every write committed before; a read
// that a failing neighbour in its batch kept from running is run again.
// The statement reads the token's records only when its snapshot is not the
// one the records kept from an earlier statement were read in (see
// keptRecords): equal snapshots see the same commits, so the records kept
// are the ones it would read. It needs PostgreSQL 13 or newer
// (pg_current_snapshot).
//
// Tests of this package, and of any package that needs a PostgreSQL
// database, get a fresh one from package pgtest.
package postgres
