package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"zombiezen.com/go/sqlite"

	"github.com/latchkey-dev/latchkey/store"
)

// Compile-time check that *Store offers the optional change signal.
var _ store.ChangeVersioner = (*Store)(nil)

const dataVersionSQL = `PRAGMA data_version`

// versioner implements ChangeVersion.
//
// A file database answers with PRAGMA data_version, read on one dedicated
// read-only connection that is opened at Open, kept for the life of the
// Store and never used for anything else. SQLite changes the value a
// connection reads whenever another connection (of this process, such as
// the Store's own writer connection, or of another process) has committed
// since that connection's previous read; the dedicated connection never
// writes, so every commit counts. The pragma reads only the WAL index
// header: no table, no page of the database, and the statement is reset
// after each read, so the connection holds no snapshot.
//
// data_version is 32 bits wide; wraps are counted in epoch so that values
// never repeat. The connection is never replaced (a new one would start
// counting again): if it fails, ChangeVersion keeps failing and callers read
// the store instead.
//
// A ":memory:" database has one connection, which is also the writer, and no
// other handle: data_version would not see its commits. It answers with
// commits instead, a counter bumped after every write transaction.
type versioner struct {
	mu    sync.Mutex
	conn  *sqlite.Conn // nil for ":memory:"
	stmt  *sqlite.Stmt // dataVersionSQL prepared on conn
	last  uint32
	epoch uint64
	seen  bool

	commits atomic.Uint64 // ":memory:" only
	closed  atomic.Bool
}

// openVersioner opens the dedicated connection of the database file at uri.
func (cc connConfig) openVersioner(uri string) (*versioner, error) {
	conn, err := cc.openConn(uri, sqlite.OpenReadWrite|sqlite.OpenURI, true)
	if err != nil {
		return nil, err
	}
	stmt, err := conn.Prepare(dataVersionSQL)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	return &versioner{conn: conn, stmt: stmt}, nil
}

// read returns the connection's data_version.
func (v *versioner) read() (int64, error) {
	ok, err := v.stmt.Step()
	if err != nil {
		return 0, err
	}
	n := v.stmt.ColumnInt64(0)
	if err := v.stmt.Reset(); err != nil {
		return 0, err
	}
	if !ok {
		return 0, errors.New("data_version returned no row")
	}
	return n, nil
}

// committed notes a finished write transaction (committed or not: counting
// one too many only costs a caller a read).
func (v *versioner) committed() {
	if v.conn == nil {
		v.commits.Add(1)
	}
}

func (v *versioner) close() error {
	v.closed.Store(true)
	if v.conn == nil {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.conn.Close()
}

// ChangeVersion returns the database's change version, following the
// contract of store.ChangeVersioner: the value differs from every earlier
// value of this Store whenever any handle on the database, in any process,
// committed a write after the earlier call returned, and equal values mean
// no commit in between. It reads no table (a file database answers from
// PRAGMA data_version on a dedicated connection; see versioner).
func (s *Store) ChangeVersion(ctx context.Context) (uint64, error) {
	v := s.version
	if v.closed.Load() {
		return 0, fmt.Errorf("sqlite: change version: %w", errClosed)
	}
	if v.conn == nil {
		return v.commits.Load(), nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("sqlite: change version: %w", err)
	}
	if v.closed.Load() {
		return 0, fmt.Errorf("sqlite: change version: %w", errClosed)
	}
	dv, err := v.read()
	if err != nil {
		return 0, wrap("change version", err)
	}
	cur := uint32(dv)
	if v.seen && cur < v.last {
		v.epoch++
	}
	v.last, v.seen = cur, true
	return v.epoch<<32 | uint64(cur), nil
}
