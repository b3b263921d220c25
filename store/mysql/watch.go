package mysql

import (
	"context"
	"sync"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

// maxWatchInterval caps the poll interval so that, with a poll's own
// duration, a wake-up comes within store.MaxWatchDelay of a commit.
const maxWatchInterval = store.MaxWatchDelay * 2 / 5

// watchPollTimeout bounds one poll.
const watchPollTimeout = store.MaxWatchDelay / 2

// watchSQL is the watcher's poll: how many revocations every project's feed
// has ever had, and revocations scheduled, summed. Every revoking
// transaction raises its project's count when it adds its item
// (raiseFloorSQL), and a roll when it schedules one (countFeedChangeSQL), so
// the sum a poll reads grows with every such commit before the poll's
// snapshot, whichever instance committed it and in whatever order the
// transactions began. It
// reads the covering index projects_revocations_count: a scan of one small
// entry per project.
const watchSQL = `SELECT CAST(COALESCE(SUM(revocations_count), 0) AS SIGNED) FROM projects`

// WatchRevocations implements [store.RevocationWatcher]: the returned channel
// is closed once a revocation committed by any handle on the database after
// the call returned is visible to reads, and in any case within
// store.MaxWatchDelay of that commit; or when ctx ends; or earlier, without
// a revocation (the caller reads the feed again and watches again).
//
// MySQL has no LISTEN/NOTIFY, so the store polls: while at least one caller
// waits, one goroutine reads watchSQL every Options.WatchInterval (50 ms
// by default) on a connection of the pool, and closes the waiting channels
// when the sum changes. When nobody waits it stops. A first caller reads
// the sum itself before the call returns, so that a revocation committed
// just after is not taken for the starting point. A failing poll (the
// database unreachable) closes every waiting channel and is logged once
// until a poll succeeds again; the next successful poll closes them again,
// since what happened meanwhile is unknown.
func (s *Store) WatchRevocations(ctx context.Context) <-chan struct{} {
	return s.watch.watch(ctx)
}

// watcher is the state behind WatchRevocations.
type watcher struct {
	s        *Store
	interval time.Duration

	mu       sync.Mutex
	waiters  map[chan struct{}]func() bool // each with its context's AfterFunc stop; guarded by mu
	running  bool                          // a poll loop runs; guarded by mu
	last     int64                         // the sum the last poll read; guarded by mu
	haveLast bool                          // last is known; guarded by mu
	failing  bool                          // the last poll failed (logged); guarded by mu
	closed   bool                          // guarded by mu
	done     chan struct{}
}

func newWatcher(s *Store, interval time.Duration) *watcher {
	return &watcher{s: s, interval: interval, waiters: map[chan struct{}]func() bool{}, done: make(chan struct{})}
}

func (w *watcher) watch(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{})
	w.mu.Lock()
	if w.closed || ctx.Err() != nil {
		w.mu.Unlock()
		close(ch)
		return ch
	}
	if !w.running {
		w.mu.Unlock()
		v, err := w.poll(ctx)
		w.mu.Lock()
		if !w.running && !w.closed {
			w.running = true
			w.last, w.haveLast = v, err == nil
			go w.loop()
		}
		if w.closed {
			w.mu.Unlock()
			close(ch)
			return ch
		}
	}
	// The AfterFunc is stopped when the channel is closed otherwise, so
	// that a long-lived context watching many times keeps no registration
	// per call.
	w.waiters[ch] = context.AfterFunc(ctx, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if _, ok := w.waiters[ch]; ok {
			delete(w.waiters, ch)
			close(ch)
		}
	})
	w.mu.Unlock()
	return ch
}

// loop polls while anybody waits.
func (w *watcher) loop() {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-t.C:
		}
		w.mu.Lock()
		if len(w.waiters) == 0 || w.closed {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		v, err := w.poll(context.Background())
		w.mu.Lock()
		switch {
		case err != nil:
			if !w.failing {
				w.s.log.Warn("mysql: revocation watcher: poll failed; waking every waiter at each poll until it succeeds", "err", err)
			}
			w.failing = true
			w.haveLast = false
			w.wakeLocked()
		case !w.haveLast || v != w.last:
			if w.failing {
				w.s.log.Info("mysql: revocation watcher: polling again")
			}
			w.failing = false
			w.last, w.haveLast = v, true
			w.wakeLocked()
		}
		w.mu.Unlock()
	}
}

// poll reads watchSQL once.
func (w *watcher) poll(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, watchPollTimeout)
	defer cancel()
	var v int64
	err := w.s.read(ctx, "watch revocations", func(q querier) error {
		return q.QueryRowContext(ctx, watchSQL).Scan(&v)
	})
	return v, err
}

// wakeLocked closes every waiting channel. w.mu is held.
func (w *watcher) wakeLocked() {
	for ch, stop := range w.waiters {
		stop() // does not wait for the AfterFunc, which finds ch gone
		close(ch)
		delete(w.waiters, ch)
	}
}

// close stops the loop and closes every waiting channel.
func (w *watcher) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	close(w.done)
	w.wakeLocked()
}
