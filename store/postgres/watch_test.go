package postgres

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// closedWithin reports whether ch closes within d.
func closedWithin(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// quietFor is how long a test expects a watching channel of a healthy
// watcher to stay open without a revocation: longer than
// store.MaxWatchDelay, so that a watcher that woke on a timer would show.
const quietFor = 3 * maxWatchDelay

// staysQuiet reports whether a channel of s.WatchRevocations stays open for
// quietFor, as a healthy watcher's does while nothing is revoked, calling
// during (if not nil) once the channel is open. The watcher may close a
// channel as a precaution (it returned before the watcher listened, a
// check of the connection was overdue, the connection was lost), which the
// contract allows and a loaded machine makes likely: a channel closed with a
// precaution counted is replaced, and during called again, up to three
// times. It returns the channel that stayed open, or false if one closed
// with no precaution counted (or precautions closed all four).
func staysQuiet(ctx context.Context, s *Store, during func()) (<-chan struct{}, bool) {
	for range 4 {
		before := s.watch.precautions.Load()
		ch := s.WatchRevocations(ctx)
		if during != nil {
			during()
		}
		if !closedWithin(ch, quietFor) {
			return ch, true
		}
		if s.watch.precautions.Load() == before {
			return ch, false
		}
	}
	return nil, false
}

// waitWatchIdle waits until the watcher of s has no goroutine.
func waitWatchIdle(t *testing.T, s *Store) {
	t.Helper()
	require.Eventually(t, func() bool {
		s.watch.mu.Lock()
		defer s.watch.mu.Unlock()
		return s.watch.state == watchIdle
	}, 5*time.Second, time.Millisecond, "the watcher's goroutine ends")
}

// TestWatch_OnlyThisDatabase checks that a watcher does not wake without a
// revocation, nor for one in another database on the same server, and wakes
// for one in its own. (That every revoking write, through either of two
// handles, wakes it is storetest's RevocationWatcher cases.)
func TestWatch_OnlyThisDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	a, b := openInternal(t, url), openInternal(t, url)
	other := openInternal(t, pgtest.NewDatabase(t))
	fam := seedFamily(t, b, seedUser(t, b, "p"))
	ou := seedUser(t, other, "p")
	ofam := seedFamily(t, other, ou)
	at := it0.Add(time.Minute)

	_, quiet := staysQuiet(ctx, a, nil)
	require.True(t, quiet, "woke before any revocation")
	ch, quiet := staysQuiet(ctx, a, func() {
		require.NoError(t, other.RevokeRefreshFamily(ctx, "p", ofam.ID, at), "a revocation in another database")
		ofam = seedFamily(t, other, ou)
	})
	require.True(t, quiet, "woke for another database")
	require.NoError(t, b.RevokeRefreshFamily(ctx, "p", fam.ID, at))
	assert.True(t, closedWithin(ch, 5*time.Second), "did not wake for its own database")
}

// TestWatch_FirstCallListens checks the start of a watcher: a revocation
// committed right after the first WatchRevocations returns wakes it, each
// time the watcher starts afresh.
func TestWatch_FirstCallListens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	a, b := openInternal(t, url), openInternal(t, url)
	u := seedUser(t, b, "p")
	for i := range 10 {
		waitWatchIdle(t, a)
		f := seedFamily(t, b, u)
		ch := a.WatchRevocations(ctx)
		require.NoError(t, b.RevokeRefreshFamily(ctx, "p", f.ID, it0))
		require.True(t, closedWithin(ch, 5*time.Second), "round %d: did not wake", i)
	}
}

// TestWatch_ContextAndGoroutine checks that the channel closes when its
// context ends, that one goroutine serves every waiter, and that no
// goroutine runs once nobody waits. It counts every watcher goroutine of
// the process, so unlike the package's other tests it does not run in
// parallel: go test runs the parallel ones once it has ended.
func TestWatch_ContextAndGoroutine(t *testing.T) {
	s := openInternal(t, pgtest.NewDatabase(t))
	waitWatchIdle(t, s)

	ctx1, cancel1 := context.WithCancel(context.Background())
	ctx2, cancel2 := context.WithCancel(context.Background())
	before := s.watch.precautions.Load() // a precaution may close ch2 too
	ch1, ch2 := s.WatchRevocations(ctx1), s.WatchRevocations(ctx2)
	assert.Equal(t, 1, watcherGoroutines("(*watcher).run("), "one goroutine for two waiters")
	cancel1()
	assert.True(t, closedWithin(ch1, 5*time.Second), "closed when its context ends")
	assert.True(t, !closedWithin(ch2, quietFor) || s.watch.precautions.Load() > before, "the other waiter still waits")
	cancel2()
	assert.True(t, closedWithin(ch2, 5*time.Second))
	waitWatchIdle(t, s)
	// Polled here, not with assert.Eventually, whose condition runs in a
	// goroutine of its own.
	deadline := time.Now().Add(5 * time.Second)
	for watcherGoroutines("(*watcher)") > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if !assert.Zero(t, watcherGoroutines("(*watcher)"), "no goroutine while nobody waits") {
		buf := make([]byte, 1<<20)
		t.Logf("%s", buf[:runtime.Stack(buf, true)])
	}

	done, cancel := context.WithCancel(context.Background())
	cancel()
	assert.True(t, closedWithin(s.WatchRevocations(done), time.Second), "an ended context gives a closed channel")
}

// TestWatch_Close checks that Close wakes the waiters, stops the goroutine
// and closes the connection, and that watching after Close returns a closed
// channel.
func TestWatch_Close(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	s, err := Open(context.Background(), url, &Options{Logger: testDiscard})
	require.NoError(t, err)
	ch := s.WatchRevocations(context.Background())
	require.NoError(t, s.Close())
	assert.True(t, closedWithin(ch, 5*time.Second))
	assert.Equal(t, watchIdle, s.watch.state)
	assert.True(t, closedWithin(s.WatchRevocations(context.Background()), time.Second))
	var n int
	require.NoError(t, rawConn(t, url).QueryRow(context.Background(),
		`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
		watcherAppName).Scan(&n))
	assert.Zero(t, n, "the watcher's connection is closed")
}

// TestWatch_ConnectionLost terminates the watcher's backend, as a failover
// does: the waiters wake at once (a notification may have been lost), and
// the watcher listens again on a new connection.
func TestWatch_ConnectionLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	a, b := openInternal(t, url), openInternal(t, url)
	u := seedUser(t, b, "p")
	admin := rawConn(t, url)
	for i := range 3 {
		ch := a.WatchRevocations(ctx)
		var n int
		require.NoError(t, admin.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000))
			FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`, watcherAppName).Scan(&n))
		require.Equal(t, 1, n, "round %d: the watcher's backend", i)
		assert.True(t, closedWithin(ch, 5*time.Second), "round %d: woke when its connection was lost", i)

		require.Eventually(t, func() bool {
			ch = a.WatchRevocations(ctx)
			return !closedWithin(ch, quietFor)
		}, 10*time.Second, time.Millisecond, "round %d: listens again", i)
		f := seedFamily(t, b, u)
		require.NoError(t, b.RevokeRefreshFamily(ctx, "p", f.ID, it0))
		assert.True(t, closedWithin(ch, 5*time.Second), "round %d: woke after reconnecting", i)
	}
}

// TestWatch_DatabaseGone makes the database unreachable, refused and then
// silent (a partition: nothing closes, nothing answers): the waiters wake,
// watching again keeps waking them while the database is gone (within
// store.MaxWatchDelay, which is logged), and once it is back a revocation
// wakes them again.
func TestWatch_DatabaseGone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	px, viaProxy := newProxy(t, url)
	a, b := openInternal(t, viaProxy), openInternal(t, url)
	u := seedUser(t, b, "p")
	for _, mode := range []string{"refused", "partition"} {
		ch, quiet := staysQuiet(ctx, a, nil)
		require.True(t, quiet, "%s: healthy before", mode)
		if mode == "refused" {
			px.Cut(false)
		} else {
			px.Freeze()
		}
		start := time.Now()
		require.True(t, closedWithin(ch, 5*time.Second), "%s: woke when the connection was lost", mode)
		t.Logf("%s: woke %s after the loss", mode, time.Since(start).Round(time.Millisecond))
		var longest time.Duration
		for range 5 {
			start := time.Now()
			ch := a.WatchRevocations(ctx)
			require.True(t, closedWithin(ch, 5*time.Second), "%s: woken while the database is gone", mode)
			longest = max(longest, time.Since(start))
		}
		t.Logf("%s: while gone, the longest watch lasted %s", mode, longest.Round(time.Millisecond))

		px.Restore()
		require.Eventually(t, func() bool {
			ch = a.WatchRevocations(ctx)
			return !closedWithin(ch, quietFor)
		}, 10*time.Second, time.Millisecond, "%s: listens again", mode)
		f := seedFamily(t, b, u)
		require.NoError(t, b.RevokeRefreshFamily(ctx, "p", f.ID, it0))
		assert.True(t, closedWithin(ch, 5*time.Second), "%s: woke after the database came back", mode)
	}
}

// TestWatch_ListenRefused stands for a hot standby, which refuses LISTEN
// ("cannot execute LISTEN during recovery", SQLSTATE 25006): the watcher's
// LISTEN is refused while a table says so. The watcher polls (every
// waiter is woken within store.MaxWatchDelay, several times a second),
// logs the refusal once however many attempts it makes, and never that it
// lost its connection; once LISTEN is accepted it listens again, logs
// that, and a revocation wakes its waiters.
func TestWatch_ListenRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	admin := rawConn(t, url)
	_, err := admin.Exec(ctx, `CREATE TABLE refuse_listen (x int); INSERT INTO refuse_listen VALUES (1)`)
	require.NoError(t, err)
	var logs syncBuffer
	a, err := Open(ctx, url, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	a.watch.listenSQL = `DO $$BEGIN
		IF EXISTS (SELECT FROM refuse_listen) THEN
			RAISE EXCEPTION 'cannot execute LISTEN during recovery' USING ERRCODE = 'read_only_sql_transaction';
		END IF;
		LISTEN ` + revocationChannel + `;
	END$$`
	b := openInternal(t, url)
	u := seedUser(t, b, "p")

	for range 12 {
		ch := a.WatchRevocations(ctx)
		require.True(t, closedWithin(ch, 5*time.Second), "woken while LISTEN is refused")
		time.Sleep(maxWatchDelay) // let attempts pass between the waits
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "refuses LISTEN"), "logged once:\n%s", logs.String())
	assert.NotContains(t, logs.String(), "lost its connection")

	_, err = admin.Exec(ctx, `DELETE FROM refuse_listen`)
	require.NoError(t, err)
	var ch <-chan struct{}
	require.Eventually(t, func() bool {
		ch = a.WatchRevocations(ctx)
		return !closedWithin(ch, quietFor)
	}, 15*time.Second, time.Millisecond, "listens once LISTEN is accepted")
	f := seedFamily(t, b, u)
	require.NoError(t, b.RevokeRefreshFamily(ctx, "p", f.ID, it0))
	assert.True(t, closedWithin(ch, 5*time.Second), "woke after listening again")
	assert.Contains(t, logs.String(), "listening again")
	assert.Equal(t, 1, strings.Count(logs.String(), "refuses LISTEN"))
}

// TestWatch_TimeoutOptions: the watcher's connect and listen timeouts are
// Options of their own, with defaults in seconds whatever MaxWatchDelay is;
// a negative one is refused.
func TestWatch_TimeoutOptions(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	s := openInternal(t, url)
	assert.Equal(t, DefaultWatchConnectTimeout, s.watch.cfg.ConnectTimeout)
	assert.Equal(t, DefaultWatchListenTimeout, s.watch.listenTimeout)
	assert.Greater(t, DefaultWatchConnectTimeout, maxWatchDelay)

	s, err := Open(t.Context(), url, &Options{Logger: testDiscard, WatchConnectTimeout: 7 * time.Second, WatchListenTimeout: 3 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	assert.Equal(t, 7*time.Second, s.watch.cfg.ConnectTimeout)
	assert.Equal(t, 3*time.Second, s.watch.listenTimeout)

	for _, o := range []Options{{WatchConnectTimeout: -1}, {WatchListenTimeout: -1}} {
		o.Logger = testDiscard
		_, err := Open(t.Context(), url, &o)
		assert.Error(t, err, "%+v", o)
	}
}

// TestWatch_SlowConnect puts the database's connections behind a delay
// several times store.MaxWatchDelay (a server far away, TLS, a busy
// machine): the watcher's connection is made within its own timeout, and it
// listens, without ever taking the slowness for a lost connection. Its
// waiters are woken (polling) while it connects.
func TestWatch_SlowConnect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	px, viaProxy := newProxy(t, url)
	px.DelayConnects(4 * maxWatchDelay)
	var logs syncBuffer
	a, err := Open(ctx, viaProxy, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	b := openInternal(t, url)
	u := seedUser(t, b, "p")

	ch := a.WatchRevocations(ctx)
	require.True(t, closedWithin(ch, 5*time.Second), "woken while the watcher connects")
	require.Eventually(t, func() bool {
		ch = a.WatchRevocations(ctx)
		return !closedWithin(ch, quietFor)
	}, 15*time.Second, time.Millisecond, "listens")
	f := seedFamily(t, b, u)
	require.NoError(t, b.RevokeRefreshFamily(ctx, "p", f.ID, it0))
	assert.True(t, closedWithin(ch, 5*time.Second), "a revocation wakes it")
	assert.NotContains(t, logs.String(), "lost its connection")
}

// watcherGoroutines returns how many goroutines of this process have a
// function whose name contains fn on their stack ("(*watcher)" for any of
// the revocation watcher's). Counting the watcher's own, not every
// goroutine of the process, leaves out those the connection pool and the
// tests before start and end on their own schedule.
func watcherGoroutines(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "store/postgres."+fn) {
			count++
		}
	}
	return count
}
