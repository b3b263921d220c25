// Package postgres is a [store.Store] on PostgreSQL, through
// github.com/jackc/pgx/v5's connection pool. Several server instances on
// several machines may share one database: every rule of the store
// contract holds across them. The Store also implements
// [store.RevocationWatcher], [store.CheckedContactLister] (a page of
// contacts and a token's records in one statement) and
// [store.WritableChecker] (one statement: not in recovery, not read-only).
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
// # Argument checks
//
// The Store assumes checked arguments, as a driver under a portable type
// does: the argument checks of the store contract and its rules that are
// not SQL are package store's (store.Checked, store.DecideRotation,
// store.HighWater). latchkey.New puts the Store behind store.Check; a host
// that calls its methods directly does the same:
//
//	var s store.Store = store.Check(st)
//
// Its capability methods (ListContactsChecked) check their own arguments.
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
//     CreateRefreshFamily inserts only under a lock on an enabled user
//     whose password hash is still the one the sign-in checked, and a
//     rotation never passes a family DisableUser revoked: no session of a
//     disabled user, and none started with a password changed since by a
//     reset, stays live.
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
// (connection failures, class 08, 57P01 to 57P03, class 53, 25006 on a
// database that cannot take writes now, no connection within
// Options.AcquireTimeout, retries exhausted, an in-doubt commit) to
// store.ErrUnavailable.
//
// Every statement and transaction is run again, a bounded number of times
// with a jittered pause, when it fails with a serialization failure or a
// deadlock (40001, 40P01): the store works under READ COMMITTED (the
// PostgreSQL default) and under SERIALIZABLE, the isolation of the
// PostgreSQL-compatible distributed databases. A read is also run again once
// on another connection when its connection fails; a write only when nothing
// of it reached the server, or, for a transaction, when it failed before its
// COMMIT was sent. A write whose statement or COMMIT was sent when the
// connection broke (its commit is in doubt) returns an error that matches
// store.ErrUnavailable and says that it may have been applied.
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
// # Failover
//
// What the store keeps in memory about the database's state is bound to
// the database's identity: its system_identifier, the timeline WAL is
// written on, and the server's start time, read by every new connection of
// the pool into a setting of its session (latchkey.db_identity; see
// identity.go). A snapshot's text names a state only within one server's
// history (a promoted standby can repeat its old primary's), so the kept
// records are compared, in the statement itself, by the identity of the
// session the statement runs on together with the snapshot. A connection
// opened while the server is in recovery, or whose identity cannot be read
// (the functions revoked, a PostgreSQL-compatible database without them),
// has none: its statements always read the records, and nothing they read
// is kept (the failure to read an identity is logged once). When the store
// sees a connection or a statement of another identity than the last (a
// failover, a restart), it drops every kept record, and the revocation
// watcher drops its connection, wakes its waiters and listens again. The
// positions of the lists (contacts, the revocation feed) are read from the
// database in the transaction that places an item, never kept.
//
// A database that cannot take writes now (a standby in recovery, a
// database or session set read-only: SQLSTATE 25006) fails every write with
// store.ErrUnavailable, and [Store.CheckWritable] tells a health check so
// without writing. The revocation watcher's own connection has its own
// timeouts (Options.WatchConnectTimeout and WatchListenTimeout, 5 seconds
// each by default); a server that refuses LISTEN (a hot standby) leaves it
// polling, which it logs once.
//
// Tests of this package, and of any package that needs a PostgreSQL
// database, get a fresh one from package pgtest.
package postgres
