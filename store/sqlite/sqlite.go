package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // Registers the "sqlite" database/sql driver.

	"github.com/latchkey-dev/latchkey/store"
)

// Compile-time check that *Store keeps the whole store contract.
var _ store.Store = (*Store)(nil)

// MemoryPath is the path that opens a private in-memory database.
const MemoryPath = ":memory:"

// DefaultBusyTimeout is how long a statement waits for a lock held by another
// connection or process when Options.BusyTimeout is zero.
const DefaultBusyTimeout = 5 * time.Second

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
	// process before failing. Zero means DefaultBusyTimeout.
	BusyTimeout time.Duration
	// MaxOpenConns is the size of the pool of read-only connections of a
	// file database, and of the pool of raw read-only connections that
	// serve ListContacts (rawread.go); each is opened as needed. Writes
	// always use one more, dedicated connection, and ChangeVersion another.
	// Zero means max(4, GOMAXPROCS). It is ignored for ":memory:", which
	// uses exactly one connection.
	MaxOpenConns int
}

// Store is a store.Store kept in one SQLite database. It is safe for
// concurrent use, and several Stores (in one or several processes) may
// share one database file.
type Store struct {
	// read serves single-statement reads; write serves every write. For
	// ":memory:" they are the same one-connection pool.
	read, write *sql.DB
	rstmts      *stmtCache
	wstmts      *stmtCache
	logger      *slog.Logger
	closeOnce   sync.Once
	closeErr    error
	group       committer
	// version answers ChangeVersion (see version.go).
	version *versioner
	// raw serves ListContacts on a file database (see rawread.go); nil
	// for ":memory:".
	raw *rawPool
	// txPrepares counts statements prepared inside a transaction because
	// they were not warmed (tests check that hot paths never do).
	txPrepares atomic.Int64
	// groups counts transactions run for more than one caller.
	groups atomic.Int64
	// adds counts AddFailure calls, to prune expired throttle windows
	// every so often.
	adds atomic.Uint64
}

// Open opens (creating it if needed) the SQLite database at path and, unless
// opts.NoMigrate is set, applies the migrations it lacks. The path ":memory:"
// opens a private, empty in-memory database pinned to one connection, which
// lives until Close; it suits a host application's tests.
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
	busy := opts.BusyTimeout
	if busy == 0 {
		busy = DefaultBusyTimeout
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	s := &Store{logger: logger}

	if path == MemoryPath {
		db, err := sql.Open("sqlite", memoryDSN(busy))
		if err != nil {
			return nil, fmt.Errorf("sqlite: open: %w", err)
		}
		// Each connection to ":memory:" is its own database: keep exactly
		// one, forever.
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
		s.read, s.write = db, db
		s.rstmts = newStmtCache(db)
		s.wstmts = s.rstmts
		s.version = &versioner{}
	} else {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
		w, err := sql.Open("sqlite", fileDSN(abs, busy, false))
		if err != nil {
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
		// One writer connection per process: writers of this process queue
		// in Go rather than in SQLite's busy handler, which sleeps.
		w.SetMaxOpenConns(1)
		w.SetMaxIdleConns(1)
		w.SetConnMaxLifetime(0)
		w.SetConnMaxIdleTime(0)
		// Connect the writer first: it switches the file to WAL, which the
		// read-only connections cannot do.
		if err := connect(ctx, w, busy); err != nil {
			_ = w.Close()
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
		r, err := sql.Open("sqlite", fileDSN(abs, busy, true))
		if err != nil {
			_ = w.Close()
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
		n := opts.MaxOpenConns
		if n == 0 {
			n = max(4, runtime.GOMAXPROCS(0))
		}
		r.SetMaxOpenConns(n)
		r.SetMaxIdleConns(n)
		r.SetConnMaxLifetime(0)
		r.SetConnMaxIdleTime(0)
		ver, err := openVersioner(abs, busy)
		if err != nil {
			_ = r.Close()
			_ = w.Close()
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
		s.read, s.write = r, w
		s.raw = newRawPool(abs, busy, n)
		s.rstmts = newStmtCache(r)
		s.wstmts = newStmtCache(w)
		s.version = ver
	}

	if !opts.NoMigrate {
		if err := s.Migrate(ctx); err != nil {
			_ = s.Close()
			return nil, err
		}
	} else {
		// The schema may be missing until the caller migrates; Migrate
		// warms the statements then, and until it does statements are
		// prepared on first use.
		_ = s.warm(ctx)
	}
	return s, nil
}

// readQueries are the statements of the read pool prepared at Open, and
// txQueries those of the write connection, including every statement used
// inside a write transaction.
var (
	readQueries = []string{
		getProjectSQL, getUserSQL, getUserByEmailSQL, getAPIKeySQL, getSigningKeySQL,
		activeSigningKeySQL, listContactsFirstSQL, listContactsAfterSQL, getFamilySQL, failuresSQL,
	}
	txQueries = []string{
		savepointSQL, releaseSQL, rollbackToSQL,
		createProjectSQL,
		createUserSQL, setPasswordSQL,
		contactTopSQL, setContactTopSQL, insertContactSQL, fullContactBatchSQL, deleteContactSQL,
		createAPIKeySQL, revokeAPIKeySQL, touchAPIKeySQL,
		createSigningKeySQL, signingKeyStateSQL, activeKeyIDSQL, retireSigningKeySQL,
		userExistsSQL, createFamilySQL, getFamilySQL, rotateFamilySQL, revokeFamilySQL,
		addFailureSQL, clearFailuresSQL, pruneThrottleSQL,
	}
)

// warm prepares the statements of readQueries and txQueries.
func (s *Store) warm(ctx context.Context) error {
	if err := s.wstmts.warm(ctx, txQueries); err != nil {
		return fmt.Errorf("sqlite: prepare statements: %w", err)
	}
	if err := s.rstmts.warm(ctx, readQueries); err != nil {
		return fmt.Errorf("sqlite: prepare statements: %w", err)
	}
	return nil
}

// connect opens db's first connection. Switching a new file to WAL needs an
// exclusive lock and SQLite does not always wait for it with the busy
// handler, so when several processes open a new file at once connect
// retries on SQLITE_BUSY for up to the busy timeout.
func connect(ctx context.Context, db *sql.DB, busy time.Duration) error {
	deadline := time.Now().Add(busy)
	wait := time.Millisecond
	for {
		err := db.PingContext(ctx)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// pragmas returns the _pragma DSN parameters every connection runs.
func pragmas(busy time.Duration) url.Values {
	v := url.Values{}
	v.Add("_pragma", "busy_timeout("+strconv.FormatInt(max(1, busy.Milliseconds()), 10)+")")
	v.Add("_pragma", "foreign_keys(1)")
	// Immediate: a write transaction takes the write lock when it begins,
	// so two processes never deadlock upgrading read locks (SQLITE_BUSY);
	// the later one waits for up to the busy timeout.
	v.Set("_txlock", "immediate")
	return v
}

func memoryDSN(busy time.Duration) string {
	return MemoryPath + "?" + pragmas(busy).Encode()
}

// fileDSN returns the DSN of the database file at the absolute path abs. The
// read-only pool additionally sets query_only.
func fileDSN(abs string, busy time.Duration, readOnly bool) string {
	v := pragmas(busy)
	v.Add("_pragma", "synchronous(full)")
	if readOnly {
		v.Add("_pragma", "query_only(1)")
	} else {
		v.Add("_pragma", "journal_mode(wal)")
		// The bulk contact path touches a large index; a 64 MiB page cache
		// for the one writer connection keeps it in memory.
		v.Add("_pragma", "cache_size(-65536)")
		// Statement journals (kept for each multi-row INSERT so that a
		// failing statement can be undone alone) stay in memory instead of
		// temporary files: this halves the bulk path's system calls.
		v.Add("_pragma", "temp_store(memory)")
		// After a checkpoint, a WAL grown large (a bulk insert) is cut back
		// to 64 MiB instead of keeping its size on disk.
		v.Add("_pragma", "journal_size_limit(67108864)")
	}
	return "file:" + escapePath(filepath.ToSlash(abs)) + "?" + v.Encode()
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

// Close closes the store's connections; a ":memory:" database is gone
// afterwards. Calls after Close fail. Closing twice returns the first
// Close's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.raw != nil {
			s.raw.close()
		}
		s.rstmts.close()
		if s.wstmts != s.rstmts {
			s.wstmts.close()
		}
		err := errors.Join(s.version.close(), s.read.Close())
		if s.write != s.read {
			err = errors.Join(err, s.write.Close())
		}
		if err != nil {
			s.closeErr = fmt.Errorf("sqlite: close: %w", err)
		}
	})
	return s.closeErr
}

// stmtCache holds the statements prepared on one pool, by query text. A
// statement is prepared the first time it is used and reused afterwards;
// database/sql prepares it on each connection of the pool as needed.
type stmtCache struct {
	db *sql.DB
	m  sync.Map // string -> *sql.Stmt
	mu sync.Mutex
}

func newStmtCache(db *sql.DB) *stmtCache { return &stmtCache{db: db} }

// lookup returns the statement prepared for query, if any.
func (c *stmtCache) lookup(query string) (*sql.Stmt, bool) {
	st, ok := c.m.Load(query)
	if !ok {
		return nil, false
	}
	return st.(*sql.Stmt), true
}

// warm prepares queries, so that hot paths and write transactions find them
// prepared. It must not run inside a transaction of the pool.
func (c *stmtCache) warm(ctx context.Context, queries []string) error {
	for _, q := range queries {
		if _, err := c.get(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// get returns the prepared statement for query, preparing it on the pool if
// needed. It must not be called inside a transaction of a one-connection
// pool, which would wait for itself; transactions use wtx.stmt.
func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := c.m.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.m.Store(query, st)
	return st, nil
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m.Range(func(k, v any) bool {
		_ = v.(*sql.Stmt).Close()
		c.m.Delete(k)
		return true
	})
}

// queryRow runs a single-row read on the read pool.
func (s *Store) queryRow(ctx context.Context, query string, args ...any) (*sql.Row, error) {
	st, err := s.rstmts.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryRowContext(ctx, args...), nil
}

// query runs a read on the read pool.
func (s *Store) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := s.rstmts.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// exec runs a single-statement write in a (group) write transaction.
func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := s.writeTx(ctx, func(t *wtx) error {
		var err error
		res, err = t.exec(query, args...)
		return err
	})
	return res, err
}

// wtx is a write transaction begun with BEGIN IMMEDIATE on the write
// connection. Its methods use the statements prepared on that connection.
type wtx struct {
	ctx      context.Context
	tx       *sql.Tx
	cache    *stmtCache
	prepares *atomic.Int64
}

// stmt returns query's statement for use in the transaction: the pool's
// prepared one when Open warmed it (see txQueries), else one prepared on the
// transaction's connection for this transaction only. It never asks the pool
// for a connection, which the transaction holds.
func (t *wtx) stmt(query string) (*sql.Stmt, error) {
	if st, ok := t.cache.lookup(query); ok {
		return t.tx.StmtContext(t.ctx, st), nil
	}
	t.prepares.Add(1)
	return t.tx.PrepareContext(t.ctx, query)
}

func (t *wtx) exec(query string, args ...any) (sql.Result, error) {
	st, err := t.stmt(query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(t.ctx, args...)
}

func (t *wtx) queryRow(query string, args ...any) (*sql.Row, error) {
	st, err := t.stmt(query)
	if err != nil {
		return nil, err
	}
	return st.QueryRowContext(t.ctx, args...), nil
}

// commitAnyway wraps an error a transaction returns after changes that must
// be kept (a replayed refresh token revokes its family).
type commitAnyway struct{ err error }

func (c commitAnyway) Error() string { return c.err.Error() }
func (c commitAnyway) Unwrap() error { return c.err }

// inTx runs fn in a write transaction of its own; most writes use writeTx,
// which may share one. It commits when fn returns nil or a
// commitAnyway error, and rolls back otherwise. It returns fn's error
// (unwrapped from commitAnyway) or the commit's.
func (s *Store) inTx(ctx context.Context, fn func(t *wtx) error) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer s.version.committed()
	ferr := fn(&wtx{ctx: ctx, tx: tx, cache: s.wstmts, prepares: &s.txPrepares})
	var keep commitAnyway
	if ferr != nil && !errors.As(ferr, &keep) {
		_ = tx.Rollback()
		return ferr
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if ferr != nil {
		return keep.err
	}
	return nil
}
