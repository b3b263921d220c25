package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/latchkey-dev/latchkey/store"
)

// Compile-time check that *Store keeps the whole store contract.
var _ store.Store = (*Store)(nil)

// MemoryPath is the path that opens a private in-memory database.
const MemoryPath = ":memory:"

// DefaultBusyTimeout is how long a statement waits for a lock held by another
// connection or process when Options.BusyTimeout is zero.
const DefaultBusyTimeout = 5 * time.Second

// DefaultMaxOpenConns is the number of read-only connections of a file
// database when Options.MaxOpenConns is zero. A read that finds every
// reader taken waits for one, and under concurrent requests those waits
// cost more than the connections' memory (each keeps a page cache of what
// it read, emptied whenever another connection commits): enough readers
// that a server's concurrent requests rarely wait is the cheaper side.
const DefaultMaxOpenConns = 16

// Options tunes a Store. A nil *Options and every zero field mean the
// documented default.
type Options struct {
	// Logger receives the store's few log lines (migrations applied,
	// housekeeping failures). Nil means slog.Default().
	Logger *slog.Logger
	// NoMigrate stops Open from applying migrations; the caller then calls
	// Store.Migrate before using the store.
	NoMigrate bool
	// BusyTimeout is how long a statement waits for a lock held by another
	// process before failing with an error matching store.ErrUnavailable.
	// Zero means DefaultBusyTimeout.
	BusyTimeout time.Duration
	// MaxOpenConns is the most read-only connections of a file database;
	// each is opened when a read finds every open one taken (so a process
	// making one read at a time opens one). Writes always use one more,
	// dedicated connection, and ChangeVersion another. Zero means
	// DefaultMaxOpenConns. It is ignored for ":memory:", which uses exactly
	// one connection.
	MaxOpenConns int
}

// Store is a store.Store kept in one SQLite database. It is safe for
// concurrent use, and several Stores (in one or several processes) may
// share one database file.
type Store struct {
	// writer holds the connection that runs every write transaction;
	// readers the connections of reads. For ":memory:" they are one pool
	// of its one connection.
	writer, readers *connPool
	memory          bool
	busy            time.Duration // each connection's busy timeout
	logger          *slog.Logger
	closeOnce       sync.Once
	closeErr        error
	group           committer
	// version answers ChangeVersion (see version.go).
	version *versioner
	// watch answers WatchRevocations (see watch.go).
	watch *watcher
	// groups counts transactions run for more than one caller.
	groups atomic.Int64
	// adds counts AddFailure calls, to prune expired throttle windows
	// every so often.
	adds atomic.Uint64
}

// Open opens (creating it if needed) the SQLite database at path and, unless
// opts.NoMigrate is set, applies the migrations it lacks. A database file
// Open creates has mode 0600, whatever the directory's mode and the umask
// allow beyond it: it holds password hashes and sealed keys. SQLite gives
// its WAL and shared-memory files the database file's mode. The path ":memory:"
// opens a private, empty in-memory database on one connection, which lives
// until Close; it suits a host application's tests.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	if path == "" {
		return nil, fmt.Errorf("sqlite: open: empty path: %w", store.ErrInvalid)
	}
	if opts.BusyTimeout < 0 || opts.MaxOpenConns < 0 {
		return nil, fmt.Errorf("sqlite: open: negative option: %w", store.ErrInvalid)
	}
	cc := connConfig{busy: opts.BusyTimeout}
	if cc.busy == 0 {
		cc.busy = DefaultBusyTimeout
	}
	cc.busy = max(time.Millisecond, cc.busy) // SQLite counts whole milliseconds
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	s := &Store{logger: logger, busy: cc.busy}

	if path == MemoryPath {
		conn, err := cc.openConn(MemoryPath, sqlite.OpenReadWrite|sqlite.OpenCreate|sqlite.OpenMemory, false)
		if err != nil {
			return nil, wrap("open", err)
		}
		s.writer = newConnPool(conn)
		s.readers = s.writer
		s.memory = true
		s.version = &versioner{}
		s.watch = newWatcher(nil)
	} else {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
		if err := createPrivate(abs); err != nil {
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
		uri := fileURI(abs)
		// The writer first: it creates the file and switches it to WAL,
		// which the read-only connections cannot do.
		w, err := cc.openWriter(ctx, uri)
		if err != nil {
			return nil, wrap("open "+path, err)
		}
		ver, err := cc.openVersioner(uri)
		if err != nil {
			_ = w.Close()
			return nil, wrap("open "+path, err)
		}
		n := opts.MaxOpenConns
		if n == 0 {
			n = DefaultMaxOpenConns
		}
		s.writer = newConnPool(w)
		s.readers = newOpeningPool(n, func() (*sqlite.Conn, error) {
			return cc.openConn(uri, sqlite.OpenReadWrite|sqlite.OpenURI, true)
		})
		s.version = ver
		s.watch = newWatcher(func() (uint64, error) { return s.ChangeVersion(context.Background()) })
	}

	if !opts.NoMigrate {
		if err := s.Migrate(ctx); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Close closes the store's connections, after the calls using them have
// finished; a ":memory:" database is gone afterwards. Calls after Close
// fail. Closing twice returns the first Close's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.watch.close()
		err := s.version.close()
		if s.readers != s.writer {
			err = errors.Join(err, s.readers.close())
		}
		err = errors.Join(err, s.writer.close())
		if err != nil {
			s.closeErr = fmt.Errorf("sqlite: close: %w", err)
		}
	})
	return s.closeErr
}

// read runs fn with a connection for reads. Each statement fn runs is a
// read transaction of its own.
func (s *Store) read(ctx context.Context, fn func(conn *sqlite.Conn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	conn, err := s.readers.take(ctx)
	if err != nil {
		return err
	}
	defer s.readers.put(conn)
	return fn(conn)
}

// readRow runs a single-row read (see queryRow) on a reader.
func (s *Store) readRow(ctx context.Context, query string, scan func(*sqlite.Stmt) error, args ...any) error {
	return s.read(ctx, func(conn *sqlite.Conn) error { return queryRow(conn, query, scan, args...) })
}

// readAll runs query (see queryRows) on a reader and returns its rows, each
// scanned by scan; no row is an empty, non-nil slice.
func readAll[T any](ctx context.Context, s *Store, query string, scan func(*sqlite.Stmt) (T, error), args ...any) ([]T, error) {
	items := []T{}
	err := s.read(ctx, func(conn *sqlite.Conn) error {
		return queryRows(conn, query, func(st *sqlite.Stmt) error {
			it, err := scan(st)
			if err != nil {
				return err
			}
			items = append(items, it)
			return nil
		}, args...)
	})
	return items, err
}

// exec runs a single-statement write in a (group) write transaction and
// returns how many rows it changed.
func (s *Store) exec(ctx context.Context, query string, args ...any) (int, error) {
	var n int
	err := s.writeTx(ctx, func(t *wtx) error {
		var err error
		n, err = t.exec(query, args...)
		return err
	})
	return n, err
}

// prune runs a DELETE of expired rows in a write transaction and returns
// how many rows it deleted.
func (s *Store) prune(ctx context.Context, op, query string, args ...any) (int, error) {
	n, err := s.exec(ctx, query, args...)
	if err != nil {
		return 0, wrap(op, err)
	}
	return n, nil
}

// mustAffect turns a write that changed no row into errNoRows, which wrap
// reports as store.ErrNotFound.
func mustAffect(n int, err error) error {
	if err == nil && n == 0 {
		return errNoRows
	}
	return err
}

// createPrivate creates path as an empty file of mode 0600 unless it exists
// (SQLite takes an empty file for a new database). SQLite would create it
// with mode 0644 less the umask, readable by every user who can reach the
// directory.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil
	case err != nil:
		return err
	}
	return f.Close()
}
