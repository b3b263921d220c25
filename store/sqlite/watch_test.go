package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

// polling reports whether s's watcher runs its poller.
func polling(s *Store) bool {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	return s.watch.polling
}

// waiters returns how many callers wait on s's watcher.
func waiters(s *Store) int {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	return len(s.watch.waiters)
}

// revocable creates project "p" with an API key "key_<n>" for n in 0..k-1.
func revocable(t *testing.T, s *Store, k int) {
	t.Helper()
	ctx := t.Context()
	now := time.Now()
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: now}))
	for i := range k {
		require.NoError(t, s.CreateAPIKey(ctx, store.APIKey{ID: "key_" + string(rune('a'+i)), ProjectID: "p", Name: "k", CreatedAt: now}))
	}
}

// isClosed reports whether ch is closed, waiting at most d.
func isClosed(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	default:
	}
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// TestWatch_OtherHandle: a revocation committed through another handle on
// the file (another process's, in production) closes the channel within
// store.MaxWatchDelay; without a commit, the channel stays open.
func TestWatch_OtherHandle(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "w.db")
	a := openFile(t, path, nil)
	b := openFile(t, path, nil)
	revocable(t, b, 1)
	ch := a.WatchRevocations(t.Context())
	require.False(t, isClosed(ch, 4*watchPoll), "closed with no commit")
	start := time.Now()
	require.NoError(t, b.RevokeAPIKey(t.Context(), "p", "key_a", time.Now()))
	require.True(t, isClosed(ch, store.MaxWatchDelay), "not closed within MaxWatchDelay of the commit")
	t.Logf("woken %v after the commit", time.Since(start))
	require.Eventually(t, func() bool { return !polling(a) }, time.Second, time.Millisecond, "the poller ends with its last waiter")
}

// TestWatch_OwnRevocation: a revocation of this store closes every waiting
// channel at once, on a file and in memory (where nothing is polled).
func TestWatch_OwnRevocation(t *testing.T) {
	t.Parallel()
	for _, path := range []string{filepath.Join(t.TempDir(), "w.db"), MemoryPath} {
		s := openFile(t, path, nil)
		revocable(t, s, 1)
		ch1 := s.WatchRevocations(t.Context())
		ch2 := s.WatchRevocations(t.Context())
		if path == MemoryPath {
			require.False(t, polling(s), "nothing to poll in memory")
			// A write that revokes nothing leaves them waiting.
			require.NoError(t, s.TouchAPIKey(t.Context(), "p", "key_a", time.Now()))
			require.False(t, isClosed(ch1, 20*time.Millisecond), "%s: closed by a write that revoked nothing", path)
		}
		require.NoError(t, s.RevokeAPIKey(t.Context(), "p", "key_a", time.Now()))
		require.True(t, isClosed(ch1, 0), "%s: first waiter not woken by the commit", path)
		require.True(t, isClosed(ch2, 0), "%s: second waiter not woken by the commit", path)
		require.Zero(t, waiters(s))
	}
}

// TestWatch_ContextEnds: a waiter's channel closes when its context ends,
// others keep waiting, and no goroutine runs once nobody waits.
func TestWatch_ContextEnds(t *testing.T) {
	t.Parallel()
	s := openFile(t, filepath.Join(t.TempDir(), "w.db"), nil)
	ctx1, cancel1 := context.WithCancel(t.Context())
	ctx2, cancel2 := context.WithCancel(t.Context())
	defer cancel2()
	require.False(t, polling(s), "no goroutine before anyone waits")
	ch1 := s.WatchRevocations(ctx1)
	ch2 := s.WatchRevocations(ctx2)
	require.True(t, polling(s), "one poller while someone waits")
	cancel1()
	require.True(t, isClosed(ch1, time.Second), "closed when its context ends")
	require.False(t, isClosed(ch2, 2*watchPoll), "another waiter keeps waiting")
	require.True(t, polling(s))
	cancel2()
	require.True(t, isClosed(ch2, time.Second))
	require.False(t, polling(s), "the poller stops when the last waiter leaves")

	done, cancel := context.WithCancel(t.Context())
	cancel()
	require.True(t, isClosed(s.WatchRevocations(done), 0), "an ended context gets a closed channel")
	require.False(t, polling(s))
}

// TestWatch_Close: Close wakes every waiter and stops the poller; a watch
// after Close returns a closed channel.
func TestWatch_Close(t *testing.T) {
	t.Parallel()
	s := openFile(t, filepath.Join(t.TempDir(), "w.db"), nil)
	ch := s.WatchRevocations(t.Context())
	require.True(t, polling(s))
	require.NoError(t, s.Close())
	require.True(t, isClosed(ch, 0), "Close wakes the waiters")
	require.False(t, polling(s))
	require.True(t, isClosed(s.WatchRevocations(t.Context()), 0))
}

// TestWatch_VersionFails: when the version cannot be read, a waiter is
// woken at the poller's next tick, so that a caller that watches in a loop
// reads the feed at that pace rather than in a busy loop.
func TestWatch_VersionFails(t *testing.T) {
	t.Parallel()
	w := newWatcher(func() (uint64, error) { return 0, errors.New("broken") })
	defer w.close()
	start := time.Now()
	ch := w.watch(t.Context())
	require.True(t, isClosed(ch, time.Second), "woken")
	require.GreaterOrEqual(t, time.Since(start), watchPoll, "not before the poller's tick")
}
