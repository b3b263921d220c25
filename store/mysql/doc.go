// Package mysql is a [store.Store] on MySQL 8.0+ or MariaDB 10.11+, through
// database/sql and github.com/go-sql-driver/mysql. Several server
// instances on several machines may share one database: every rule of the
// store contract holds across them. The Store also implements
// [store.RevocationWatcher] (by polling), [store.CheckedContactLister]
// (a page of contacts and a token's records in one statement) and
// [store.WritableChecker] (see Writability).
//
// # Usage
//
//	st, err := mysql.Open(ctx, "mysql://latchkey:secret@db:3306/latchkey", nil)
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
// # Connection
//
// [Open] takes mysql://user:password@host:port/database?param=value (port
// 3306 by default; user and password percent-encoded; the parameters are
// the driver's DSN parameters, such as tls=true or timeout=5s) or a DSN of
// the driver. Whatever it says, every connection gets the options the
// store's contract needs:
//
//   - parseTime and loc=UTC, and the session's time_zone '+00:00': times
//     travel and are kept as UTC;
//   - sql_mode 'TRADITIONAL' (strict: a value that does not fit is an
//     error, never silently truncated);
//   - utf8mb4 with the utf8mb4_bin collation for the connection;
//   - READ COMMITTED transactions (tx_isolation on MariaDB,
//     transaction_isolation on MySQL), as PostgreSQL's default;
//   - interpolateParams: arguments are escaped into the statement text by
//     the driver (safe with utf8mb4), so a statement is one round trip
//     instead of prepare, execute and close; the one exception is the read
//     of every authenticated list (ListContactsChecked), a few texts (one
//     per number of parts of each kind, padded to powers of two; at most
//     64) prepared once per connection (see prepared.go);
//   - no multiStatements: every statement, migrations included, is sent
//     on its own;
//   - clientFoundRows (an UPDATE reports the rows it matched, so updating a
//     value to itself is not taken for a missing row), rejectReadOnly (a
//     connection that finds the server read-only is dropped, as after a
//     failover), innodb_lock_wait_timeout from [Options] and, on MariaDB,
//     idle_transaction_timeout (the server ends a session left idle in a
//     transaction by a client it lost, which frees its locks).
//
// # Durability
//
// Open reads innodb_flush_log_at_trx_commit and refuses a server where it
// is not 1 (a commit the server acknowledged could be lost in a crash:
// a revoked key valid again), unless [Options].AllowNonDurable is set. It
// logs a warning when the binary log is on and sync_binlog is not 1. Every
// table is InnoDB.
//
// # Schema and migrations
//
// The schema is a numbered, append-only list of migrations embedded in the
// package (migrations/0001_init.sql, ...). MySQL commits each DDL statement
// on its own, so [Store.Migrate] applies a migration one statement at a
// time and records each applied statement in schema_migrations: a migration
// interrupted half-way resumes after its last applied statement. It holds a
// named lock (GET_LOCK) meanwhile, so instances starting at once do not
// race. A database that records every migration complete is left alone,
// without the lock or any DDL, so a store opens on a read-only server or
// session. [Options].NoMigrate leaves migrating to an explicit call.
//
// # Semantics
//
//   - Ids are VARBINARY and compare byte by byte ("ct_B" sorts before
//     "ct_a"), whatever the server's default collation. Rows are keyed by
//     (project_id, id).
//   - Times are DATETIME(6): microsecond precision, returned in UTC.
//   - Emails are unique per project case-insensitively through a UNIQUE
//     key on the store.NormalizeEmail form (VARBINARY), kept beside the
//     email as given. ListUsers matches a prefix as a byte range of it.
//   - Tags are a JSON array in a TEXT column.
//   - The lists (contacts, users, revocations, audit entries) are keyset
//     queries on an index per project, never OFFSET: a page costs the same
//     at any depth. Contacts are the table's primary key (project_id, pos),
//     pos being created_at as 8 sortable bytes followed by the id, so a
//     page is the one range pos > cursor of adjacent rows; the other lists
//     spell the cursor t > ? OR (t = ? AND id > ?) (MariaDB plans no index
//     range for a row comparison).
//   - Contacts and the revocation feed place a new item after the greatest
//     position the project's list has had, kept on the project row, which
//     the inserting transaction locks (SELECT ... FOR UPDATE): the items of
//     one project commit in position order, whichever instance adds them.
//   - RotateRefresh reads the family with its user, then runs one
//     conditional UPDATE, the compare-and-swap: InnoDB evaluates it on the
//     newest committed row under the row's lock, so of concurrent calls on
//     any instances exactly one moves the generation. The 10-second (or
//     configured) reuse window is decided on the family's rotated_at.
//     DisableUser locks the user row before revoking its families;
//     CreateRefreshFamily inserts under a shared lock on an enabled user
//     whose password hash is still the one the sign-in checked.
//   - RollAPIKey and RevokeAPIKey lock the key's row first (SELECT ...
//     FOR UPDATE, a locking read of the newest committed row), then the
//     project row: of concurrent rolls of one key on any instances exactly
//     one makes a successor, and the others find the key rolled. A roll's
//     scheduled revocation (and a session's end, ScheduleSessionEnd) waits
//     in scheduled_revocations; the first write
//     to the project's feed, or listing of it, at or after its time places
//     it in the feed at that time, under the project row's lock.
//   - Throttling counts with INSERT ... ON DUPLICATE KEY UPDATE in fixed
//     windows shared by every instance.
//   - Nothing is cached across calls: an API key, a signing key, a session
//     or a console session is read from the database at every call, so a
//     revocation committed by any instance is refused from the next
//     request.
//
// # Instead of LISTEN/NOTIFY
//
// MySQL has no notifications. [Store.WatchRevocations] polls: while anybody
// waits, one goroutine per Store reads the sum of the projects' revocation
// counts (one covering-index scan of a row per project; a roll or a
// session end that schedules a revocation raises it too) every
// [Options].WatchInterval, 50 ms by default, and wakes the waiters when it
// changes; a long-polling revocation feed thus sees a revocation made by
// any instance within about one interval. It costs one small query per
// interval per instance while feed requests wait, and nothing otherwise.
//
// The store does not implement [store.ChangeVersioner] (nor
// [store.VersionedContactLister]): MySQL offers no cheap, exact "has any
// commit happened" signal to every session. A token verifier therefore
// reads its records from the database at each request; the authenticated
// contacts list still costs one statement, through
// [Store.ListContactsChecked].
//
// That statement serves every call that waits for it: at most four run at
// once per Store, and the calls that come while all four are busy are read
// together by the next one, a UNION ALL with one part per distinct record
// and per distinct page they ask for. Each call began before the statement
// that serves it, so it sees every write committed before it began, in one
// read view. Under load, calls share a round trip and the server's fixed
// work per statement, and calls naming one record (every token signed by
// one signing key) or asking for one page read it once; a lone call is one
// statement of its own, as before.
//
// # Writability
//
// [Store.CheckWritable] reads, in one statement, whether the server is
// read-only (read_only; on MySQL also super_read_only), InnoDB was started
// read-only, or the session's transactions are read-only, and answers
// store.ErrUnavailable if any is. A read-only server counts as unwritable
// even for an account whose privileges would write past read_only.
//
// The conformance suite's RunUnwritable runs on a second store whose
// sessions are read-only (tx_read_only=1, or transaction_read_only=1 on
// MySQL, as a URL parameter): MariaDB has no read-only database (MySQL's
// ALTER DATABASE ... READ ONLY is 8.0.22+), and the server's read_only is
// shared by every database on it, so the tests cannot set it.
//
// # Errors and retries
//
// Server errors are translated here: duplicate keys (1062) to
// store.ErrConflict, foreign-key violations (1452, an unknown project or
// user) to store.ErrNotFound, values that do not fit (1292, 1366, 1406) to
// store.ErrInvalid, and a database that cannot be used now (a lost or
// refused connection, too many connections, a read-only server (1290,
// 1792), a server shutting down, no connection within
// Options.AcquireTimeout) to store.ErrUnavailable.
//
// A deadlock (1213) or lock wait timeout (1205) runs the statement or
// transaction again, a bounded number of times with a jittered pause, and
// is store.ErrUnavailable past that. A read is also run again once on
// another connection when its connection fails; a write only when nothing
// of it reached the server, or, for a transaction, when it failed before
// its COMMIT was sent. A write whose statement or COMMIT was sent when the
// connection broke (its commit is in doubt) returns an error that matches
// store.ErrUnavailable and says that it may have been applied.
//
// Tests of this package, and of any package that needs a MySQL database,
// get a fresh one from package mytest.
package mysql
