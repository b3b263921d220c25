package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// queued returns how many requests wait in s's group queue.
func queued(s *Store) int {
	s.group.mu.Lock()
	defer s.group.mu.Unlock()
	return len(s.group.queue)
}

// leadingAlone reports whether a leader runs with nobody queued.
func leadingAlone(s *Store) bool {
	s.group.mu.Lock()
	defer s.group.mu.Unlock()
	return s.group.leading && len(s.group.queue) == 0
}

// TestGroupCommit_IsolatesRequests runs one batch holding successes, a
// failing request (rolled back alone) and a replay (kept, with its error),
// and checks each caller gets its own outcome.
func TestGroupCommit_IsolatesRequests(t *testing.T) {
	t.Parallel()
	s := openFile(t, filepath.Join(t.TempDir(), "g.db"), nil)
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: now}))
	require.NoError(t, s.CreateUser(ctx, store.User{ID: "usr_1", ProjectID: "p", Email: "a@example.com", PasswordHash: "h", CreatedAt: now}))
	fam := store.RefreshFamily{ID: "rf_1", ProjectID: "p", UserID: "usr_1", IssuedAt: now, ExpiresAt: now.Add(time.Hour), CreatedAt: now}
	require.NoError(t, s.CreateRefreshFamily(ctx, fam, "h"))
	for gen := range int64(2) {
		_, err := s.RotateRefresh(ctx, "p", "rf_1", gen, store.RotateParams{Now: now, TTL: time.Hour})
		require.NoError(t, err)
	}
	_, err := s.CreateContact(ctx, store.Contact{ID: "ct_dup", ProjectID: "p", Name: "n", CreatedAt: now})
	require.NoError(t, err)

	// Hold the write connection so that the requests below queue up.
	release := make(chan struct{})
	holding := make(chan struct{})
	go func() {
		_ = s.inTx(ctx, func(*wtx) error { close(holding); <-release; return nil })
	}()
	<-holding
	var wg sync.WaitGroup
	// The first caller leads a batch of its own and waits for the
	// connection; the rest queue behind it and run as one batch.
	wg.Go(func() {
		_, err := s.CreateContact(ctx, store.Contact{ID: "ct_lead", ProjectID: "p", Name: "n", CreatedAt: now})
		require.NoError(t, err)
	})
	require.Eventually(t, func() bool { return leadingAlone(s) }, 5*time.Second, time.Millisecond)
	const n = 10
	errs := make([]error, n+2)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = s.CreateContact(ctx, store.Contact{ID: fmt.Sprintf("ct_%02d", i), ProjectID: "p", Name: "n", CreatedAt: now})
		})
	}
	wg.Go(func() {
		_, errs[n] = s.CreateContact(ctx, store.Contact{ID: "ct_dup", ProjectID: "p", Name: "n", CreatedAt: now})
	})
	wg.Go(func() {
		_, errs[n+1] = s.RotateRefresh(ctx, "p", "rf_1", 0, store.RotateParams{Now: now, TTL: time.Hour})
	})
	require.Eventually(t, func() bool { return queued(s) == n+2 }, 5*time.Second, time.Millisecond)
	before := s.groups.Load()
	close(release)
	wg.Wait()
	require.Equal(t, before+1, s.groups.Load(), "the queued requests ran as one transaction")
	for i := range n {
		require.NoError(t, errs[i], "request %d", i)
	}
	require.ErrorIs(t, errs[n], store.ErrConflict)
	require.ErrorIs(t, errs[n+1], store.ErrReplayed)

	page, err := s.ListContacts(ctx, "p", paginate.Request{Limit: 100})
	require.NoError(t, err)
	require.Len(t, page.Items, n+2, "ct_dup, ct_lead and the batch")
	f, err := s.GetRefreshFamily(ctx, "p", "rf_1")
	require.NoError(t, err)
	require.False(t, f.RevokedAt.IsZero(), "the replay's revocation was committed")
}

// TestGroupCommit_CancelledCaller checks that a caller whose context ends
// while queued gets its error and does not disturb the batch.
func TestGroupCommit_CancelledCaller(t *testing.T) {
	t.Parallel()
	s := openFile(t, filepath.Join(t.TempDir(), "g.db"), nil)
	ctx := t.Context()
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
	release := make(chan struct{})
	holding := make(chan struct{})
	go func() {
		_ = s.inTx(ctx, func(*wtx) error { close(holding); <-release; return nil })
	}()
	<-holding
	var wg sync.WaitGroup
	wg.Go(func() { _ = s.ClearFailures(ctx, "lead") })
	require.Eventually(t, func() bool { return leadingAlone(s) }, 5*time.Second, time.Millisecond)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var errA, errB error
	wg.Go(func() { _, _, errA = s.AddFailure(cctx, "a", time.Now(), time.Minute) })
	wg.Go(func() { _, _, errB = s.AddFailure(ctx, "b", time.Now(), time.Minute) })
	require.Eventually(t, func() bool { return queued(s) == 2 }, 5*time.Second, time.Millisecond)
	cancel()
	close(release)
	wg.Wait()
	require.ErrorIs(t, errA, context.Canceled, "cancelled caller")
	require.NoError(t, errB)
	n, _, err := s.Failures(ctx, "a", time.Now(), time.Minute)
	require.NoError(t, err)
	require.Zero(t, n)
	n, _, err = s.Failures(ctx, "b", time.Now(), time.Minute)
	require.NoError(t, err)
	require.Equal(t, 1, n)
}
