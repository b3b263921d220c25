package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/latchkey-dev/latchkey/store"
)

// Compile-time check that *Store offers the optional change signal.
var _ store.ChangeVersioner = (*Store)(nil)

const dataVersionSQL = `PRAGMA data_version`

// versioner implements ChangeVersion.
//
// A file database answers with PRAGMA data_version, read on one dedicated
// read-only connection that is opened at Open, pinned for the life of the
// Store and never used for anything else. SQLite changes the value a
// connection reads whenever another connection (of this process, such as
// the Store's own writer connection, or of another process) has committed
// since that connection's previous read; the dedicated connection never
// writes, so every commit counts. The pragma reads only the WAL index
// header: no table, no page of the database.
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
	mu   sync.Mutex
	db   *sql.DB   // the dedicated pool of one connection; nil for ":memory:"
	conn *sql.Conn // pinned
	// stmt is dataVersionSQL prepared on conn's driver connection, used
	// only inside conn.Raw, under mu.
	stmt  driver.Stmt
	query driver.StmtQueryContext
	dest  []driver.Value
	raw   func(dc any) error // reads into dv; allocated once
	dv    int64
	last  uint32
	epoch uint64
	seen  bool

	commits atomic.Uint64 // ":memory:" only
	closed  atomic.Bool
}

// openVersioner opens the dedicated connection of a file database whose
// read-only DSN is dsn.
func openVersioner(ctx context.Context, dsn string) (*versioner, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	conn, err := db.Conn(ctx)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	v := &versioner{db: db, conn: conn, dest: make([]driver.Value, 1)}
	err = conn.Raw(func(dc any) error {
		p, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return fmt.Errorf("driver connection %T cannot prepare with a context", dc)
		}
		st, err := p.PrepareContext(ctx, dataVersionSQL)
		if err != nil {
			return err
		}
		q, ok := st.(driver.StmtQueryContext)
		if !ok {
			_ = st.Close()
			return fmt.Errorf("driver statement %T cannot query with a context", st)
		}
		v.stmt, v.query = st, q
		return nil
	})
	if err != nil {
		_ = conn.Close()
		_ = db.Close()
		return nil, err
	}
	// The driver's statement is used through Raw only, so database/sql
	// never uses the connection concurrently, and it costs no allocation
	// of database/sql's Rows per call.
	v.raw = func(any) error {
		// No context: the driver would watch a cancellable one with a
		// goroutine per call, and the pragma takes microseconds.
		rows, err := v.query.QueryContext(context.Background(), nil)
		if err != nil {
			return err
		}
		err = rows.Next(v.dest)
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		n, ok := v.dest[0].(int64)
		if !ok {
			return fmt.Errorf("data_version is %T", v.dest[0])
		}
		v.dv = n
		return nil
	}
	return v, nil
}

// committed notes a finished write transaction (committed or not: counting
// one too many only costs a caller a read).
func (v *versioner) committed() {
	if v.db == nil {
		v.commits.Add(1)
	}
}

func (v *versioner) close() error {
	v.closed.Store(true)
	if v.db == nil {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	err := v.conn.Raw(func(any) error { return v.stmt.Close() })
	return errors.Join(err, v.conn.Close(), v.db.Close())
}

// ChangeVersion returns the database's change version, following the
// contract of store.ChangeVersioner: the value differs from every earlier
// value of this Store whenever any handle on the database, in any process,
// committed a write after the earlier call returned, and equal values mean
// no commit in between. It reads no table (a file database answers from
// PRAGMA data_version on a dedicated connection; see the package
// documentation) and costs a few microseconds.
func (s *Store) ChangeVersion(ctx context.Context) (uint64, error) {
	v := s.version
	if v.closed.Load() {
		return 0, errors.New("sqlite: change version: store closed")
	}
	if v.db == nil {
		return v.commits.Load(), nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("sqlite: change version: %w", err)
	}
	if err := v.conn.Raw(v.raw); err != nil {
		return 0, fmt.Errorf("sqlite: change version: %w", err)
	}
	cur := uint32(v.dv)
	if v.seen && cur < v.last {
		v.epoch++
	}
	v.last, v.seen = cur, true
	return v.epoch<<32 | uint64(cur), nil
}
