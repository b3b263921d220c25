package identity_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
	"github.com/latchkey-dev/latchkey/store/sqlite"
	"github.com/latchkey-dev/latchkey/store/sqlite/sqlitetest"
)

func memoryLimiter(o identity.LimiterOptions) func(store.Store, func() time.Time) identity.Limiter {
	return func(_ store.Store, now func() time.Time) identity.Limiter {
		o.Now = now
		return identity.NewMemoryLimiter(&o)
	}
}

func storeLimiter(o identity.LimiterOptions) func(store.Store, func() time.Time) identity.Limiter {
	return func(st store.Store, now func() time.Time) identity.Limiter {
		o.Now = now
		return identity.NewStoreLimiter(st, &o)
	}
}

var limiterKinds = []struct {
	name string
	make func(identity.LimiterOptions) func(store.Store, func() time.Time) identity.Limiter
}{
	{"memory", memoryLimiter},
	{"store", storeLimiter},
}

func TestLogin_ThrottlePerAccount(t *testing.T) {
	for _, kind := range limiterKinds {
		t.Run(kind.name, func(t *testing.T) {
			e := newEnv(t, envConfig{limiter: kind.make(identity.LimiterOptions{AccountLimit: 3, AddressLimit: 1000})})
			e.createUser(t, "default", "alice@example.com", "correct horse", "")

			// A known and an unknown account are throttled alike, whatever
			// the spelling of the email and the client address.
			var known, unknown []response
			for i, email := range []string{"alice@example.com", "ALICE@example.com", "Alice@Example.Com"} {
				known = append(known, e.login(t, "", email, "wrong", "X-Test-Client", fmt.Sprintf("198.51.100.%d", i)))
			}
			for i, email := range []string{"ghost@example.com", "GHOST@example.com", "Ghost@Example.Com"} {
				unknown = append(unknown, e.login(t, "", email, "wrong", "X-Test-Client", fmt.Sprintf("198.51.100.%d", i)))
			}
			for i := range known {
				assert.Equal(t, http.StatusUnauthorized, known[i].status)
				assert.Equal(t, string(known[i].body), string(unknown[i].body))
			}

			// Over the limit: 429 before any hashing, even with the right
			// password, from any address. The hasher is kept fully busy to
			// show no hash is computed.
			release, err := e.hasher.HoldSlots(context.Background())
			require.NoError(t, err)
			k := e.login(t, "", "alice@example.com", "correct horse", "X-Test-Client", "192.0.2.200")
			u := e.login(t, "", "ghost@example.com", "correct horse", "X-Test-Client", "192.0.2.201")
			release()
			for _, res := range []response{k, u} {
				assert.Equal(t, http.StatusTooManyRequests, res.status, "body %s", res.body)
				assert.Equal(t, "rate_limited", res.code(t))
				assert.Equal(t, "900", res.header.Get("Retry-After"))
			}
			assert.Equal(t, string(k.body), string(u.body))
			k.header.Del("Date")
			u.header.Del("Date")
			assert.Equal(t, k.header, u.header)

			// Retry-After counts down with the window.
			e.clock.Advance(5*time.Minute + 500*time.Millisecond)
			res := e.login(t, "", "alice@example.com", "correct horse")
			assert.Equal(t, http.StatusTooManyRequests, res.status)
			assert.Equal(t, "600", res.header.Get("Retry-After"), "599.5 s rounds up")

			// Another account is not affected.
			assert.Equal(t, http.StatusUnauthorized, e.login(t, "", "bob@example.com", "wrong").status)

			// When the window ends the account may try again.
			e.clock.Advance(10 * time.Minute)
			e.login(t, "", "alice@example.com", "correct horse").tokens(t)
			assert.Equal(t, http.StatusUnauthorized, e.login(t, "", "ghost@example.com", "wrong").status)
		})
	}
}

func TestLogin_ThrottlePerAddress(t *testing.T) {
	for _, kind := range limiterKinds {
		t.Run(kind.name, func(t *testing.T) {
			e := newEnv(t, envConfig{
				limiter:  kind.make(identity.LimiterOptions{AccountLimit: 100, AddressLimit: 4}),
				projects: []string{"acme"},
			})
			e.createUser(t, "default", "alice@example.com", "correct horse", "")
			for i := range 4 {
				res := e.login(t, "", fmt.Sprintf("user%d@example.com", i), "guess", "X-Test-Client", "203.0.113.7")
				require.Equal(t, http.StatusUnauthorized, res.status)
			}
			res := e.login(t, "", "alice@example.com", "correct horse", "X-Test-Client", "203.0.113.7")
			assert.Equal(t, http.StatusTooManyRequests, res.status)
			assert.Equal(t, "rate_limited", res.code(t))
			assert.Equal(t, "900", res.header.Get("Retry-After"))

			// Another address, or the same address in another project, is
			// counted apart.
			e.login(t, "", "alice@example.com", "correct horse", "X-Test-Client", "203.0.113.8").tokens(t)
			assert.Equal(t, http.StatusUnauthorized, e.login(t, "/p/acme", "x@example.com", "guess", "X-Test-Client", "203.0.113.7").status)

			// IPv6 clients are counted per /64.
			for i := range 4 {
				res := e.login(t, "", "v6@example.com", "guess", "X-Test-Client", fmt.Sprintf("2001:db8:1:2::%x", i+1))
				require.Equal(t, http.StatusUnauthorized, res.status)
			}
			assert.Equal(t, http.StatusTooManyRequests, e.login(t, "", "alice@example.com", "correct horse", "X-Test-Client", "2001:db8:1:2:ffff::1").status)
			e.login(t, "", "alice@example.com", "correct horse", "X-Test-Client", "2001:db8:1:3::1").tokens(t)
			// An IPv4-mapped address is its IPv4 address.
			assert.Equal(t, http.StatusTooManyRequests, e.login(t, "", "alice@example.com", "correct horse", "X-Test-Client", "::ffff:203.0.113.7").status)
		})
	}
}

func TestLogin_ThrottleDefaultClientAddress(t *testing.T) {
	// Without Options.ClientAddr the address is the connection's: a client
	// header changes nothing.
	e := newEnv(t, envConfig{
		limiter: memoryLimiter(identity.LimiterOptions{AccountLimit: 100, AddressLimit: 2}),
		opts:    identity.Options{ClientAddr: httpapi.RemoteHost},
	})
	for i := range 2 {
		e.login(t, "", fmt.Sprintf("u%d@example.com", i), "guess", "X-Forwarded-For", fmt.Sprintf("192.0.2.%d", i))
	}
	res := e.login(t, "", "u9@example.com", "guess", "X-Forwarded-For", "192.0.2.99", "X-Test-Client", "192.0.2.99")
	assert.Equal(t, http.StatusTooManyRequests, res.status)
}

func TestLogin_SuccessClearsAccountNotAddress(t *testing.T) {
	for _, kind := range limiterKinds {
		t.Run(kind.name, func(t *testing.T) {
			e := newEnv(t, envConfig{limiter: kind.make(identity.LimiterOptions{AccountLimit: 3, AddressLimit: 6})})
			e.createUser(t, "default", "alice@example.com", "correct horse", "")
			fail := func() int { return e.login(t, "", "alice@example.com", "wrong", "X-Test-Client", "192.0.2.1").status }
			ok := func() { e.login(t, "", "alice@example.com", "correct horse", "X-Test-Client", "192.0.2.1").tokens(t) }

			assert.Equal(t, 401, fail())
			assert.Equal(t, 401, fail())
			ok() // clears the account's two failures
			assert.Equal(t, 401, fail())
			assert.Equal(t, 401, fail())
			assert.Equal(t, 401, fail())
			assert.Equal(t, 429, fail(), "three failures since the success")

			// The address kept counting through the success: 5 failures;
			// one more reaches its limit of 6.
			e.clock.Advance(time.Minute)
			other := e.login(t, "", "other@example.com", "wrong", "X-Test-Client", "192.0.2.1")
			assert.Equal(t, 401, other.status)
			other = e.login(t, "", "other@example.com", "wrong", "X-Test-Client", "192.0.2.1")
			assert.Equal(t, 429, other.status)
		})
	}
}

func TestStoreLimiter_SharedAcrossInstances(t *testing.T) {
	ctx := context.Background()
	path := sqlitetest.Path(t)
	a, err := sqlite.Open(ctx, path, nil)
	require.NoError(t, err)
	defer a.Close()
	b, err := sqlite.Open(ctx, path, nil)
	require.NoError(t, err)
	defer b.Close()
	require.NoError(t, a.CreateProject(ctx, store.Project{ID: "default", CreatedAt: time.Now()}))

	c := newClock()
	opts := identity.LimiterOptions{AccountLimit: 2, AddressLimit: 100, Now: c.Now}
	h := identity.NewHasher(nil)
	logOpts := &identity.AuthOptions{Logger: testLogger(t)}
	authA := identity.NewAuthenticator(a, h, identity.NewStoreLimiter(a, &opts), logOpts)
	authB := identity.NewAuthenticator(b, h, identity.NewStoreLimiter(b, &opts), logOpts)

	_, err = authA.Authenticate(ctx, "default", "who@example.com", "pw", "192.0.2.1")
	assert.ErrorIs(t, err, identity.ErrInvalidCredentials)
	_, err = authB.Authenticate(ctx, "default", "WHO@example.com", "pw", "192.0.2.2")
	assert.ErrorIs(t, err, identity.ErrInvalidCredentials)
	for _, auth := range []*identity.Authenticator{authA, authB} {
		_, err = auth.Authenticate(ctx, "default", "who@example.com", "pw", "192.0.2.3")
		var rl *identity.RateLimitedError
		require.ErrorAs(t, err, &rl)
		assert.InDelta(t, 15*time.Minute, rl.RetryAfter, float64(time.Millisecond), "the store keeps microseconds")
		assert.EqualValues(t, 900, rl.RetryAfterSeconds())
	}
}

func TestMemoryLimiter_Bounded(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	lim := identity.NewMemoryLimiter(&identity.LimiterOptions{AccountLimit: 3, AddressLimit: 3, MaxEntries: 10, Window: time.Minute, Now: c.Now})

	for i := range 1000 {
		require.NoError(t, lim.Failure(ctx, fmt.Sprintf("acct-%d", i), fmt.Sprintf("addr-%d", i)))
		require.LessOrEqual(t, lim.Len(), 10)
	}
	assert.Equal(t, 10, lim.Len())

	// Ended windows go first: after the window, a key at its limit
	// survives the arrival of new keys as long as older ones can go.
	c.Advance(2 * time.Minute)
	for range 3 {
		require.NoError(t, lim.Failure(ctx, "hot", ""))
	}
	wait, err := lim.Check(ctx, "hot", "", identity.InFlight{})
	require.NoError(t, err)
	assert.Equal(t, time.Minute, wait)
	assert.Equal(t, 1, lim.Len(), "expired windows are dropped")
	for i := range 9 {
		require.NoError(t, lim.Failure(ctx, fmt.Sprintf("new-%d", i), ""))
	}
	wait, err = lim.Check(ctx, "hot", "", identity.InFlight{})
	require.NoError(t, err)
	assert.Equal(t, time.Minute, wait, "hot is kept while the limiter has room")

	// When full, the oldest window is dropped.
	c.Advance(time.Second)
	require.NoError(t, lim.Failure(ctx, "newest", ""))
	assert.Equal(t, 10, lim.Len())
	wait, err = lim.Check(ctx, "hot", "", identity.InFlight{})
	require.NoError(t, err)
	assert.Zero(t, wait, "the oldest entry was evicted")

	// Success forgets only the account.
	require.NoError(t, lim.Failure(ctx, "a", "ip"))
	require.NoError(t, lim.Failure(ctx, "a", "ip"))
	require.NoError(t, lim.Failure(ctx, "a", "ip"))
	require.NoError(t, lim.Success(ctx, "a"))
	wait, err = lim.Check(ctx, "a", "", identity.InFlight{})
	require.NoError(t, err)
	assert.Zero(t, wait)
	wait, err = lim.Check(ctx, "a", "ip", identity.InFlight{})
	require.NoError(t, err)
	assert.Equal(t, time.Minute, wait)
}

// A flood of failed logins for new accounts (three times as many as the
// limiter keeps; each login costs a hash) leaves it holding at most
// MaxEntries.
func TestLogin_MemoryLimiterBoundedUnderFlood(t *testing.T) {
	const maxEntries = 4
	e := newEnv(t, envConfig{limiter: memoryLimiter(identity.LimiterOptions{MaxEntries: maxEntries, AddressLimit: 1 << 20})})
	for i := range 3 * maxEntries {
		assert.Equal(t, http.StatusUnauthorized, e.login(t, "", fmt.Sprintf("flood-%d@example.com", i), "x").status)
	}
	assert.LessOrEqual(t, e.lim.(*identity.MemoryLimiter).Len(), maxEntries)
}

func TestRateLimitedError_RetryAfterSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int64{
		0: 1, time.Millisecond: 1, time.Second: 1, 1001 * time.Millisecond: 2, 15 * time.Minute: 900,
	} {
		assert.Equal(t, want, (&identity.RateLimitedError{RetryAfter: d}).RetryAfterSeconds(), "%s", d)
	}
}

// TestLogin_ThrottleHoldsUnderConcurrency sends many wrong passwords from one
// address at once. Failures are counted after hashing, so every attempt
// passes the first check; the limit must still hold because each attempt
// checks again once it holds a hashing slot, counting the attempts still
// in flight. Without that second check all of them would be hashed and
// answered 401.
func TestLogin_ThrottleHoldsUnderConcurrency(t *testing.T) {
	const limit, attempts = 3, 20
	for _, kind := range limiterKinds {
		t.Run(kind.name, func(t *testing.T) {
			e := newEnv(t, envConfig{
				limiter: kind.make(identity.LimiterOptions{AccountLimit: 1000, AddressLimit: limit}),
				hasher:  &identity.HasherOptions{MaxConcurrent: 1},
			})
			statuses := make([]int, attempts)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range attempts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					email := fmt.Sprintf("user%d@example.com", i) // distinct accounts, one address
					statuses[i] = e.login(t, "", email, "wrong", "X-Test-Client", "203.0.113.7").status
				}()
			}
			close(start)
			wg.Wait()
			counts := map[int]int{}
			for _, st := range statuses {
				counts[st]++
			}
			assert.Equal(t, attempts, counts[http.StatusUnauthorized]+counts[http.StatusTooManyRequests], "only 401 and 429: %v", counts)
			// Exactly the limit: an attempt whose failure is still being
			// counted is counted in flight.
			assert.Equal(t, limit, counts[http.StatusUnauthorized], "%v", counts)
		})
	}
}

// slowThrottle is a ThrottleStore whose AddFailure waits until open is
// closed (or its context ends) before it counts: a store whose writes are
// slow, as SQLite locked by another connection or a PostgreSQL throttle
// table under a lock. waiting counts the calls that waited.
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

// TestLogin_ThrottleHoldsWhileCountsAreSlow: while the store is slow to
// count failures, 40 parallel wrong passwords for one account are checked
// no more often than the limit allows. Each checked attempt waits in
// AddFailure, still counted in flight; every other one is answered 429 at
// once, with no hash. Without the in-flight count every attempt passes
// the check, since no failure has landed yet, and is hashed.
func TestLogin_ThrottleHoldsWhileCountsAreSlow(t *testing.T) {
	const limit, attempts = 10, 40
	slow := &slowThrottle{open: make(chan struct{})}
	e := newEnv(t, envConfig{
		limiter: func(st store.Store, now func() time.Time) identity.Limiter {
			slow.ThrottleStore = st
			return identity.NewStoreLimiter(slow, &identity.LimiterOptions{AccountLimit: limit, AddressLimit: 1000, Now: now})
		},
		hasher: &identity.HasherOptions{MaxConcurrent: 4},
	})
	e.createUser(t, "default", "alice@example.com", "correct horse", "")

	var throttled atomic.Int32
	statuses := make([]int, attempts)
	var wg sync.WaitGroup
	for i := range attempts {
		wg.Go(func() {
			statuses[i] = e.login(t, "", "alice@example.com", "wrong horse").status
			if statuses[i] == http.StatusTooManyRequests {
				throttled.Add(1)
			}
		})
	}
	// Every attempt is either answered 429 or waiting to be counted.
	require.Eventually(t, func() bool { return int(throttled.Load()+slow.waiting.Load()) == attempts },
		time.Minute, 5*time.Millisecond, "throttled %d, waiting %d", throttled.Load(), slow.waiting.Load())
	assert.Equal(t, int32(limit), slow.waiting.Load(), "attempts checked while the count was slow")
	close(slow.open)
	wg.Wait()

	counts := map[int]int{}
	for _, st := range statuses {
		counts[st]++
	}
	assert.Equal(t, map[int]int{http.StatusUnauthorized: limit, http.StatusTooManyRequests: attempts - limit}, counts)
	// The checked attempts were all counted: the right password is
	// throttled now.
	assert.Equal(t, http.StatusTooManyRequests, e.login(t, "", "alice@example.com", "correct horse").status)
}

// TestLogin_ThrottleHoldsWhileThrottlesLockedOnPostgres is
// TestLogin_ThrottleHoldsWhileCountsAreSlow on PostgreSQL, the counts
// stalled as a real database stalls them: another session holds the
// throttles table in EXCLUSIVE mode (reads go on, writes wait). 40
// parallel wrong passwords for one account: as many wait to be counted as
// the limit allows, the others are refused 429 at once.
func TestLogin_ThrottleHoldsWhileThrottlesLockedOnPostgres(t *testing.T) {
	const limit, attempts = 10, 40
	dbURL := pgtest.NewDatabase(t)
	pg, err := postgres.Open(t.Context(), dbURL, &postgres.Options{Logger: testLogger(t), MaxConns: attempts + 4})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pg.Close() })
	e := newEnv(t, envConfig{
		limiter: func(_ store.Store, now func() time.Time) identity.Limiter {
			return identity.NewStoreLimiter(pg, &identity.LimiterOptions{AccountLimit: limit, AddressLimit: 1000, Now: now})
		},
		hasher: &identity.HasherOptions{MaxConcurrent: 4},
	})
	e.createUser(t, "default", "alice@example.com", "correct horse", "")

	locker, err := pgx.Connect(t.Context(), dbURL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = locker.Close(context.Background()) })
	tx, err := locker.Begin(t.Context())
	require.NoError(t, err)
	_, err = tx.Exec(t.Context(), "LOCK TABLE throttles IN EXCLUSIVE MODE")
	require.NoError(t, err)
	waiting := func() int {
		var n int
		require.NoError(t, locker.QueryRow(t.Context(),
			"SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'throttles'::regclass").Scan(&n))
		return n
	}

	var throttled atomic.Int32
	statuses := make([]int, attempts)
	var wg sync.WaitGroup
	for i := range attempts {
		wg.Go(func() {
			statuses[i] = e.login(t, "", "alice@example.com", "wrong horse").status
			if statuses[i] == http.StatusTooManyRequests {
				throttled.Add(1)
			}
		})
	}
	require.Eventually(t, func() bool { return int(throttled.Load())+waiting() == attempts },
		time.Minute, 10*time.Millisecond)
	assert.Equal(t, limit, waiting(), "attempts checked while the throttles table was locked")
	require.NoError(t, tx.Rollback(t.Context()))
	wg.Wait()

	counts := map[int]int{}
	for _, st := range statuses {
		counts[st]++
	}
	assert.Equal(t, map[int]int{http.StatusUnauthorized: limit, http.StatusTooManyRequests: attempts - limit}, counts)
}
