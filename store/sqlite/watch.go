package sqlite

import (
	"context"
	"sync"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

// Compile-time check that *Store offers the revocation wake-up.
var _ store.RevocationWatcher = (*Store)(nil)

// watchPoll is how often the watcher of a file database reads the change
// version while someone waits; it is well within store.MaxWatchDelay.
const watchPoll = 50 * time.Millisecond

// watcher implements WatchRevocations.
//
// Each caller gets a channel of its own, closed when its context ends or
// when a revocation may have been committed: after a write transaction of
// this Store that added a revocation commits, and, on a file database, when
// the change version (PRAGMA data_version, see version.go) differs from the
// one read when the first of the current waiters arrived, which notices the
// commits of every other handle and process (revocations or not). The
// version is read by one goroutine, every watchPoll, and only while at
// least one caller waits; it ends when the last waiter leaves and when the
// Store closes. A ":memory:" database has no other handle: its own commits
// are all there is to notice.
type watcher struct {
	// version reads the change version; nil for ":memory:".
	version func() (uint64, error)

	mu      sync.Mutex
	waiters map[*waiter]struct{}
	// base is the version read when the poller started; a different
	// version means a commit since. hasBase is false when it could not be
	// read.
	base    uint64
	hasBase bool
	// polling is set while the poller goroutine runs; kick stops it
	// early (the last waiter left, or Close).
	polling bool
	kick    chan struct{}
	closed  bool
	// pollers tracks the poller goroutine, so that close waits for it.
	pollers sync.WaitGroup
}

type waiter struct {
	ch   chan struct{}
	stop func() bool // stops the context's AfterFunc
}

func newWatcher(version func() (uint64, error)) *watcher {
	return &watcher{version: version, waiters: map[*waiter]struct{}{}}
}

// WatchRevocations returns a channel that is closed once a revocation
// committed by any handle on the database after the call returned is
// visible to reads, within store.MaxWatchDelay of the commit, and also
// when ctx ends, when the Store closes and, without a revocation, after
// any other write (the caller then reads the feed again). It implements
// store.RevocationWatcher.
func (s *Store) WatchRevocations(ctx context.Context) <-chan struct{} {
	return s.watch.watch(ctx)
}

func (w *watcher) watch(ctx context.Context) <-chan struct{} {
	wt := &waiter{ch: make(chan struct{})}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || ctx.Err() != nil {
		close(wt.ch)
		return wt.ch
	}
	if w.version != nil && !w.polling {
		// The version the waiters' channels are closed on a change of.
		// Without one (the version cannot be read), the poller closes
		// them at its first tick: the callers read the feed again then,
		// not in a busy loop.
		v, err := w.version()
		w.base, w.hasBase = v, err == nil
		w.polling = true
		w.kick = make(chan struct{})
		kick := w.kick
		w.pollers.Go(func() { w.poll(kick) })
	}
	w.waiters[wt] = struct{}{}
	wt.stop = context.AfterFunc(ctx, func() { w.leave(wt) })
	return wt.ch
}

// leave removes a waiter whose context ended and closes its channel.
func (w *watcher) leave(wt *waiter) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.waiters[wt]; !ok {
		return
	}
	delete(w.waiters, wt)
	close(wt.ch)
	if len(w.waiters) == 0 {
		w.stopPolling()
	}
}

// wakeLocked closes every waiter's channel. w.mu is held.
func (w *watcher) wakeLocked() {
	for wt := range w.waiters {
		wt.stop()
		close(wt.ch)
	}
	clear(w.waiters)
	w.stopPolling()
}

// stopPolling ends the poller, if one runs. w.mu is held.
func (w *watcher) stopPolling() {
	if w.polling {
		close(w.kick)
		w.polling = false
	}
}

// revoked wakes every waiter after a write transaction of this Store that
// added a revocation has committed.
func (w *watcher) revoked() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.waiters) > 0 {
		w.wakeLocked()
	}
}

// poll reads the version every watchPoll until it changes (and wakes the
// waiters) or kick is closed.
func (w *watcher) poll(kick chan struct{}) {
	t := time.NewTicker(watchPoll)
	defer t.Stop()
	for {
		select {
		case <-kick:
			return
		case <-t.C:
		}
		v, err := w.version()
		w.mu.Lock()
		select {
		case <-kick:
			w.mu.Unlock()
			return
		default:
		}
		if err != nil || !w.hasBase || v != w.base {
			// A commit, or a version that cannot be read: either way the
			// waiters read the feed again.
			w.wakeLocked()
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
	}
}

// close wakes every waiter, refuses new ones and waits for the poller to
// end.
func (w *watcher) close() {
	w.mu.Lock()
	w.closed = true
	w.wakeLocked()
	w.mu.Unlock()
	w.pollers.Wait()
}
