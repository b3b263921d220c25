// Package sqlite is Latchkey's reference store: an implementation of
// [store.Store] on SQLite through modernc.org/sqlite, a pure-Go driver (no
// cgo).
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
// connection and reads through a pool of [Options.MaxOpenConns] read-only
// connections. ListContacts, the hottest read, and ChangeVersion use
// read-only connections of their own, opened through SQLite's C API without
// database/sql and without a connection mutex (see rawread.go); they see the
// same file through the same library and locks.
//
// # Change signal
//
// [Store.ChangeVersion] implements [store.ChangeVersioner], which lets a
// caller (the token verifier) keep records while nothing was committed. A
// file database answers from PRAGMA data_version on one more read-only
// connection, opened at Open, pinned and used for nothing else: SQLite
// changes the value whenever another connection, of this process (the writer)
// or of another process, has committed. It reads no table and costs about
// 2-3 µs. A ":memory:" database, which has one connection and no other
// handle, counts its own write transactions instead.
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
