package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// terminateSQL ends every other backend of the database and waits (up to 5
// s each) until they are gone, as a failover or an administrator does.
const terminateSQL = `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000))
FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`

// TestTerminate_UnderLoad runs reads, single writes and transactions from
// several goroutines while the test repeatedly terminates every backend of
// the store's pool, in two kinds of rounds:
//
//   - quiet: the calls are held back while the backends are terminated, so
//     every connection is idle in the pool when its backend ends and no
//     call is in flight; every call after the round must succeed, which
//     only a pool that finds dead connections before using them achieves;
//   - busy: the backends are terminated while calls run; a call that ran
//     during the termination may fail with store.ErrUnavailable (also
//     the in-doubt error of a write whose answer was lost), any other must
//     succeed.
func TestTerminate_UnderLoad(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name  string
		newDB func(testing.TB) string
	}{{"ReadCommitted", pgtest.NewDatabase}, {"Serializable", pgtest.NewSerializableDatabase}} {
		t.Run(mode.name, func(t *testing.T) { testTerminateUnderLoad(t, mode.newDB(t)) })
	}
}

func testTerminateUnderLoad(t *testing.T, url string) {
	ctx := context.Background()
	// More connections than workers, and a pause between calls: most
	// connections are idle in the pool when they are terminated, as in a
	// service that is not saturated.
	s, err := Open(ctx, url, &Options{Logger: testDiscard, MaxConns: 8})
	require.NoError(t, err)
	defer s.Close()
	killer := rawConn(t, url)
	u := seedUser(t, s, "p")
	key := store.APIKey{ID: "key_1", ProjectID: "p", Name: "k", CreatedAt: it0}
	require.NoError(t, s.CreateAPIKey(ctx, key))

	type call struct {
		start, end time.Time
		op         string
		err        error
	}
	// gate holds the calls back during a quiet round.
	var gate sync.RWMutex
	var mu sync.Mutex
	var calls []call
	var kills []kill
	var seq atomic.Int64
	ops := []struct {
		name string
		fn   func() error
	}{
		{"get user", func() error { _, err := s.GetUser(ctx, "p", u.ID); return err }},
		{"list contacts", func() error {
			_, err := s.ListContacts(ctx, "p", paginate.Request{Limit: 10})
			return err
		}},
		{"touch api key", func() error {
			return s.TouchAPIKey(ctx, "p", key.ID, it0.Add(time.Duration(seq.Add(1))*time.Microsecond))
		}},
		{"create contact", func() error {
			n := seq.Add(1)
			_, err := s.CreateContact(ctx, store.Contact{ID: fmt.Sprintf("ct_%d", n), ProjectID: "p", Name: "n", CreatedAt: it0})
			return err
		}},
		{"add failure", func() error {
			_, _, err := s.AddFailure(ctx, "k", it0, time.Hour)
			return err
		}},
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
				}
				op := ops[(w+i)%len(ops)]
				gate.RLock()
				c := call{start: time.Now(), op: op.name}
				c.err = op.fn()
				c.end = time.Now()
				gate.RUnlock()
				mu.Lock()
				calls = append(calls, c)
				mu.Unlock()
			}
		})
	}
	// succeededAfter waits until a call that started after t has
	// succeeded, so that every round is followed by calls on the new
	// connections however fast the machine is.
	succeededAfter := func(at time.Time) bool {
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			mu.Lock()
			for _, c := range slices.Backward(calls) {
				if c.err == nil && c.start.After(at) {
					mu.Unlock()
					return true
				}
			}
			mu.Unlock()
			time.Sleep(10 * time.Millisecond)
		}
		return false
	}
	terminated, recovered := 0, 0
	start := time.Now()
	for round := range 8 {
		if !succeededAfter(start) {
			break
		}
		recovered++
		quiet := round%2 == 0
		if quiet {
			gate.Lock()
		}
		k := kill{start: time.Now()}
		var n int
		require.NoError(t, killer.QueryRow(ctx, terminateSQL).Scan(&n))
		k.end = time.Now()
		terminated += n
		if quiet {
			gate.Unlock()
		} else {
			// Only a busy round has calls in flight.
			mu.Lock()
			kills = append(kills, k)
			mu.Unlock()
		}
		start = k.end
	}
	if succeededAfter(start) {
		recovered++
	}
	close(stop)
	wg.Wait()

	inFlight := func(c call) bool {
		for _, k := range kills {
			if c.start.Before(k.end) && c.end.After(k.start) {
				return true
			}
		}
		return false
	}
	failedInFlight := 0
	for _, c := range calls {
		if c.err == nil {
			continue
		}
		if !inFlight(c) {
			t.Errorf("%s was not running during a termination and failed: %v", c.op, c.err)
			continue
		}
		failedInFlight++
		if !errors.Is(c.err, store.ErrUnavailable) {
			t.Errorf("%s failed in flight with %v, want store.ErrUnavailable", c.op, c.err)
		}
	}
	t.Logf("%d calls; %d backends terminated in 8 rounds; %d calls in flight failed",
		len(calls), terminated, failedInFlight)
	assert.GreaterOrEqual(t, terminated, 16, "the pool's connections were terminated each round")
	// Before each round and after the last, a call that started after
	// the previous termination succeeded: the store served again by
	// itself each time.
	assert.Equal(t, 9, recovered, "rounds after which a call succeeded")
}

// kill is one round of terminations.
type kill struct{ start, end time.Time }
