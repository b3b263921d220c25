package console_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
)

// slowThrottle is a ThrottleStore whose AddFailure waits until open is
// closed (or its context ends) before it counts: a store whose writes are
// slow. waiting counts the calls that waited.
type slowThrottle struct {
	store.ThrottleStore
	open    chan struct{}
	waiting atomic.Int32
}

func (s *slowThrottle) AddFailure(ctx context.Context, key string, now time.Time, window time.Duration) (int, time.Time, error) {
	select {
	case <-s.open:
	default:
		s.waiting.Add(1)
		select {
		case <-s.open:
		case <-ctx.Done():
			return 0, time.Time{}, ctx.Err()
		}
	}
	return s.ThrottleStore.AddFailure(ctx, key, now, window)
}

// TestConsole_SignIn_ThrottleHoldsWhileCountsAreSlow: the console's sign-in
// is throttled like login, also while the store is slow to count failures:
// of 40 parallel wrong passwords for the admin, no more are checked than
// the limit; the others are refused 429 at once.
func TestConsole_SignIn_ThrottleHoldsWhileCountsAreSlow(t *testing.T) {
	const limit, attempts = 3, 40
	counts, err := sqlite.Open(context.Background(), ":memory:", nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = counts.Close() })
	slow := &slowThrottle{ThrottleStore: counts, open: make(chan struct{})}
	f := newFixture(t, &fixtureOptions{limiter: identity.NewStoreLimiter(slow, &identity.LimiterOptions{AccountLimit: limit})})

	clients := make([]*client, attempts)
	for i := range clients {
		clients[i] = f.newClient(t, project)
	}
	var throttled atomic.Int32
	statuses := make([]int, attempts)
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			statuses[i] = c.signIn(adminEmail, "wrong").status
			if statuses[i] == http.StatusTooManyRequests {
				throttled.Add(1)
			}
		})
	}
	require.Eventually(t, func() bool { return int(throttled.Load()+slow.waiting.Load()) == attempts },
		time.Minute, 5*time.Millisecond)
	assert.Equal(t, int32(limit), slow.waiting.Load(), "sign-ins checked while the count was slow")
	close(slow.open)
	wg.Wait()

	byStatus := map[int]int{}
	for _, st := range statuses {
		byStatus[st]++
	}
	// A failed sign-in shows the form again (200).
	assert.Equal(t, map[int]int{http.StatusOK: limit, http.StatusTooManyRequests: attempts - limit}, byStatus)
}
