package sqlite

import (
	"context"
	"errors"
	"sync"

	"zombiezen.com/go/sqlite"
)

// Group commit.
//
// With synchronous=FULL every commit waits for the disk to sync the WAL, so
// one connection committing small transactions one by one manages no more
// commits a second than the disk manages syncs. Small writes therefore go
// through writeTx, which runs the transactions of concurrent
// callers together: one BEGIN IMMEDIATE, each caller's work inside its own
// SAVEPOINT (rolled back alone when it fails), one COMMIT and one sync for
// all. A caller hears its result only after that COMMIT, so a nil error still
// means a durable write. A lone caller runs alone in a plain transaction.
//
// The first caller to find no batch running leads: it takes the queue, runs
// it as one transaction and answers everyone in it, then hands the lead to
// the first caller that queued meanwhile, so no caller serves others for
// long.

// maxGroup bounds the callers one transaction serves.
const maxGroup = 128

// groupReq is one caller's transaction waiting in the group queue.
type groupReq struct {
	ctx context.Context
	fn  func(t *wtx) error
	// wake is closed when the request has run (done is true, err is set)
	// or when its caller is to lead the next batch (done is false).
	wake chan struct{}
	done bool
	err  error
}

// committer is the group queue of one Store.
type committer struct {
	mu      sync.Mutex
	queue   []*groupReq
	leading bool
}

// The statements of write transactions. Every write transaction begins
// with BEGIN IMMEDIATE, which takes the database's write lock at once: two
// processes never deadlock upgrading read locks, and a writer of another
// process waits for up to the busy timeout. Each request of a batch runs in
// a savepoint of its own.
const (
	beginSQL      = `BEGIN IMMEDIATE`
	commitSQL     = `COMMIT`
	rollbackSQL   = `ROLLBACK`
	savepointSQL  = `SAVEPOINT req`
	releaseSQL    = `RELEASE req`
	rollbackToSQL = `ROLLBACK TO req`
)

// wtx is a write transaction on the writer connection. fn of writeTx and
// inTx must use it only until it returns.
type wtx struct {
	conn *sqlite.Conn
	// revoked is set when the transaction adds a revocation (see
	// addRevocation), so that its commit wakes the watchers.
	revoked bool
}

// exec runs a statement that returns no rows (see execSQL) and returns how
// many rows it changed.
func (t *wtx) exec(query string, args ...any) (int, error) {
	return execSQL(t.conn, query, args...)
}

// queryRow runs a single-row read (see queryRow) in the transaction.
func (t *wtx) queryRow(query string, scan func(*sqlite.Stmt) error, args ...any) error {
	return queryRow(t.conn, query, scan, args...)
}

// isSet reports whether the first column of query's one row is not NULL
// (a revocation, retirement or disabling time), or returns errNoRows when
// there is no row.
func (t *wtx) isSet(query string, args ...any) (bool, error) {
	set := false
	err := t.queryRow(query, func(st *sqlite.Stmt) error {
		set = !st.ColumnIsNull(0)
		return nil
	}, args...)
	return set, err
}

// commitAnyway wraps an error a transaction returns after changes that must
// be kept (a replayed refresh token revokes its family).
type commitAnyway struct{ err error }

func (c commitAnyway) Error() string { return c.err.Error() }
func (c commitAnyway) Unwrap() error { return c.err }

// inTx runs fn in a write transaction of its own; most writes use writeTx,
// which may share one. It commits when fn returns nil or a commitAnyway
// error, and rolls back otherwise. It returns fn's error (unwrapped from
// commitAnyway) or the error that kept the transaction from committing, in
// which case nothing of it stands.
func (s *Store) inTx(ctx context.Context, fn func(t *wtx) error) error {
	conn, err := s.writer.take(ctx)
	if err != nil {
		return err
	}
	defer s.writer.put(conn)
	defer s.version.committed()
	if _, err := execSQL(conn, beginSQL); err != nil {
		endTx(conn)
		return err
	}
	t := &wtx{conn: conn}
	ferr := fn(t)
	var keep commitAnyway
	if ferr != nil && !errors.As(ferr, &keep) {
		endTx(conn)
		return ferr
	}
	if err := commit(conn); err != nil {
		return err
	}
	if t.revoked {
		s.watch.revoked()
	}
	if ferr != nil {
		return keep.err
	}
	return nil
}

// commit commits the transaction open on conn, or rolls it back when the
// commit fails, so that either all of it stands or none.
func commit(conn *sqlite.Conn) error {
	if _, err := execSQL(conn, commitSQL); err != nil {
		endTx(conn)
		return err
	}
	return nil
}

// endTx rolls back whatever transaction is still open on conn. SQLite may
// already have rolled it back itself (after an I/O error, a full disk); then
// there is nothing to do.
func endTx(conn *sqlite.Conn) {
	if !conn.AutocommitEnabled() {
		_, _ = execSQL(conn, rollbackSQL)
	}
}

// writeTx runs fn in a write transaction shared with concurrent callers (see
// Group commit above). fn's changes are kept when it returns nil or a
// commitAnyway error and undone otherwise; writeTx returns fn's error
// (unwrapped from commitAnyway), or the error that kept the transaction from
// committing. fn must only use t, and must not hold on to it.
func (s *Store) writeTx(ctx context.Context, fn func(t *wtx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &groupReq{ctx: ctx, fn: fn, wake: make(chan struct{})}
	c := &s.group
	c.mu.Lock()
	c.queue = append(c.queue, r)
	if c.leading {
		c.mu.Unlock()
		<-r.wake
		if r.done {
			return r.err
		}
		c.mu.Lock() // promoted: lead the next batch
	} else {
		c.leading = true
	}
	n := min(len(c.queue), maxGroup)
	batch := c.queue[:n:n]
	c.queue = c.queue[n:]
	c.mu.Unlock()

	s.runGroup(batch)

	c.mu.Lock()
	if len(c.queue) > 0 {
		next := c.queue[0]
		close(next.wake) // done is false: it leads
	} else {
		c.leading = false
		c.queue = nil
	}
	c.mu.Unlock()
	return r.err
}

// runGroup runs batch as one transaction and answers each request, waking
// every one but the caller's (the leader reads its own result).
func (s *Store) runGroup(batch []*groupReq) {
	errs := s.execGroup(batch)
	for i, r := range batch {
		r.err, r.done = errs[i], true
	}
	for _, r := range batch[1:] {
		close(r.wake)
	}
	// batch[0] is the leader: the first request queued when it took the
	// lead, which is its own (a promoted leader is the queue's head).
}

// execGroup runs the batch and returns each request's error.
func (s *Store) execGroup(batch []*groupReq) []error {
	errs := make([]error, len(batch))
	all := func(err error) []error {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	if len(batch) == 1 {
		errs[0] = s.inTx(batch[0].ctx, batch[0].fn)
		return errs
	}
	s.groups.Add(1)
	// The batch must not fail because one caller gave up: the writer is
	// taken without a context, and each request's context is checked
	// before it starts instead.
	conn, err := s.writer.take(context.Background())
	if err != nil {
		return all(err)
	}
	defer s.writer.put(conn)
	defer s.version.committed()
	if _, err := execSQL(conn, beginSQL); err != nil {
		endTx(conn)
		return all(err)
	}
	t := &wtx{conn: conn}
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if _, err := t.exec(savepointSQL); err != nil {
			endTx(conn)
			return all(err)
		}
		ferr := r.fn(t)
		var keep commitAnyway
		switch {
		case ferr == nil:
		case errors.As(ferr, &keep):
			ferr = keep.err
		default:
			if _, err := t.exec(rollbackToSQL); err != nil {
				// SQLite may have rolled back the whole transaction
				// (an I/O error, a full disk): nothing of the batch
				// stands.
				endTx(conn)
				return all(errors.Join(ferr, err))
			}
		}
		if _, err := t.exec(releaseSQL); err != nil {
			endTx(conn)
			return all(err)
		}
		errs[i] = ferr
	}
	if err := commit(conn); err != nil {
		return all(err)
	}
	if t.revoked {
		s.watch.revoked()
	}
	return errs
}
