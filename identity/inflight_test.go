package identity

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// landingFailure admits an attempt on account in f, counts its failure in
// lim, and returns with the attempt still landing (its failure recorded,
// the attempt not ended) until release is closed; ended is closed once the
// attempt has ended.
func landingFailure(t *testing.T, f *inFlight, lim Limiter, account string, check func(InFlight) error) (release, ended chan struct{}) {
	t.Helper()
	at, err := f.admit(t.Context(), account, "", check)
	require.NoError(t, err)
	recorded := make(chan struct{})
	release, ended = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		_ = at.settle(func() error {
			err := lim.Failure(context.Background(), account, "")
			close(recorded)
			<-release
			return err
		})
	}()
	<-recorded
	return release, ended
}

func limiterCheck(lim Limiter, account string, asked func(InFlight)) func(InFlight) error {
	return func(c InFlight) error {
		asked(c)
		wait, err := lim.Check(context.Background(), account, "", c)
		if err != nil {
			return err
		}
		if wait > 0 {
			return &RateLimitedError{RetryAfter: wait}
		}
		return nil
	}
}

// TestInFlight_LandingAttemptCountedOnce: an attempt whose failure is in the
// limiter's count but which has not ended yet is counted once by the next
// check, not twice. With a limit of 2 and one failure, the next attempt is
// admitted: the check cannot tell whether the count holds the landing
// failure, so it waits for the attempt to end and asks again.
func TestInFlight_LandingAttemptCountedOnce(t *testing.T) {
	f := newInFlight()
	lim := NewMemoryLimiter(&LimiterOptions{AccountLimit: 2})
	var release chan struct{}
	var asked []InFlight
	check := limiterCheck(lim, "a", func(c InFlight) {
		asked = append(asked, c)
		if len(asked) == 2 { // the landing attempt counted both ways: let it end
			close(release)
		}
	})
	release, ended := landingFailure(t, f, lim, "a", check)
	asked = nil

	// The deadline only keeps a wrong wait from hanging the test.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	at, err := f.admit(ctx, "a", "", check)
	require.NoError(t, err, "one failure under a limit of 2")
	<-ended
	assert.Equal(t, []InFlight{
		{Account: 1},                    // counted in flight: refuses
		{Account: 1, AccountLanding: 1}, // counted as landed: passes
		{Account: 0},                    // after it ended: passes
	}, asked)
	at.end()
}

// TestInFlight_SureRefusalWhileLanding: a check that refuses even when the
// attempts landing are counted as landed refuses at once, without waiting
// for them to end (a slow store never holds up refusals).
func TestInFlight_SureRefusalWhileLanding(t *testing.T) {
	f := newInFlight()
	lim := NewMemoryLimiter(&LimiterOptions{AccountLimit: 1})
	check := limiterCheck(lim, "a", func(InFlight) {})
	release, ended := landingFailure(t, f, lim, "a", check)

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // see above
	defer cancel()
	_, err := f.admit(ctx, "a", "", check)
	var rl *RateLimitedError
	assert.True(t, errors.As(err, &rl), "admit: %v", err)
	assert.ErrorAs(t, f.precheck("a", "", check), &rl)
	close(release)
	<-ended
}

// TestInFlight_PrecheckLeavesDoubtToAdmit: the early check refuses only
// when it is sure; while the count may hold a landing failure twice, it
// lets the attempt go on to admit.
func TestInFlight_PrecheckLeavesDoubtToAdmit(t *testing.T) {
	f := newInFlight()
	lim := NewMemoryLimiter(&LimiterOptions{AccountLimit: 2})
	check := limiterCheck(lim, "a", func(InFlight) {})
	release, ended := landingFailure(t, f, lim, "a", check)

	assert.NoError(t, f.precheck("a", "", check))
	close(release)
	<-ended
	assert.NoError(t, f.precheck("a", "", check), "one failure under a limit of 2")
	assert.Empty(t, f.keys, "no key is kept once no attempt refers to it")
}
