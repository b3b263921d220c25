package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/latchkey-dev/latchkey/store"
)

// revocationChannel is the channel every revoking transaction notifies
// (pg_notify, delivered when it commits) and the watchers LISTEN on.
// Notifications are per database, so stores on other databases of the same
// server do not wake each other.
const revocationChannel = "latchkey_revocations"

// The watcher's timing. Its connection's timeouts (Options.WatchConnectTimeout
// and WatchListenTimeout) are its own; the rest keeps store.MaxWatchDelay
// whatever they are.
const (
	maxWatchDelay = store.MaxWatchDelay
	// watchProbeAfter is how long the listener waits for a notification
	// before it checks that its connection still answers. The check may
	// take up to WatchListenTimeout; once it has taken watchProbeOverdue,
	// every waiter is woken each watchLostTick until it answers, as while
	// no connection listens. A notification lost by a connection that died
	// without a word (no reset reached the client) thus costs a waiter at
	// most watchProbeAfter + watchProbeOverdue after the commit, inside
	// maxWatchDelay.
	watchProbeAfter   = maxWatchDelay / 3
	watchProbeOverdue = maxWatchDelay / 3
	// watchLostTick is how often channels are closed while there is no
	// listening connection (or while making one, or while a check is
	// overdue).
	watchLostTick = maxWatchDelay / 2
	// watchRetryMax bounds the pause between two attempts to connect and
	// listen, which doubles from watchLostTick after each failure, so that
	// a server that refuses LISTEN (a hot standby) is not asked on every
	// tick. The waiters are woken on every tick meanwhile.
	watchRetryMax = 2 * time.Second
)

// Defaults of the watcher's timeouts.
const (
	// DefaultWatchConnectTimeout is Options.WatchConnectTimeout's default.
	DefaultWatchConnectTimeout = 5 * time.Second
	// DefaultWatchListenTimeout is Options.WatchListenTimeout's default.
	DefaultWatchListenTimeout = 5 * time.Second
)

// listenSQL starts listening on the connection; pingSQL proves that the
// connection answers and, because PostgreSQL sends pending notifications
// before it answers, that every notification committed before it was sent
// has arrived.
const (
	listenSQL = `LISTEN ` + revocationChannel
	pingSQL   = `-- ping`
)

// WatchRevocations implements [store.RevocationWatcher]: the returned channel
// is closed once a revocation committed by any handle on the database after
// the call returned is visible to reads, and in any case within
// store.MaxWatchDelay of that commit; or when ctx ends; or earlier, without
// a revocation (the caller reads the feed again and watches again).
//
// While at least one caller waits, one goroutine holds a dedicated
// connection (not one of the pool's) that LISTENs on revocationChannel, and
// closes the waiting channels on each notification. It checks the
// connection whenever no notification came for a while; if the connection
// is lost it closes every waiting channel, reconnects, and meanwhile closes
// the channels at least every store.MaxWatchDelay. When nobody waits the
// goroutine ends and the connection is kept, idle, for the next caller.
// Close stops it all.
//
// A first caller waits until the connection listens (or for at most
// store.MaxWatchDelay), so that it does not need a spurious wake-up.
//
// A server that refuses LISTEN (a hot standby: "cannot execute LISTEN
// during recovery") or cannot be reached leaves the watcher polling: it
// logs that once, wakes the waiters every tick, and tries again after a
// pause that grows to watchRetryMax. When the store sees that the
// database's identity changed (a failover, see identity.go), the watcher
// drops its connection, wakes every waiter and listens again.
func (s *Store) WatchRevocations(ctx context.Context) <-chan struct{} {
	return s.watch.watch(ctx)
}

// watchState is where the watcher is.
type watchState int

const (
	watchIdle     watchState = iota // no goroutine: nobody waits
	watchStarting                   // a goroutine connects or checks the kept connection
	watchReady                      // a goroutine listens
	watchLost                       // a goroutine reconnects; channels close on a tick
)

// watcher is the state behind WatchRevocations.
type watcher struct {
	cfg           *pgx.ConnConfig
	log           *slog.Logger
	listenTimeout time.Duration
	listenSQL     string // listenSQL; tests change it before the first watch
	// stop ends a connection attempt when the store is closed.
	stop       context.Context
	cancelStop context.CancelFunc

	mu      sync.Mutex
	waiters map[*waiter]struct{}
	state   watchState
	// ready is closed when the state becomes watchReady; a new one is
	// made when it leaves it.
	ready chan struct{}
	// interrupt ends the running goroutine's current wait, so that it
	// looks at the waiters again (nil while no goroutine runs).
	interrupt context.CancelFunc
	// kept is the listening connection while no goroutine runs.
	kept   *pgx.Conn
	closed bool
	// stale is set when the database's identity changed: the goroutine
	// drops its connection (or the kept one) at its next turn.
	stale bool
	// refusedLogged is set once a refused LISTEN was logged, until the
	// watcher listens again.
	refusedLogged bool

	// precautions counts the wakes no notification caused: of waiters that
	// returned before the watcher listened, and of all waiters while no
	// connection listens or a check of it is overdue. The contract allows
	// them; it is counted before the channels close, so that tests can
	// tell them from a wake that would be wrong.
	precautions atomic.Int64
	// done is closed when the running goroutine returns.
	done chan struct{}
}

// waiter is one WatchRevocations call.
type waiter struct {
	ch chan struct{}
	// early: the call returned while the watcher was not listening, so a
	// notification may have been missed; the channel is closed as soon as
	// the watcher listens again.
	early bool
	// stopCtx unregisters the function that removes the waiter when its
	// context ends.
	stopCtx func() bool
}

// watcherAppName is the application_name of the watcher's connection, so
// that it can be told from the pool's in pg_stat_activity.
const watcherAppName = "latchkey-revocation-watcher"

// newWatcher returns the watcher of a store on cfg's database. Making its
// connection takes at most connectTimeout per host tried; its LISTEN and
// its checks of the connection, at most listenTimeout.
func newWatcher(cfg *pgx.ConnConfig, log *slog.Logger, connectTimeout, listenTimeout time.Duration) *watcher {
	c := cfg.Copy()
	if c.RuntimeParams == nil {
		c.RuntimeParams = map[string]string{}
	}
	c.RuntimeParams["application_name"] = watcherAppName
	c.ConnectTimeout = connectTimeout
	stop, cancel := context.WithCancel(context.Background())
	return &watcher{
		cfg: c, log: log, listenTimeout: listenTimeout, listenSQL: listenSQL,
		stop: stop, cancelStop: cancel,
		waiters: map[*waiter]struct{}{}, ready: make(chan struct{}),
	}
}

func (w *watcher) watch(ctx context.Context) <-chan struct{} {
	wt := &waiter{ch: make(chan struct{})}
	w.mu.Lock()
	if w.closed || ctx.Err() != nil {
		w.mu.Unlock()
		close(wt.ch)
		return wt.ch
	}
	w.waiters[wt] = struct{}{}
	wt.stopCtx = context.AfterFunc(ctx, func() { w.remove(wt) })
	if w.state == watchIdle {
		w.start()
	}
	starting, ready := w.state == watchStarting, w.ready
	w.mu.Unlock()

	if starting {
		t := time.NewTimer(maxWatchDelay)
		select {
		case <-ready:
		case <-wt.ch:
		case <-t.C:
		}
		t.Stop()
	}
	w.mu.Lock()
	if _, ok := w.waiters[wt]; ok && w.state != watchReady {
		wt.early = true
	}
	w.mu.Unlock()
	return wt.ch
}

// start starts the goroutine, on the kept connection if there is one.
// w.mu is held.
func (w *watcher) start() {
	w.state = watchStarting
	conn := w.kept
	w.kept = nil
	w.done = make(chan struct{})
	go w.run(conn, w.done)
}

// remove closes and forgets wt when its context ends, and lets the
// goroutine end if nobody waits any more.
func (w *watcher) remove(wt *waiter) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.waiters[wt]; !ok {
		return
	}
	delete(w.waiters, wt)
	close(wt.ch)
	if len(w.waiters) == 0 && w.interrupt != nil {
		w.interrupt()
	}
}

// wakeAll closes and forgets every waiter, or only the early ones. w.mu is
// held.
func (w *watcher) wakeAll(earlyOnly bool) {
	for wt := range w.waiters {
		if earlyOnly && !wt.early {
			continue
		}
		delete(w.waiters, wt)
		wt.stopCtx()
		close(wt.ch)
	}
}

// notified wakes every waiter: a revocation may have been committed.
func (w *watcher) notified() {
	w.mu.Lock()
	w.wakeAll(false)
	w.mu.Unlock()
}

// listening records that the goroutine listens, and wakes the waiters that
// returned while it did not.
func (w *watcher) listening() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state == watchLost || w.refusedLogged {
		w.log.Info("postgres: revocation watcher listening again")
	}
	w.state = watchReady
	w.refusedLogged = false
	close(w.ready)
	for wt := range w.waiters {
		if wt.early {
			w.precautions.Add(1)
			break
		}
	}
	w.wakeAll(true)
}

// lost records that there is no listening connection and wakes every
// waiter: a notification may have been missed. It logs the first loss
// until the watcher listens again, and the first refused LISTEN.
func (w *watcher) lost(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case errors.Is(err, errListenRefused):
		if !w.refusedLogged {
			w.refusedLogged = true
			w.log.Warn("postgres: the database refuses LISTEN (a standby in recovery?); the revocation watcher polls, waking waiters every tick, until it can listen",
				"err", wrap("watch revocations", err))
		}
	case w.state != watchLost:
		w.log.Warn("postgres: revocation watcher lost its connection; waking waiters every tick until it is back",
			"err", wrap("watch revocations", err))
	}
	if w.state == watchReady {
		w.ready = make(chan struct{})
	}
	w.state = watchLost
	w.precautions.Add(1)
	w.wakeAll(false)
}

// next returns the context of the goroutine's next wait, or false when the
// goroutine must end: nobody waits, or the store is closed. Ending, it keeps
// conn for the next start (or closes it after Close).
func (w *watcher) next(conn *pgx.Conn) (context.Context, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.interrupt != nil {
		w.interrupt()
		w.interrupt = nil
	}
	if w.closed || len(w.waiters) == 0 {
		if w.state == watchReady {
			w.ready = make(chan struct{})
		}
		w.state = watchIdle
		if w.closed && conn != nil {
			conn.Close(context.Background())
		} else {
			w.kept = conn
		}
		return nil, false
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.interrupt = cancel
	return ctx, true
}

// run is the goroutine: it listens on conn (or a new connection when conn is
// nil) while anybody waits.
func (w *watcher) run(conn *pgx.Conn, done chan struct{}) {
	defer close(done)
	var lastWake, nextTry time.Time
	retry := watchLostTick
	for {
		ctx, ok := w.next(conn)
		if !ok {
			return
		}
		if w.takeStale() && conn != nil {
			// The database's identity changed: this connection may be
			// on the old one.
			conn.Close(context.Background())
			conn = nil
			w.lost(errIdentityChanged)
			lastWake = time.Now()
		}
		if w.current() == watchLost {
			// Wake at least every watchLostTick while no connection
			// listens.
			w.lost(nil)
			lastWake = time.Now()
		}
		if conn == nil {
			if time.Now().Before(nextTry) {
				sleep(ctx, min(time.Until(lastWake.Add(watchLostTick)), time.Until(nextTry)))
				continue
			}
			var err error
			conn, err = w.connect()
			if err != nil {
				w.lost(err)
				lastWake = time.Now()
				nextTry = lastWake.Add(retry)
				retry = min(2*retry, watchRetryMax)
				sleep(ctx, watchLostTick)
				continue
			}
			retry, nextTry = watchLostTick, time.Time{}
			w.listening()
		} else if w.current() != watchReady {
			// A kept connection: prove it still listens, and drop the
			// notifications it buffered while nobody waited.
			if err := w.probe(conn); err != nil {
				conn.Close(context.Background())
				conn = nil
				w.lost(err)
				continue
			}
			drainNotifications(conn)
			w.listening()
		}

		wctx, cancel := context.WithTimeout(ctx, watchProbeAfter)
		_, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			w.notified()
		case ctx.Err() != nil:
			// Interrupted: look at the waiters again.
		case wctx.Err() != nil:
			err = w.probe(conn)
		}
		if err != nil && ctx.Err() == nil || conn.IsClosed() {
			conn.Close(context.Background())
			conn = nil
			w.lost(err)
		}
	}
}

// current returns the state.
func (w *watcher) current() watchState {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state
}

// errListenRefused marks the error of a LISTEN the server refused (a hot
// standby refuses it during recovery).
var errListenRefused = errors.New("the server refused LISTEN")

// errIdentityChanged is why the watcher drops a connection when the
// store sees that the database's identity changed.
var errIdentityChanged = errors.New("the database's identity changed")

// connect opens a connection, within the connect timeout per host, and
// LISTENs on it, within the listen timeout, waking every waiter each
// watchLostTick meanwhile. A LISTEN the server refuses is an error matching
// errListenRefused.
func (w *watcher) connect() (*pgx.Conn, error) {
	var conn *pgx.Conn
	err := w.wakeWhile(watchLostTick, func() error {
		var err error
		conn, err = pgx.ConnectConfig(w.stop, w.cfg)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(w.stop, w.listenTimeout)
		defer cancel()
		if _, err := conn.Exec(ctx, w.listenSQL); err != nil {
			conn.Close(context.Background())
			conn = nil
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) {
				return fmt.Errorf("%w: %w", errListenRefused, err)
			}
			return err
		}
		return nil
	})
	return conn, err
}

// probe checks, within the listen timeout, that conn answers;
// notifications that arrive meanwhile are buffered by pgx for
// WaitForNotification. Once the answer is overdue (watchProbeOverdue), it
// wakes every waiter each watchLostTick until it comes.
func (w *watcher) probe(conn *pgx.Conn) error {
	return w.wakeWhile(watchProbeOverdue, func() error {
		ctx, cancel := context.WithTimeout(w.stop, w.listenTimeout)
		defer cancel()
		_, err := conn.Exec(ctx, pingSQL)
		return err
	})
}

// wakeWhile runs fn and, if it has not returned after first, wakes every
// waiter then and each watchLostTick after until it does: while fn runs no
// notification can be relied on.
func (w *watcher) wakeWhile(first time.Duration, fn func() error) error {
	stop := make(chan struct{})
	ticking := make(chan struct{})
	go func() {
		defer close(ticking)
		t := time.NewTimer(first)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				w.precautions.Add(1)
				w.notified()
				t.Reset(watchLostTick)
			}
		}
	}()
	err := fn()
	close(stop)
	<-ticking
	return err
}

// reconnect makes the watcher drop its connection, because the database's
// identity changed: a kept connection is closed now, a running goroutine's
// at its next turn, when it also wakes every waiter.
func (w *watcher) reconnect() {
	w.mu.Lock()
	kept := w.kept
	w.kept = nil
	if w.state != watchIdle {
		w.stale = true
		if w.interrupt != nil {
			w.interrupt()
		}
	}
	w.mu.Unlock()
	if kept != nil {
		// Not on the caller's goroutine: it is connecting a connection
		// of the pool.
		go kept.Close(context.Background())
	}
}

// takeStale reports whether the connection must be dropped, and clears
// that.
func (w *watcher) takeStale() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	stale := w.stale
	w.stale = false
	return stale
}

// drainNotifications drops the notifications pgx has buffered on conn.
func drainNotifications(conn *pgx.Conn) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for {
		// With an ended context WaitForNotification only returns what
		// is buffered.
		if n, _ := conn.WaitForNotification(ctx); n == nil {
			return
		}
	}
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// close stops the goroutine, wakes every waiter for good and closes the
// connection.
func (w *watcher) close() {
	w.cancelStop()
	w.mu.Lock()
	w.closed = true
	w.wakeAll(false)
	if w.interrupt != nil {
		w.interrupt()
	}
	done, kept := w.done, w.kept
	running := w.state != watchIdle
	w.kept = nil
	w.mu.Unlock()
	if running {
		<-done
	}
	if kept != nil {
		kept.Close(context.Background())
	}
}
