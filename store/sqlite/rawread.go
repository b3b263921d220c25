package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The hottest read, a page of contacts, bypasses database/sql. The
// modernc.org/sqlite driver opens every connection SQLITE_OPEN_FULLMUTEX, so
// each call into SQLite (three or more per column of each row) takes and
// releases the connection's mutex, and it boxes every value in an interface
// that database/sql then converts by reflection. For a page of 25 contacts
// that was about half of the server's CPU time per request, in a profile of
// the load benchmark (examples/bench).
//
// A rawConn is a read-only connection opened through SQLite's C API itself
// (modernc.org/sqlite/lib, the library the driver wraps) with
// SQLITE_OPEN_NOMUTEX: the rawPool hands each connection to one goroutine at
// a time, so SQLite needs no connection mutex. Rows are read with
// sqlite3_column_* straight into one Go buffer per page. Everything else
// about the connection matches the database/sql read pool: the same file,
// the same library and VFS (and so the same locking), busy_timeout and
// query_only.

// rawConn is one read-only connection and its prepared statements. It is
// not safe for concurrent use.
type rawConn struct {
	tls   *libc.TLS
	db    uintptr
	stmts map[string]uintptr
	// buf is C memory holding the text and blob parameters of the
	// statement being run (SQLite reads them in place: SQLITE_STATIC).
	buf    uintptr
	bufCap int
}

// openRawConn opens the database file at the absolute path abs read-only.
func openRawConn(abs string, busy time.Duration) (_ *rawConn, err error) {
	c := &rawConn{tls: libc.NewTLS(), stmts: map[string]uintptr{}}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	name, err := libc.CString("file:" + escapePath(abs))
	if err != nil {
		return nil, err
	}
	defer libc.Xfree(c.tls, name)
	pdb, err := c.alloc(int(unsafe.Sizeof(uintptr(0))))
	if err != nil {
		return nil, err
	}
	defer libc.Xfree(c.tls, pdb)
	rc := sqlite3.Xsqlite3_open_v2(c.tls, name, pdb,
		sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_NOMUTEX|sqlite3.SQLITE_OPEN_URI, 0)
	c.db = readPtr(pdb)
	if rc != sqlite3.SQLITE_OK {
		return nil, c.error(rc)
	}
	sqlite3.Xsqlite3_extended_result_codes(c.tls, c.db, 1)
	if rc := sqlite3.Xsqlite3_busy_timeout(c.tls, c.db, int32(max(1, busy.Milliseconds()))); rc != sqlite3.SQLITE_OK {
		return nil, c.error(rc)
	}
	if err := c.exec("PRAGMA query_only = 1"); err != nil {
		return nil, err
	}
	return c, nil
}

// readPtr returns the pointer stored in the C memory at p.
func readPtr(p uintptr) uintptr {
	return *(*uintptr)(unsafe.Pointer(&libc.GoBytes(p, int(unsafe.Sizeof(uintptr(0))))[0]))
}

// alloc returns n bytes of C memory.
func (c *rawConn) alloc(n int) (uintptr, error) {
	p := libc.Xmalloc(c.tls, libc.Tsize_t(n))
	if p == 0 {
		return 0, fmt.Errorf("sqlite: cannot allocate %d bytes", n)
	}
	return p, nil
}

// exec runs one statement that returns no rows.
func (c *rawConn) exec(query string) error {
	q, err := libc.CString(query)
	if err != nil {
		return err
	}
	defer libc.Xfree(c.tls, q)
	if rc := sqlite3.Xsqlite3_exec(c.tls, c.db, q, 0, 0, 0); rc != sqlite3.SQLITE_OK {
		return c.error(rc)
	}
	return nil
}

// stmt returns query prepared on the connection, preparing it the first
// time.
func (c *rawConn) stmt(query string) (uintptr, error) {
	if st, ok := c.stmts[query]; ok {
		return st, nil
	}
	q, err := libc.CString(query)
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(c.tls, q)
	pst, err := c.alloc(int(unsafe.Sizeof(uintptr(0))))
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(c.tls, pst)
	rc := sqlite3.Xsqlite3_prepare_v3(c.tls, c.db, q, -1, sqlite3.SQLITE_PREPARE_PERSISTENT, pst, 0)
	if rc != sqlite3.SQLITE_OK {
		return 0, c.error(rc)
	}
	st := readPtr(pst)
	c.stmts[query] = st
	return st, nil
}

// rawArg is a statement parameter: text, a blob or an integer.
type rawArg struct {
	kind argKind
	text string
	blob []byte
	n    int64
}

type argKind uint8

const (
	argInt argKind = iota
	argText
	argBlob
)

func textArg(s string) rawArg { return rawArg{kind: argText, text: s} }
func blobArg(b []byte) rawArg { return rawArg{kind: argBlob, blob: b} }
func intArg(n int64) rawArg   { return rawArg{n: n} }

// bind binds args to st's parameters 1..len(args) before its first step.
// Text and blobs are copied into the connection's buffer, which must not
// change until st is reset; the caller resets st (reset) after use,
// whatever happens.
func (c *rawConn) bind(st uintptr, args []rawArg) error {
	need := 0
	for _, a := range args {
		need += len(a.text) + len(a.blob)
	}
	if need > c.bufCap {
		p, err := c.alloc(max(need, 256))
		if err != nil {
			return err
		}
		if c.buf != 0 {
			libc.Xfree(c.tls, c.buf)
		}
		c.buf, c.bufCap = p, max(need, 256)
	}
	buf := libc.GoBytes(c.buf, c.bufCap)
	off := 0
	for i, a := range args {
		var rc int32
		switch a.kind {
		case argText:
			n := copy(buf[off:], a.text)
			rc = sqlite3.Xsqlite3_bind_text(c.tls, st, int32(i+1), c.buf+uintptr(off), int32(n), 0)
			off += n
		case argBlob:
			n := copy(buf[off:], a.blob)
			rc = sqlite3.Xsqlite3_bind_blob(c.tls, st, int32(i+1), c.buf+uintptr(off), int32(n), 0)
			off += n
		default:
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, st, int32(i+1), a.n)
		}
		if rc != sqlite3.SQLITE_OK {
			return c.error(rc)
		}
	}
	return nil
}

// next steps st to its next row and reports whether there is one.
func (c *rawConn) next(st uintptr) (bool, error) {
	switch rc := sqlite3.Xsqlite3_step(c.tls, st); rc {
	case sqlite3.SQLITE_ROW:
		return true, nil
	case sqlite3.SQLITE_DONE:
		return false, nil
	default:
		return false, c.error(rc)
	}
}

// reset resets st, ending its read transaction.
func (c *rawConn) reset(st uintptr) {
	sqlite3.Xsqlite3_reset(c.tls, st)
}

// int64 returns column i of st's current row as an integer.
func (c *rawConn) int64(st uintptr, i int32) int64 {
	return sqlite3.Xsqlite3_column_int64(c.tls, st, i)
}

// appendText appends column i of st's current row, as text, to b.
func (c *rawConn) appendText(b []byte, st uintptr, i int32) ([]byte, error) {
	p := sqlite3.Xsqlite3_column_text(c.tls, st, i)
	return c.appendColumn(b, st, i, p)
}

// appendBlob appends column i of st's current row, as a blob, to b.
func (c *rawConn) appendBlob(b []byte, st uintptr, i int32) ([]byte, error) {
	p := sqlite3.Xsqlite3_column_blob(c.tls, st, i)
	return c.appendColumn(b, st, i, p)
}

// appendColumn appends the n bytes at p, column i's value as
// sqlite3_column_text or _blob returned it, to b.
func (c *rawConn) appendColumn(b []byte, st uintptr, i int32, p uintptr) ([]byte, error) {
	n := sqlite3.Xsqlite3_column_bytes(c.tls, st, i)
	if p == 0 {
		if rc := sqlite3.Xsqlite3_errcode(c.tls, c.db); rc == sqlite3.SQLITE_NOMEM {
			return b, c.error(rc)
		}
		return b, nil // NULL
	}
	return append(b, libc.GoBytes(p, int(n))...), nil
}

// rawError is an error code and message of SQLite.
type rawError struct {
	code int32
	msg  string
}

func (e *rawError) Error() string {
	return "sqlite: " + e.msg + " (" + strconv.Itoa(int(e.code)) + ")"
}

// error returns the connection's error for the result code rc.
func (c *rawConn) error(rc int32) error {
	msg := ""
	if c.db != 0 {
		msg = libc.GoString(sqlite3.Xsqlite3_errmsg(c.tls, c.db))
	}
	if msg == "" {
		msg = libc.GoString(sqlite3.Xsqlite3_errstr(c.tls, rc))
	}
	return &rawError{code: rc, msg: msg}
}

// close finalizes the statements and closes the connection.
func (c *rawConn) close() {
	for _, st := range c.stmts {
		sqlite3.Xsqlite3_finalize(c.tls, st)
	}
	clear(c.stmts)
	if c.db != 0 {
		sqlite3.Xsqlite3_close_v2(c.tls, c.db)
		c.db = 0
	}
	if c.buf != 0 {
		libc.Xfree(c.tls, c.buf)
		c.buf = 0
	}
	c.tls.Close()
}

// rawPool holds up to a fixed number of rawConns of one database file,
// opened as needed and kept open until close.
type rawPool struct {
	abs   string
	busy  time.Duration
	idle  chan *rawConn
	slots chan struct{} // one token per open connection

	mu     sync.Mutex
	closed bool
}

func newRawPool(abs string, busy time.Duration, size int) *rawPool {
	return &rawPool{abs: abs, busy: busy, idle: make(chan *rawConn, size), slots: make(chan struct{}, size)}
}

var errPoolClosed = errors.New("sqlite: store closed")

// get returns an idle connection, opens one if the pool is not full, or
// waits for one to be put back.
func (p *rawPool) get(ctx context.Context) (*rawConn, error) {
	select {
	case c := <-p.idle:
		return c, nil
	default:
	}
	select {
	case c := <-p.idle:
		return c, nil
	case p.slots <- struct{}{}:
		p.mu.Lock()
		closed := p.closed
		p.mu.Unlock()
		if closed {
			<-p.slots
			return nil, errPoolClosed
		}
		c, err := openRawConn(p.abs, p.busy)
		if err != nil {
			<-p.slots
			return nil, err
		}
		return c, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// put gives c back to the pool, or closes it if the pool is closed.
func (p *rawPool) put(c *rawConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.close()
		<-p.slots
		return
	}
	p.idle <- c // never blocks: there are at most cap(idle) connections
}

// close closes the idle connections; connections in use are closed when
// they are put back.
func (p *rawPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for {
		select {
		case c := <-p.idle:
			c.close()
			<-p.slots
		default:
			return
		}
	}
}
