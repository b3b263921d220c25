package sqlite

import (
	"context"
	"errors"
	"sync"
)

// Group commit.
//
// With synchronous=FULL every commit waits for the disk to sync the WAL,
// which takes about a millisecond here, so one connection committing small
// transactions one by one manages about a thousand a second. Small writes
// therefore go through writeTx, which runs the transactions of concurrent
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

// Savepoint statements around each request of a batch.
const (
	savepointSQL  = `SAVEPOINT req`
	releaseSQL    = `RELEASE req`
	rollbackToSQL = `ROLLBACK TO req`
)

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
	// The batch must not fail because one caller gave up: cancelling a
	// statement inside a transaction rolls the whole transaction back.
	// Each request's context is checked before it starts instead.
	ctx := context.WithoutCancel(batch[0].ctx)
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return all(err)
	}
	defer s.version.committed()
	t := &wtx{ctx: ctx, tx: tx, cache: s.wstmts, prepares: &s.txPrepares}
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if _, err := t.exec(savepointSQL); err != nil {
			_ = tx.Rollback()
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
				_ = tx.Rollback()
				return all(errors.Join(ferr, err))
			}
		}
		if _, err := t.exec(releaseSQL); err != nil {
			_ = tx.Rollback()
			return all(err)
		}
		errs[i] = ferr
	}
	if err := tx.Commit(); err != nil {
		return all(err)
	}
	return errs
}
