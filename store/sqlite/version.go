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

// Compile-time checks that *Store offers the optional change signal, and
// the page of contacts read with it.
var (
	_ store.ChangeVersioner        = (*Store)(nil)
	_ store.VersionedContactLister = (*Store)(nil)
)

const dataVersionSQL = `PRAGMA data_version`

// versioner implements ChangeVersion.
//
// A file database answers with PRAGMA data_version, in two steps:
//
//   - The shared version is read on one dedicated read-only connection that
//     is opened at Open, kept for the life of the Store and never used for
//     anything else. SQLite changes the value a connection reads whenever
//     another connection (of this process, such as the Store's own writer
//     connection, or of another process) has committed since that
//     connection's previous read; the dedicated connection never writes, so
//     every commit counts. The pragma reads only the WAL index header: no
//     table, no page of the database, and the statement is reset after each
//     read, so the connection holds no snapshot. Reads of it are serialized
//     by mu.
//   - Each call first reads data_version on the read-only connection it
//     takes from the pool, which changes by the same rule. When that value
//     is the one the connection read at its previous call, nothing was
//     committed since that call's read began, and the shared version that
//     call returned (read after its own read of the connection) is still
//     current: it is returned without touching the dedicated connection.
//     Otherwise the call reads the shared version and notes both values for
//     the connection. So after a commit each reader goes to the dedicated
//     connection once; while nothing is committed, concurrent calls wait for
//     no one but the pool, and every value comes from the one dedicated
//     connection, so calls with no commit between them agree whichever
//     reader they took.
//
// data_version is 32 bits wide; wraps of the shared one are counted in epoch
// so that values never repeat. The dedicated connection is never replaced (a
// new one would start counting again): if it fails, ChangeVersion keeps
// failing and callers read the store instead.
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

	// readers holds, for each read-only connection of the pool (a
	// *sqlite.Conn), what it saw at its previous call (a *readerVersion).
	// An entry is added at a connection's first call and used only by the
	// caller holding its connection.
	readers sync.Map

	commits atomic.Uint64 // ":memory:" only
	closed  atomic.Bool
}

// readerVersion is what one read-only connection saw at its previous call of
// ChangeVersion: its own data_version and the shared version read after it.
type readerVersion struct {
	dv     int64
	shared uint64
	ok     bool // set by the first call
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

// stepDataVersion steps stmt, dataVersionSQL prepared on some connection, to
// its one row, and leaves it there.
func stepDataVersion(stmt *sqlite.Stmt) error {
	ok, err := stmt.Step()
	if err != nil {
		return err // Step has reset the statement
	}
	if !ok {
		return errors.Join(errors.New("data_version returned no row"), stmt.Reset())
	}
	return nil
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
// PRAGMA data_version on a reader and, after a commit, on a dedicated
// connection; see versioner).
func (s *Store) ChangeVersion(ctx context.Context) (uint64, error) {
	v := s.version
	if v.closed.Load() {
		return 0, fmt.Errorf("sqlite: change version: %w", errClosed)
	}
	if v.conn == nil {
		return v.commits.Load(), nil
	}
	var ver uint64
	err := s.read(ctx, func(conn *sqlite.Conn) error {
		dv, err := v.begin(conn)
		if err != nil {
			return err
		}
		ver, err = v.end(ctx, conn, dv)
		return err
	})
	if err != nil {
		return 0, wrap("change version", err)
	}
	return ver, nil
}

// begin reads the data_version of conn, a reader taken from the pool. The
// statement that read it is returned still open, holding conn's read
// transaction, so that statements run on conn before it is reset read in
// the same transaction; the caller resets it. For ":memory:" there is
// nothing to read: begin returns nil.
func (v *versioner) begin(conn *sqlite.Conn) (*sqlite.Stmt, error) {
	if v.conn == nil {
		return nil, nil
	}
	stmt, err := conn.Prepare(dataVersionSQL)
	if err != nil {
		return nil, err
	}
	if err := stepDataVersion(stmt); err != nil {
		return nil, err
	}
	return stmt, nil
}

// end resets dv, the statement begin returned for conn, and returns the
// change version of the call: the value conn's previous call returned when
// conn's data_version is unchanged since then, else the shared version.
func (v *versioner) end(ctx context.Context, conn *sqlite.Conn, dv *sqlite.Stmt) (uint64, error) {
	if v.conn == nil {
		return v.commits.Load(), nil
	}
	n := dv.ColumnInt64(0)
	if err := dv.Reset(); err != nil {
		return 0, err
	}
	e, ok := v.readers.Load(conn)
	if !ok {
		e, _ = v.readers.LoadOrStore(conn, &readerVersion{})
	}
	rv := e.(*readerVersion)
	if rv.ok && rv.dv == n {
		return rv.shared, nil
	}
	// The shared version is read after the reader's: it covers every
	// commit the reader's value does.
	ver, err := v.shared(ctx)
	if err != nil {
		return 0, err
	}
	*rv = readerVersion{dv: n, shared: ver, ok: true}
	return ver, nil
}

// shared reads the version of the dedicated connection.
func (v *versioner) shared(ctx context.Context) (uint64, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if v.closed.Load() {
		return 0, errClosed
	}
	if err := stepDataVersion(v.stmt); err != nil {
		return 0, err
	}
	cur := uint32(v.stmt.ColumnInt64(0))
	if err := v.stmt.Reset(); err != nil {
		return 0, err
	}
	if v.seen && cur < v.last {
		v.epoch++
	}
	v.last, v.seen = cur, true
	return v.epoch<<32 | uint64(cur), nil
}
