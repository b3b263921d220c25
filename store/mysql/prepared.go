package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// The read every authenticated list makes (ListContactsChecked) runs as a
// server-side prepared statement: the server parses its text once per
// connection instead of at every request, and rows come back in the binary
// protocol (no text to parse). Its texts are few (one per number of parts
// of each kind in a batch; the page sizes are parameters), so each is
// prepared once per connection of the pool, by database/sql, which
// prepares a statement again on a connection that lacks it; past
// maxPrepared texts, a new one is sent as text instead, so that the
// server's prepared statements stay bounded. Every other statement is sent
// as text with its arguments interpolated by the driver (one round trip,
// and no statement left on the server to track).

// maxPrepared is how many statement texts a Store prepares at most.
const maxPrepared = 64

// stmtCache holds the store's prepared statements by text.
type stmtCache struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt // guarded by mu
}

// prepared returns the prepared statement of query, preparing it on first
// use, or nil when maxPrepared others are prepared already.
func (s *Store) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	s.stmts.mu.Lock()
	st, full := s.stmts.m[query], len(s.stmts.m) >= maxPrepared
	s.stmts.mu.Unlock()
	if st != nil || full {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s.stmts.mu.Lock()
	defer s.stmts.mu.Unlock()
	if old := s.stmts.m[query]; old != nil || len(s.stmts.m) >= maxPrepared {
		st.Close()
		return old, nil
	}
	if s.stmts.m == nil {
		s.stmts.m = map[string]*sql.Stmt{}
	}
	s.stmts.m[query] = st
	return st, nil
}

// closeStmts closes every prepared statement.
func (s *Store) closeStmts() {
	s.stmts.mu.Lock()
	defer s.stmts.mu.Unlock()
	for _, st := range s.stmts.m {
		st.Close()
	}
	s.stmts.m = nil
}

// queryPrepared runs query, which only reads, as a prepared statement (see
// maxPrepared) with args and calls each for every row, retrying as [Store.run] retries a
// read. Options.AcquireTimeout bounds the whole read (database/sql takes a
// connection for a prepared statement itself); past it the error matches
// store.ErrUnavailable. each must not keep state across calls.
func (s *Store) queryPrepared(ctx context.Context, op, query string, args []any, reset func(), each func(*sql.Rows) error) error {
	retried := false
	for n := 0; ; n++ {
		reset()
		err := s.queryPreparedOnce(ctx, query, args, each)
		if err == nil {
			return nil
		}
		switch {
		case ctx.Err() != nil:
		case transient(err) && n+1 < maxAttempts:
			if s.pause(ctx, n) {
				continue
			}
		case connectionLost(err) && !retried:
			retried = true
			continue
		}
		return wrap(op, err)
	}
}

func (s *Store) queryPreparedOnce(ctx context.Context, query string, args []any, each func(*sql.Rows) error) error {
	if s.closed.Load() {
		return errClosed
	}
	qctx := ctx
	if s.acquireTimeout > 0 {
		var cancel context.CancelFunc
		qctx, cancel = context.WithTimeout(ctx, s.acquireTimeout)
		defer cancel()
	}
	timedOut := func(err error) error {
		if ctx.Err() == nil && qctx.Err() != nil {
			return newAcquireError(fmt.Errorf("no answer within %s", s.acquireTimeout))
		}
		if s.closed.Load() {
			return errClosed
		}
		return err
	}
	st, err := s.prepared(qctx, query)
	if err != nil {
		return timedOut(err)
	}
	var rows *sql.Rows
	if st != nil {
		rows, err = st.QueryContext(qctx, args...)
	} else {
		rows, err = s.db.QueryContext(qctx, query, args...)
	}
	if err != nil {
		return timedOut(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return timedOut(err)
	}
	return nil
}
