package retry

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// AcquireError is a failure to get a connection of a pool while the
// caller's context was live: nothing was sent, so any call may run again.
type AcquireError struct{ Err error }

// NewAcquireError returns err as an *AcquireError. A context error (the
// pool's own wait ending) is kept as text only, so that the result does not
// read as the caller's context ending.
func NewAcquireError(err error) *AcquireError {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		err = errors.New(err.Error())
	}
	return &AcquireError{err}
}

func (e *AcquireError) Error() string { return "no database connection: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *AcquireError) Unwrap() error { return e.Err }

// Acquire returns a connection from get, waiting at most timeout for one
// (without bound when timeout is zero). It returns errClosed when closed
// reports the store closed, ctx's error when ctx ended, and otherwise an
// *AcquireError.
func Acquire[C any](ctx context.Context, timeout time.Duration, closed func() bool, errClosed error, get func(context.Context) (C, error)) (C, error) {
	var zero C
	if closed() {
		return zero, errClosed
	}
	actx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	conn, err := get(actx)
	switch {
	case err == nil:
		return conn, nil
	case ctx.Err() != nil:
		return zero, ctx.Err()
	case closed():
		return zero, errClosed
	case actx.Err() != nil:
		// Do not wrap the timeout's context.DeadlineExceeded: the
		// caller's context did not end.
		return zero, NewAcquireError(fmt.Errorf("none within %s", timeout))
	}
	return zero, NewAcquireError(err)
}
