package identity

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

// StoreLimiter is a Limiter that keeps its counts in a store.ThrottleStore,
// in fixed windows, so that every server instance on one database throttles
// as one. Its memory use is the store's.
type StoreLimiter struct {
	st   store.ThrottleStore
	opts LimiterOptions
}

var _ Limiter = (*StoreLimiter)(nil)

// NewStoreLimiter returns a StoreLimiter over st. A nil opts means the
// defaults. It panics if st is nil.
func NewStoreLimiter(st store.ThrottleStore, opts *LimiterOptions) *StoreLimiter {
	if st == nil {
		panic("identity: NewStoreLimiter called with a nil ThrottleStore")
	}
	return &StoreLimiter{st: st, opts: opts.withDefaults()}
}

// Check implements Limiter with one read per key.
func (l *StoreLimiter) Check(ctx context.Context, account, address string, inFlight InFlight) (time.Duration, error) {
	now, window := l.opts.Now(), l.opts.Window
	n, reset, err := l.st.Failures(ctx, account, now, window)
	if err != nil {
		return 0, fmt.Errorf("identity: reading failures: %w", err)
	}
	wait := retryAfter(n, inFlight.Account, l.opts.AccountLimit, reset, now, window)
	if address != "" {
		n, reset, err := l.st.Failures(ctx, address, now, window)
		if err != nil {
			return 0, fmt.Errorf("identity: reading failures: %w", err)
		}
		wait = max(wait, retryAfter(n, inFlight.Address, l.opts.AddressLimit, reset, now, window))
	}
	return wait, nil
}

// Failure implements Limiter with one write per key.
func (l *StoreLimiter) Failure(ctx context.Context, account, address string) error {
	now := l.opts.Now()
	if _, _, err := l.st.AddFailure(ctx, account, now, l.opts.Window); err != nil {
		return fmt.Errorf("identity: counting failure: %w", err)
	}
	if address != "" {
		if _, _, err := l.st.AddFailure(ctx, address, now, l.opts.Window); err != nil {
			return fmt.Errorf("identity: counting failure: %w", err)
		}
	}
	return nil
}

// Success implements Limiter. It reads the account's count first and
// writes only when there is something to forget, so that the common
// successful sign-in costs no durable write.
func (l *StoreLimiter) Success(ctx context.Context, account string) error {
	n, _, err := l.st.Failures(ctx, account, l.opts.Now(), l.opts.Window)
	if err != nil {
		return fmt.Errorf("identity: reading failures: %w", err)
	}
	if n == 0 {
		return nil
	}
	if err := l.st.ClearFailures(ctx, account); err != nil {
		return fmt.Errorf("identity: clearing failures: %w", err)
	}
	return nil
}
