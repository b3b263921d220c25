// Package retry is the retry policy of the stores that reach their database
// over connections (store/postgres, store/mysql): which failed attempts of a
// statement or transaction run again, after what pause, and which failed
// writes end in doubt. It imports no driver: each store says what its
// driver's errors mean (Errors), and keeps its SQL and its error mapping.
package retry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Errors are a store's readings of its driver's errors.
type Errors struct {
	// Transient reports that the database rolled the statement or
	// transaction back (a deadlock, a serialization failure, a lock wait
	// timeout): it runs again after a jittered, growing pause.
	Transient func(error) bool
	// Skipped, if not nil, reports that the statement did not run at all
	// (another statement of its batch failed first): it runs again at
	// once.
	Skipped func(error) bool
	// Lost reports that the connection was lost.
	Lost func(error) bool
	// NotSent reports that the failure proves nothing reached the server
	// (no connection could be had, or the driver failed before writing).
	NotSent func(error) bool
	// Unknown reports that the outcome of a write is unknown: it was sent
	// and the connection broke before the server answered.
	Unknown func(error) bool
	// InDoubt returns the error of the operation op whose write's outcome
	// is unknown, and Wrap that of any other failure: the store's own
	// translation of its driver's error.
	InDoubt, Wrap func(op string, err error) error
}

// Policy bounds the retries of one store.
type Policy struct {
	// MaxAttempts bounds how often a transient failure runs, in all (and
	// a skipped one).
	MaxAttempts int
	// Base and Cap shape the pause before attempt n+1 after a transient
	// failure: a random duration below min(Cap, Base << n).
	Base, Cap time.Duration
	Errors    Errors
}

// Do runs attempt, the operation op, until it returns nil or may not run
// again, and returns nil or the last error translated (Errors.InDoubt when
// that error leaves a write's outcome unknown, else Errors.Wrap). attempt
// reports, with its error, whether the failure came from a write that may
// have reached the server (a statement that writes, or a transaction's
// COMMIT). The rules:
//
//   - a transient failure runs again, up to MaxAttempts times in all,
//     after Pause; a skipped one runs again at once, within the same
//     bound;
//   - a lost connection runs again once, when the attempt was not writing
//     or the failure proves that nothing was sent;
//   - nothing runs again once ctx is done.
//
// attempt must not keep state across calls: it may run several times.
func (p *Policy) Do(ctx context.Context, op string, attempt func() (err error, writing bool)) error {
	retried := false
	for n := 0; ; n++ {
		err, writing := attempt()
		if err == nil {
			return nil
		}
		switch {
		case ctx.Err() != nil:
		case p.Errors.Transient(err) && n+1 < p.MaxAttempts:
			if p.Pause(ctx, n) {
				continue
			}
		case p.Errors.Skipped != nil && p.Errors.Skipped(err) && n+1 < p.MaxAttempts:
			continue
		case p.Errors.Lost(err) && !retried && (!writing || p.Errors.NotSent(err)):
			retried = true
			continue
		}
		if writing && p.Errors.Unknown(err) {
			return p.Errors.InDoubt(op, err)
		}
		return p.Errors.Wrap(op, err)
	}
}

// Pause sleeps before attempt+1, a random duration below
// min(Cap, Base << attempt), and reports whether ctx is still live.
func (p *Policy) Pause(ctx context.Context, attempt int) bool {
	limit := min(p.Cap, p.Base<<min(attempt, 16))
	t := time.NewTimer(rand.N(limit) + 1)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
