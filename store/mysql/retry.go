package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/internal/retry"
)

// Every statement and transaction of the store runs through [Store.run] or
// [Store.inTx], which retry it when that is safe:
//
//   - A deadlock (1213) rolled the transaction back, and a lock wait
//     timeout (1205) the statement (the store then rolls the transaction
//     back): it runs again, up to maxAttempts times in all, after a
//     jittered, growing pause. Past that the error matches
//     store.ErrUnavailable.
//   - A lost connection: a read runs again once, on another connection. A
//     write runs again once only when the failure proves that nothing
//     reached the server (no connection could be had, the driver found the
//     connection dead before writing, or the server refused the
//     statement), and a transaction runs again once when the failure came
//     before its COMMIT was sent (the server rolls back a transaction whose
//     connection is lost).
//
// When the outcome of a write cannot be known (its statement or COMMIT was
// sent and the connection broke before the answer came), the call returns an
// error that matches store.ErrUnavailable, as the database could not be used,
// and also says that the write may have been applied (errOutcomeUnknown): the
// store's writes are safe to retry (see store.ErrUnavailable).

// Retry bounds.
const (
	maxAttempts = 20
	backoffBase = 500 * time.Microsecond
	backoffCap  = 50 * time.Millisecond
)

// querier is what a statement runs on: a connection of the pool or a
// transaction.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// access says whether a call changes the database.
type access bool

const (
	reads  access = false
	writes access = true
)

// read runs fn, which only reads, on a connection of the pool.
func (s *Store) read(ctx context.Context, op string, fn func(q querier) error) error {
	return s.run(ctx, op, reads, fn)
}

// write runs fn, which runs one statement that writes (committed on its
// own), on a connection of the pool.
func (s *Store) write(ctx context.Context, op string, fn func(q querier) error) error {
	return s.run(ctx, op, writes, fn)
}

// retryPolicy is the store's retry policy (see package retry), on the
// driver's errors as this package reads them.
var retryPolicy = retry.Policy{
	MaxAttempts: maxAttempts, Base: backoffBase, Cap: backoffCap,
	Errors: retry.Errors{Transient: transient, Lost: connectionLost, NotSent: notSent, Unknown: outcomeUnknown,
		InDoubt: inDoubt, Wrap: wrap},
}

// run runs fn on a connection of the pool, retrying as described above. fn
// must not keep state across calls: it may run several times.
func (s *Store) run(ctx context.Context, op string, a access, fn func(q querier) error) error {
	return retryPolicy.Do(ctx, op, func() (error, bool) { return s.once(ctx, fn), a == writes })
}

// once acquires a connection, runs fn on it and releases it.
func (s *Store) once(ctx context.Context, fn func(q querier) error) error {
	conn, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return fn(conn)
}

// inTx runs fn in a transaction and commits it if fn returns nil, retrying
// as described above; it returns the error translated for op. fn must not
// keep state across calls: it may run several times.
func (s *Store) inTx(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	return retryPolicy.Do(ctx, op, func() (error, bool) { return s.txOnce(ctx, fn) })
}

// txOnce runs fn in one transaction. committing reports that the error came
// from the COMMIT.
func (s *Store) txOnce(ctx context.Context, fn func(tx *sql.Tx) error) (err error, committing bool) {
	conn, err := s.acquire(ctx)
	if err != nil {
		return err, false
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err, false
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err, false
	}
	return tx.Commit(), true
}

// acquire returns a connection of the pool, waiting at most
// Options.AcquireTimeout for one.
func (s *Store) acquire(ctx context.Context) (*sql.Conn, error) {
	return retry.Acquire(ctx, s.acquireTimeout, s.closed.Load, errClosed, s.db.Conn)
}

// pause sleeps before attempt+1 and reports whether ctx is still live
// (retry.Policy.Pause).
func (s *Store) pause(ctx context.Context, attempt int) bool {
	return retryPolicy.Pause(ctx, attempt)
}

// outcomeUnknown reports whether err, the error of a statement that writes
// or of a COMMIT, leaves unknown whether it was applied: the connection
// broke after the statement was sent and before the server answered. An
// error the server reported means that the statement failed.
func outcomeUnknown(err error) bool {
	return connectionLost(err) && !notSent(err)
}

// errOutcomeUnknown marks the error of a write whose statement or COMMIT
// reached the server before the connection broke.
var errOutcomeUnknown = errors.New("the connection failed after the write was sent; it may or may not have been applied")

// inDoubt returns the error of a write whose outcome is unknown.
func inDoubt(op string, err error) error {
	return fmt.Errorf("mysql: %s: %w: %w: %w", op, store.ErrUnavailable, errOutcomeUnknown, err)
}
