// Package sqlite is Latchkey's reference store: an implementation of
// [store.Store] on SQLite through zombiezen.com/go/sqlite, a low-level API
// (connections, cached prepared statements, a connection pool) on
// modernc.org/sqlite, a pure-Go build of SQLite (no cgo). Every statement
// of the store, reads, writes, migrations and the change version, goes
// through it; there is no database/sql.
//
// # Usage
//
//	st, err := sqlite.Open(ctx, "latchkey-data/latchkey.db", nil)
//	if err != nil {
//		return err
//	}
//	defer st.Close()
//
// Open creates the file if needed and applies the embedded migrations. It
// creates no project: callers create the projects they serve.
//
// For a host application's own tests, the path ":memory:" opens a private,
// empty in-memory database that lives as long as the Store:
//
//	st, err := sqlite.Open(ctx, ":memory:", nil)
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
// Its capability methods (ListContactsVersioned) check their own arguments.
//
// # Durability and sharing
//
// A file database runs in WAL mode with synchronous=FULL, foreign keys on
// and a busy timeout, set on every connection. A write that returned nil has
// been committed and synced to disk. Several processes may open one file at
// once (a server and the command line tool): write transactions begin with
// BEGIN IMMEDIATE, so writers of different processes queue on the database
// lock for up to [Options.BusyTimeout] instead of failing, and every read
// starts a fresh snapshot, so a revocation committed by one process is seen by
// the next read of every other. Within one process writes go through a single
// connection and reads through a pool of up to [Options.MaxOpenConns]
// read-only connections, each opened when a read finds every open one
// taken. Every connection is used by one goroutine at a
// time and opened without SQLite's connection mutex (see conns.go).
//
// A database that cannot be used gives errors matching
// [store.ErrUnavailable]: a lock held past the busy timeout (SQLITE_BUSY,
// SQLITE_LOCKED), a full disk (SQLITE_FULL), an I/O error (SQLITE_IOERR),
// a file that cannot be opened (SQLITE_CANTOPEN), no memory
// (SQLITE_NOMEM). A write transaction that meets one is rolled back, so such
// a write changed nothing.
//
// # Change signal
//
// [Store.ChangeVersion] implements [store.ChangeVersioner], which lets a
// caller (the token verifier) keep records while nothing was committed. A
// file database answers from PRAGMA data_version, which SQLite changes
// whenever another connection, of this process (the writer) or of another
// process, has committed. Each call reads it on the read-only connection it
// takes from the pool; while that value is unchanged since the connection's
// previous call, the call returns what that call returned. After a commit,
// each connection's next call reads the value of one more read-only
// connection, opened at Open, pinned and used for nothing else, so that
// every value comes from one counter and calls with no commit between them
// agree. It reads no table, and concurrent calls wait for each other only
// after a commit. A ":memory:" database, which has one connection and no
// other handle, counts its own write transactions instead.
//
// [Store.WatchRevocations] implements [store.RevocationWatcher] on the same
// version: while at least one caller waits, one goroutine reads it every
// 50 ms and wakes the waiters when it changes; a revocation of the Store
// itself wakes them at once (see watch.go).
//
// [Store.CheckWritable] implements [store.WritableChecker]: a BEGIN
// IMMEDIATE rolled back at once on the writer connection, which fails with
// store.ErrUnavailable while another process holds the write lock past the
// busy timeout or the file cannot be written.
//
// # Group commit
//
// With synchronous=FULL each commit waits for the disk. Small writes of
// concurrent callers (a refresh rotation, a new user, a throttle count) are
// therefore committed together: one transaction, each caller's work in its
// own savepoint, so one caller's error undoes only its own work, and one sync
// for all. Every caller returns only after that commit, so a nil error still
// means the write is durable. A lone caller runs in a transaction of its own.
// The bulk path, CreateContacts, always runs alone.
//
// # Revocation feed
//
// Each project's feed is ordered by (revoked_at, id). Like contacts, a
// project remembers the newest position its feed has ever had
// (projects.revocation_top_at, _id); a new item is placed after it, its time
// raised by whole microseconds only when needed, in the write transaction of
// the revocation, so an item is never added before one a reader has seen
// (floor.go, revocations.go).
//
// # Schema
//
// Migrations are numbered SQL files embedded in the binary
// (migrations/0001_init.sql, ...). Open applies those not yet recorded in the
// schema_migrations table, each in its own transaction; two processes opening
// a new file at once apply each migration exactly once. Set
// [Options.NoMigrate] to apply them yourself with [Store.Migrate].
//
// Times are stored as INTEGER microseconds since the Unix epoch, UTC, so they
// round-trip exactly at the microsecond precision the store contract states
// and compare correctly in SQL. Ids are TEXT compared byte by byte (SQLite's
// BINARY collation). Contacts are clustered on (project_id, pos), where pos
// is a BLOB that sorts exactly as (created_at, id): created_at as 8 bytes
// big-endian with the sign bit flipped, then the id's bytes. A page is a seek
// to pos > cursor and a forward scan with no test per row, so it costs the
// same at any depth (migrations/0003_contact_pos.sql).
package sqlite
