package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/internal/retry"
)

// Every statement and transaction of the store runs through [Store.run],
// [Store.readPipelined] or [Store.inTx], which retry it when that is safe:
//
//   - A serialization failure or deadlock (40001, 40P01) rolled the
//     statement or transaction back: it runs again, up to maxAttempts times
//     in all, after a jittered, growing pause. PostgreSQL under
//     SERIALIZABLE and the PostgreSQL-compatible distributed databases
//     return them under contention, for single statements too.
//   - A lost connection: a read runs again once, on another connection. A
//     write runs again once only when the failure proves that nothing
//     reached the server (no connection could be had, or pgconn failed
//     before writing), and a transaction runs again once when the failure
//     came before its COMMIT was sent (the server rolls back a transaction
//     whose connection is lost). A transaction's BEGIN bounds how long the
//     server keeps a session idle in it (see beginSQL), so that a retry
//     does not wait long for the rows its lost attempt locked.
//   - A pipelined read whose statements the server skipped (because another
//     read's statement in the same batch failed first) did not run:
//     it runs again, up to maxAttempts times in all, at once.
//
// When the outcome of a write cannot be known (its statement or COMMIT was
// sent and the connection broke before the answer came), the call returns an
// error that matches store.ErrUnavailable, as the database could not be used,
// and also says that the write may have been applied (errOutcomeUnknown).

// Retry bounds.
const (
	// maxAttempts bounds how often a statement or transaction that fails
	// with a serialization failure or deadlock is run, in all. Under
	// PostgreSQL's SERIALIZABLE, transactions that lock one hot row (a
	// project's contact or feed position) succeed one per round: every
	// waiter fails when the holder commits, because its snapshot is older
	// than the holder's change. A writer may lose many rounds in a row;
	// the bound is set so that eight writers on one project (the
	// conformance suite's contention cases) do not exhaust it, while the
	// pauses stay under about 1.2 s in all.
	maxAttempts = 30
	// backoffBase and backoffCap shape the pause before attempt n+1: a
	// random duration below min(backoffCap, backoffBase << n).
	backoffBase = 500 * time.Microsecond
	backoffCap  = 50 * time.Millisecond
)

// querier is what a statement runs on: a connection of the pool or a
// transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// access says whether a call changes the database.
type access bool

const (
	reads  access = false
	writes access = true
)

// read runs fn, which only reads, on a connection of the pool, retrying as
// described above, and returns its error translated for op.
func (s *Store) read(ctx context.Context, op string, fn func(q querier) error) error {
	return s.run(ctx, op, reads, fn)
}

// write runs fn, which runs one statement that writes (committed on its
// own), on a connection of the pool, retrying as described above, and
// returns its error translated for op.
func (s *Store) write(ctx context.Context, op string, fn func(q querier) error) error {
	return s.run(ctx, op, writes, fn)
}

// run runs fn on a connection of the pool. fn must not keep state across
// calls: it may run several times.
func (s *Store) run(ctx context.Context, op string, a access, fn func(q querier) error) error {
	return s.retry(ctx, op, a, func() error { return s.once(ctx, fn) })
}

// readPipelined runs stmts, the statements of one read, in the store's
// pipeline (see pipeline.go), retrying as described above; a read whose
// statements the server skipped because another read of their batch failed
// runs again. newRun is called before each attempt, to reset what the
// statements' scan functions fill.
func (s *Store) readPipelined(ctx context.Context, op string, newRun func(), stmts ...pipelinedStatement) error {
	return s.retry(ctx, op, reads, func() error {
		newRun()
		return s.pipe.read(ctx, stmts)
	})
}

// retryPolicy is the store's retry policy (see package retry), on the
// driver's errors as this package reads them.
var retryPolicy = retry.Policy{
	MaxAttempts: maxAttempts, Base: backoffBase, Cap: backoffCap,
	Errors: retry.Errors{
		Transient: serializationFailure,
		Skipped:   func(err error) bool { return errors.Is(err, errSkippedInBatch) },
		Lost:      connectionLost, NotSent: notSent, Unknown: outcomeUnknown,
		InDoubt: inDoubt, Wrap: wrap,
	},
}

// retry makes attempts of a call until one succeeds or the rules above stop
// it, and returns the last error translated for op.
func (s *Store) retry(ctx context.Context, op string, a access, attempt func() error) error {
	return retryPolicy.Do(ctx, op, func() (error, bool) { return attempt(), a == writes })
}

// once acquires a connection, runs fn on it and releases it.
func (s *Store) once(ctx context.Context, fn func(q querier) error) error {
	conn, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	return fn(conn)
}

// inTx runs fn in a transaction and commits it if fn returns nil, retrying
// as described above; it returns the error translated for op. fn must not
// keep state across calls: it may run several times.
func (s *Store) inTx(ctx context.Context, op string, fn func(tx pgx.Tx) error) error {
	// A serialization failure, even at COMMIT, rolled back: it is
	// transient.
	return retryPolicy.Do(ctx, op, func() (error, bool) { return s.txOnce(ctx, fn) })
}

// txOnce runs fn in one transaction. committing reports that the error came
// from the COMMIT.
func (s *Store) txOnce(ctx context.Context, fn func(tx pgx.Tx) error) (err error, committing bool) {
	conn, err := s.acquire(ctx)
	if err != nil {
		return err, false
	}
	defer conn.Release()
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{BeginQuery: s.beginSQL})
	if err != nil {
		return err, false
	}
	if err := fn(tx); err != nil {
		// A failed rollback leaves the connection broken; pgx closes it.
		_ = tx.Rollback(ctx)
		return err, false
	}
	return tx.Commit(ctx), true
}

// beginSQL returns the statement that begins every transaction of inTx: it
// sets the transaction's idle_in_transaction_session_timeout to d
// (Options.IdleInTransactionTimeout), in the same round trip, unless d is
// negative. SET LOCAL lasts until the transaction ends, so the setting
// holds behind a pooler that shares server sessions between clients, and
// reaches no other transaction.
func beginSQL(d time.Duration) string {
	if d < 0 {
		return "BEGIN"
	}
	ms := min(max(d.Milliseconds(), 1), math.MaxInt32)
	return fmt.Sprintf("BEGIN; SET LOCAL idle_in_transaction_session_timeout = %d", ms)
}

// acquire returns a connection of the pool, waiting at most
// Options.AcquireTimeout for one. The pool checks a connection before
// handing it out (see idleConnOK).
func (s *Store) acquire(ctx context.Context) (*pgxpool.Conn, error) {
	return retry.Acquire(ctx, s.acquireTimeout, s.closed.Load, errClosed, s.pool.Acquire)
}

// outcomeUnknown reports whether err, the error of a statement that writes
// or of a COMMIT, leaves unknown whether it was applied: the connection broke
// after the statement was sent and before the server answered. An error the
// server reported (even one ending the connection, such as 57P01) means that
// the statement failed.
func outcomeUnknown(err error) bool {
	var pgErr *pgconn.PgError
	return connectionLost(err) && !notSent(err) && !errors.As(err, &pgErr)
}

// errOutcomeUnknown marks the error of a write whose statement or COMMIT
// reached the server before the connection broke: it may or may not have
// been applied. The error also matches store.ErrUnavailable (see its
// documentation): the caller answers as for a database it cannot use, and
// the store's writes are made so that the same call made again finds what
// the first one did.
var errOutcomeUnknown = errors.New("the connection failed after the write was sent; it may or may not have been applied")

// inDoubt returns the error of a write whose outcome is unknown.
func inDoubt(op string, err error) error {
	return fmt.Errorf("postgres: %s: %w: %w: %w", op, store.ErrUnavailable, errOutcomeUnknown, err)
}
