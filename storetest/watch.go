package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

// wakeBound is how long a case waits for a channel the contract says must
// close. The contract's bound is store.MaxWatchDelay; a shared machine under
// load may take longer to run the watcher's goroutine, and a case checks that
// the wake-up comes, not how fast.
const wakeBound = 5 * time.Second

// revokingWrite is one write the contract says wakes the RevocationWatchers.
// prepare makes what the write needs (before anyone watches); write commits
// it; seen checks, through the watching handle, what the wake-up promised
// to be visible.
type revokingWrite struct {
	name    string
	prepare func(t *testing.T, s store.Store) (write func() error, seen func(t *testing.T, s store.Store))
}

// revokingWrites are the writes of the RevocationWatcher contract: each
// revocation a store adds to the feed (RevokeAPIKey, RetireSigningKey,
// RevokeRefreshFamily, RotateRefresh on a replay, DisableUser,
// EndUserSessions), and the two that schedule one (RollAPIKey,
// ScheduleSessionEnd), which NextScheduledRevocation then names.
func revokingWrites() []revokingWrite {
	inFeed := func(t *testing.T, s store.Store) {
		t.Helper()
		require.NotEmpty(t, feedList(s, projA).all(t), "the watcher's handle lists no revocation after the wake-up")
	}
	scheduled := func(at time.Time) func(t *testing.T, s store.Store) {
		return func(t *testing.T, s store.Store) {
			t.Helper()
			next, err := s.NextScheduledRevocation(t.Context(), projA)
			require.NoError(t, err, "NextScheduledRevocation after the wake-up")
			wantTime(t, at, next, "NextScheduledRevocation through the watcher's handle after the wake-up")
		}
	}
	ctx := context.Background() // the writes run within the case that prepared them
	return []revokingWrite{
		{"RevokeAPIKey", func(t *testing.T, s store.Store) (func() error, func(*testing.T, store.Store)) {
			mustProject(t, s, projA)
			k := mustAPIKey(t, s, projA, "key_watched", base)
			return func() error { return s.RevokeAPIKey(ctx, projA, k.ID, time.Now()) }, inFeed
		}},
		{"RetireSigningKey", func(t *testing.T, s store.Store) (func() error, func(*testing.T, store.Store)) {
			mustProject(t, s, projA)
			old := mustSigningKey(t, s, projA, "sk_old", base)
			mustSigningKey(t, s, projA, "sk_new", base.Add(time.Hour))
			return func() error { return s.RetireSigningKey(ctx, projA, old.ID, time.Now()) }, inFeed
		}},
		{"RevokeRefreshFamily", func(t *testing.T, s store.Store) (func() error, func(*testing.T, store.Store)) {
			f := mustFamily(t, s, projA)
			return func() error { return s.RevokeRefreshFamily(ctx, projA, f.ID, time.Now()) }, inFeed
		}},
		{"RotateRefreshReplay", func(t *testing.T, s store.Store) (func() error, func(*testing.T, store.Store)) {
			f := mustFamily(t, s, projA)
			first := rotateParams(base.Add(time.Minute))
			rotate(t, s, f, 0, first)
			return func() error {
				_, err := s.RotateRefresh(ctx, projA, f.ID, 0, rotateParams(first.Now.Add(time.Hour)))
				if errors.Is(err, store.ErrReplayed) {
					return nil
				}
				return fmt.Errorf("RotateRefresh of generation 0 after its window = %v, want ErrReplayed", err)
			}, inFeed
		}},
		{"DisableUser", func(t *testing.T, s store.Store) (func() error, func(*testing.T, store.Store)) {
			mustProject(t, s, projA)
			u := mustUser(t, s, projA, "watched@example.com")
			return func() error { return s.DisableUser(ctx, projA, u.ID, time.Now()) }, inFeed
		}},
		{"EndUserSessions", func(t *testing.T, s store.Store) (func() error, func(*testing.T, store.Store)) {
			f := mustFamily(t, s, projA)
			return func() error { return s.EndUserSessions(ctx, projA, f.UserID, time.Now()) }, inFeed
		}},
		{"RollAPIKey", func(t *testing.T, s store.Store) (func() error, func(*testing.T, store.Store)) {
			mustProject(t, s, projA)
			k := mustAPIKey(t, s, projA, "key_rolled", base)
			due := time.Now().Add(time.Hour)
			return func() error {
				_, err := s.RollAPIKey(ctx, projA, k.ID, successorOf(k, "key_next", time.Now()), due)
				return err
			}, scheduled(due)
		}},
		{"ScheduleSessionEnd", func(t *testing.T, s store.Store) (func() error, func(*testing.T, store.Store)) {
			mustProject(t, s, projA)
			u := mustUser(t, s, projA, "ending@example.com")
			now := time.Now()
			f := newFamily(projA, u.ID, now, 2*time.Hour)
			f.EndsAt = now.Add(time.Hour)
			require.NoError(t, s.CreateRefreshFamily(t.Context(), f, userHash), "CreateRefreshFamily with an EndsAt")
			return func() error { return s.ScheduleSessionEnd(ctx, projA, f.ID) }, scheduled(f.EndsAt)
		}},
	}
}

// watchCases are the RevocationWatcher cases on one handle: each revoking
// write wakes a watcher of the handle that committed it, and a channel
// closes when its context ends.
func watchCases() []testCase {
	var cases []testCase
	for _, w := range revokingWrites() {
		cases = append(cases, testCase{w.name + "Wakes", func(t *testing.T, s store.Store) { testWatchWakes(t, w, s, s) }})
	}
	return append(cases,
		testCase{"ContextEnds", testWatchContextEnds},
		testCase{"EndedContext", testWatchEndedContext},
	)
}

// sharedWatchCases are the RevocationWatcher cases on two handles: each
// revoking write committed through one wakes a watcher of the other (two
// server instances, or the CLI and a server, in production).
func sharedWatchCases() []sharedCase {
	var cases []sharedCase
	for _, w := range revokingWrites() {
		cases = append(cases, sharedCase{"RevocationWatcher/" + w.name + "WakesOther", func(t *testing.T, a, b store.Store) { testWatchWakes(t, w, a, b) }})
	}
	return cases
}

// testWatchWakes: a channel that watcher's WatchRevocations returned before
// writer committed w is closed after the commit, and then the watcher's
// handle reads what w did.
func testWatchWakes(t *testing.T, w revokingWrite, watcher, writer store.Store) {
	write, seen := w.prepare(t, writer)
	ch := quietWatch(t, capability[store.RevocationWatcher](t, watcher))
	require.NoErrorf(t, write(), "%s", w.name)
	select {
	case <-ch:
	case <-time.After(wakeBound):
		t.Fatalf("a watcher's channel was still open %v after %s committed (the contract's bound is %v)", wakeBound, w.name, store.MaxWatchDelay)
	}
	seen(t, watcher)
}

// quietWatch returns a channel of w that stayed open for a moment with
// nothing committed. The contract allows a channel to close without a
// revocation (the caller reads the feed and watches again, as here), but a
// watcher whose every channel closes at once would have its callers read
// the feed in a loop.
func quietWatch(t *testing.T, w store.RevocationWatcher) <-chan struct{} {
	t.Helper()
	const tries, quiet = 10, 20 * time.Millisecond
	for range tries {
		ch := w.WatchRevocations(t.Context())
		select {
		case <-ch:
			continue
		case <-time.After(quiet):
			return ch
		}
	}
	t.Fatalf("WatchRevocations: each of %d channels closed within %v with nothing committed", tries, quiet)
	return nil
}

// A channel closes when its context ends.
func testWatchContextEnds(t *testing.T, s store.Store) {
	w := capability[store.RevocationWatcher](t, s)
	ctx, cancel := context.WithCancel(t.Context())
	ch := w.WatchRevocations(ctx)
	cancel()
	select {
	case <-ch:
	case <-time.After(wakeBound):
		t.Fatalf("a watcher's channel was still open %v after its context ended", wakeBound)
	}
}

// A context that has ended gives a closed channel.
func testWatchEndedContext(t *testing.T, s store.Store) {
	w := capability[store.RevocationWatcher](t, s)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	select {
	case <-w.WatchRevocations(ctx):
	case <-time.After(wakeBound):
		t.Fatalf("a channel of an ended context was still open after %v", wakeBound)
	}
}
