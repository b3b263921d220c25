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

// Check implements Limiter with one read of both keys (FailuresOf).
func (l *StoreLimiter) Check(ctx context.Context, account, address string, inFlight InFlight) (time.Duration, error) {
	now, window := l.opts.Now(), l.opts.Window
	keys := []string{account}
	if address != "" {
		keys = append(keys, address)
	}
	ws, err := l.st.FailuresOf(ctx, keys, now, window)
	if err != nil {
		return 0, fmt.Errorf("identity: reading failures: %w", err)
	}
	wait := retryAfter(ws[0].Count, inFlight.Account, inFlight.AccountLanding, l.opts.AccountLimit, ws[0].ResetAt, now, window)
	if address != "" {
		wait = max(wait, retryAfter(ws[1].Count, inFlight.Address, inFlight.AddressLanding, l.opts.AddressLimit, ws[1].ResetAt, now, window))
	}
	if n := noteOf(ctx); n != nil {
		n.accountClean = ws[0].Count == 0
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
// successful sign-in costs no durable write. When the attempt's last Check
// (made by an Authenticator, once the attempt held its hashing slot) found
// no failure recorded for the account, it does neither: the failures
// recorded since came from attempts concurrent with this one, which may as
// well have ended after it. When that Check found some, it clears without
// reading.
func (l *StoreLimiter) Success(ctx context.Context, account string) error {
	if n := noteOf(ctx); n != nil {
		if n.accountClean {
			return nil
		}
		if err := l.st.ClearFailures(ctx, account); err != nil {
			return fmt.Errorf("identity: clearing failures: %w", err)
		}
		return nil
	}
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

// attemptNote is what a StoreLimiter notes about one attempt between its
// Check and its Success, in the attempt's context (an Authenticator puts
// it there): whether the last Check found the account with no failure
// recorded. It saves the successful sign-in a round trip.
type attemptNote struct {
	accountClean bool
}

type attemptNoteKey struct{}

// withNote returns ctx with a new attemptNote.
func withNote(ctx context.Context) context.Context {
	return context.WithValue(ctx, attemptNoteKey{}, &attemptNote{})
}

func noteOf(ctx context.Context) *attemptNote {
	n, _ := ctx.Value(attemptNoteKey{}).(*attemptNote)
	return n
}
