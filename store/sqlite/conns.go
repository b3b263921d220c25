package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// The store's connections, all opened through zombiezen.com/go/sqlite on
// modernc.org/sqlite. Every connection is opened SQLITE_OPEN_NOMUTEX: it is
// used by one goroutine at a time (the writer by the group-commit leader,
// readers through their pool), so SQLite needs no connection mutex.
//
// A file database has:
//
//   - one writer connection (per Store, so per process), which switches the
//     file to WAL and runs every write transaction (see group.go);
//   - a pool of read-only connections for single-statement reads; each
//     statement is its own read transaction, so every read sees every write
//     committed before it began, by any handle;
//   - one read-only connection for the change version (see version.go).
//
// A ":memory:" database is one connection, which does everything: a second
// connection would open a second, empty database.

// errClosed is the error of a call after Close.
var errClosed = errors.New("sqlite: store closed")

// connConfig is what every connection of a Store is set up with.
type connConfig struct {
	busy time.Duration // the busy timeout, at least a millisecond
}

// openConn opens one connection to uri and applies the settings every
// connection has: a busy timeout, foreign keys on, synchronous=FULL, and
// query_only on a reader.
func (cc connConfig) openConn(uri string, flags sqlite.OpenFlags, readOnly bool) (*sqlite.Conn, error) {
	conn, err := sqlite.OpenConn(uri, flags) // zombiezen opens every connection without SQLite's own mutex
	if err != nil {
		return nil, err
	}
	if err := cc.setUp(conn, readOnly); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

// setUp applies the per-connection settings to conn.
func (cc connConfig) setUp(conn *sqlite.Conn, readOnly bool) error {
	conn.SetBusyTimeout(cc.busy)
	pragmas := []string{"PRAGMA foreign_keys = ON", "PRAGMA synchronous = FULL"}
	if readOnly {
		pragmas = append(pragmas, "PRAGMA query_only = ON")
	}
	for _, p := range pragmas {
		if err := sqlitex.ExecuteTransient(conn, p, nil); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}

// writerPragmas are the settings of a file database's writer connection,
// beyond those of every connection.
var writerPragmas = []string{
	// The bulk contact path touches a large index; a 64 MiB page cache for
	// the one writer connection keeps it in memory.
	"PRAGMA cache_size = -65536",
	// Statement journals (kept for a statement that changes several rows
	// inside a transaction, so that it can be undone alone) stay in memory
	// instead of temporary files.
	"PRAGMA temp_store = MEMORY",
	// After a checkpoint, a WAL grown large (a bulk insert) is cut back to
	// 64 MiB instead of keeping its size on disk.
	"PRAGMA journal_size_limit = 67108864",
}

// openWriter opens the writer connection of the database file at uri,
// creating the file if needed, and switches it to WAL. Switching a new file
// to WAL needs an exclusive lock and SQLite does not always wait for it with
// the busy handler, so when several processes open a new file at once
// openWriter retries on SQLITE_BUSY for up to the busy timeout.
func (cc connConfig) openWriter(ctx context.Context, uri string) (*sqlite.Conn, error) {
	conn, err := cc.openConn(uri, sqlite.OpenReadWrite|sqlite.OpenCreate|sqlite.OpenURI, false)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*sqlite.Conn, error) {
		_ = conn.Close()
		return nil, err
	}
	deadline := time.Now().Add(cc.busy)
	wait := time.Millisecond
	for {
		err := sqlitex.ExecuteTransient(conn, "PRAGMA journal_mode = WAL", nil)
		if err == nil {
			break
		}
		if sqlite.ErrCode(err).ToPrimary() != sqlite.ResultBusy || time.Now().After(deadline) {
			return fail(err)
		}
		select {
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
	for _, p := range writerPragmas {
		if err := sqlitex.ExecuteTransient(conn, p, nil); err != nil {
			return fail(fmt.Errorf("%s: %w", p, err))
		}
	}
	return conn, nil
}

// fileURI returns the SQLite URI of the database file at the absolute path
// abs.
func fileURI(abs string) string {
	return "file:" + escapePath(filepath.ToSlash(abs))
}

// escapePath escapes the characters that would end or corrupt the path part
// of an SQLite URI filename.
func escapePath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '%', '?', '#':
			fmt.Fprintf(&b, "%%%02x", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// connPool hands out connections, each to one caller at a time: the
// readers of a file database, its writer (a pool of one), and the one
// connection of a ":memory:" database, which serves reads and writes.
//
// It is a buffered channel of idle connections. A pool made by newConnPool
// has all its connections from the start; one made by newOpeningPool opens
// them as callers need them: a caller that finds none idle opens another
// while fewer than the pool's size are open. A caller that finds none idle
// and can open none waits for one to be given back, for its context to end
// or for Close. (Each new connection reads the database's schema on its
// first statement, a cost paid only by connections some caller needed.)
// Statements are not interrupted when a context ends mid-statement: every
// read of the store is a short, index-bounded statement, and a write must
// not be cut short inside a group commit (see group.go). (sqlitex.Pool
// interrupts them; it does so by starting a goroutine on every Take, which
// cost more than a page of contacts gains from it, in the store's
// benchmarks.)
type connPool struct {
	idle   chan *sqlite.Conn
	closed chan struct{}
	// open opens one more connection; nil for a pool made by newConnPool.
	open func() (*sqlite.Conn, error)

	mu     sync.Mutex
	opened int  // connections open (idle or taken); at most cap(idle)
	done   bool // Close has begun; no connection is opened from then on
}

// newConnPool returns a pool of conns, which it owns from then on.
func newConnPool(conns ...*sqlite.Conn) *connPool {
	p := &connPool{idle: make(chan *sqlite.Conn, len(conns)), opened: len(conns), closed: make(chan struct{})}
	for _, c := range conns {
		p.idle <- c
	}
	return p
}

// newOpeningPool returns a pool of at most size connections, none open
// yet, that opens each with open when a caller needs it.
func newOpeningPool(size int, open func() (*sqlite.Conn, error)) *connPool {
	return &connPool{idle: make(chan *sqlite.Conn, size), open: open, closed: make(chan struct{})}
}

// take returns a connection for the caller's sole use until put, or an
// error when ctx ends first, the pool is closed, or opening a connection
// fails.
func (p *connPool) take(ctx context.Context) (*sqlite.Conn, error) {
	select {
	case <-p.closed:
		return nil, errClosed
	default:
	}
	// An idle connection is taken without waiting, and without asking ctx
	// for its Done channel, which a request's context makes on first use.
	select {
	case c := <-p.idle:
		return c, nil
	default:
	}
	if p.open != nil {
		if c, ok, err := p.openOne(); ok {
			return c, err
		}
	}
	select {
	case c := <-p.idle:
		return c, nil
	case <-p.closed:
		return nil, errClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// openOne opens one more connection when fewer than the pool's size are
// open and Close has not begun; ok reports whether it tried. It holds mu
// while it opens, so close counts every connection an open gave a caller
// and none that failed to open. (Opens are few: at most the pool's size
// in its life.)
func (p *connPool) openOne() (c *sqlite.Conn, ok bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done || p.opened == cap(p.idle) {
		return nil, false, nil
	}
	if c, err = p.open(); err != nil {
		return nil, true, err
	}
	p.opened++
	return c, true, nil
}

// put gives back a connection that take returned, with no statement
// running.
func (p *connPool) put(conn *sqlite.Conn) { p.idle <- conn }

// close waits for every open connection to be given back and closes it;
// take fails from then on.
func (p *connPool) close() error {
	p.mu.Lock()
	p.done = true
	n := p.opened
	p.mu.Unlock()
	close(p.closed)
	var err error
	for range n {
		err = errors.Join(err, (<-p.idle).Close())
	}
	return err
}
