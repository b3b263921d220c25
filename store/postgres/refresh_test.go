package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres"
)

func newFamily(t *testing.T, st store.Store, u store.User, at time.Time) store.RefreshFamily {
	t.Helper()
	f := store.RefreshFamily{ID: store.NewID(store.PrefixFamily), ProjectID: u.ProjectID, UserID: u.ID,
		IssuedAt: at, ExpiresAt: at.Add(time.Hour), CreatedAt: at}
	require.NoError(t, st.CreateRefreshFamily(context.Background(), f, u.PasswordHash))
	return f
}

// TestRotateRefresh_Classify walks one family through every outcome.
func TestRotateRefresh_Classify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.Check(newStore(t)) // as hosts use it: arguments checked
	mustProject(t, st, "p")
	mustProject(t, st, "q")
	u := mustUser(t, st, "p", "a@example.com")
	f := newFamily(t, st, u, t0)
	p := store.RotateParams{Now: t0.Add(time.Minute), TTL: time.Hour, ReuseWindow: 10 * time.Second}

	r, err := st.RotateRefresh(ctx, "p", f.ID, 0, p)
	require.NoError(t, err)
	assert.False(t, r.Reused)
	assert.Equal(t, int64(1), r.Family.Generation)
	assert.True(t, r.Family.IssuedAt.Equal(store.Truncate(p.Now)))
	assert.True(t, r.Family.ExpiresAt.Equal(store.Truncate(p.Now.Add(time.Hour))))

	within := p
	within.Now = p.Now.Add(10 * time.Second)
	r2, err := st.RotateRefresh(ctx, "p", f.ID, 0, within)
	require.NoError(t, err, "predecessor at the window's edge")
	assert.True(t, r2.Reused)
	assert.Equal(t, r.Family, r2.Family)

	_, err = st.RotateRefresh(ctx, "p", f.ID, 2, p)
	assert.ErrorIs(t, err, store.ErrNotFound, "generation above the current one")
	_, err = st.RotateRefresh(ctx, "q", f.ID, 1, p)
	assert.ErrorIs(t, err, store.ErrNotFound, "another project")
	_, err = st.RotateRefresh(ctx, "p", "rf_nope", 0, p)
	assert.ErrorIs(t, err, store.ErrNotFound, "unknown family")

	expired := p
	expired.Now = r.Family.ExpiresAt
	_, err = st.RotateRefresh(ctx, "p", f.ID, 1, expired)
	assert.ErrorIs(t, err, store.ErrExpired, "at ExpiresAt")

	after := p
	after.Now = within.Now.Add(time.Microsecond)
	_, err = st.RotateRefresh(ctx, "p", f.ID, 0, after)
	assert.ErrorIs(t, err, store.ErrReplayed, "predecessor after the window")
	got, err := st.GetRefreshFamily(ctx, "p", f.ID)
	require.NoError(t, err)
	assert.True(t, got.RevokedAt.Equal(store.Truncate(after.Now)), "revoked at p.Now")
	_, err = st.RotateRefresh(ctx, "p", f.ID, 1, p)
	assert.ErrorIs(t, err, store.ErrRevoked, "current generation of a revoked family")

	// Window 0: every reuse is a replay, even at the same instant.
	g := newFamily(t, st, u, t0)
	zero := store.RotateParams{Now: t0.Add(time.Minute), TTL: time.Hour}
	_, err = st.RotateRefresh(ctx, "p", g.ID, 0, zero)
	require.NoError(t, err)
	_, err = st.RotateRefresh(ctx, "p", g.ID, 0, zero)
	assert.ErrorIs(t, err, store.ErrReplayed)

	for name, bad := range map[string]store.RotateParams{
		"zero now":        {TTL: time.Hour},
		"zero ttl":        {Now: t0},
		"negative window": {Now: t0, TTL: time.Hour, ReuseWindow: -time.Second},
	} {
		_, err := st.RotateRefresh(ctx, "p", f.ID, 1, bad)
		assert.ErrorIs(t, err, store.ErrInvalid, name)
	}
	_, err = st.RotateRefresh(ctx, "p", f.ID, -1, p)
	assert.ErrorIs(t, err, store.ErrInvalid, "negative generation")
}

// TestRotateRefresh_RaceTwoInstances sends 50 rotations of one token at once
// through two pools: the conditional UPDATE lets exactly one through, and
// with a reuse window the others get the same successor; without one they
// are replays (or, once one of them has revoked the family, find it
// revoked) and the family ends revoked.
func TestRotateRefresh_RaceTwoInstances(t *testing.T) {
	t.Parallel()
	for _, window := range []time.Duration{10 * time.Second, 0} {
		t.Run(window.String(), func(t *testing.T) {
			ctx := context.Background()
			a, b, _ := newShared(t)
			mustProject(t, a, "p")
			u := mustUser(t, a, "p", "a@example.com")
			f := newFamily(t, a, u, t0)
			p := store.RotateParams{Now: t0.Add(time.Minute), TTL: time.Hour, ReuseWindow: window}

			const n = 50
			rots := make([]store.Rotation, n)
			errs := make([]error, n)
			var start, wg sync.WaitGroup
			start.Add(1)
			for i := range n {
				st := []*postgres.Store{a, b}[i%2]
				wg.Go(func() {
					start.Wait()
					rots[i], errs[i] = st.RotateRefresh(ctx, "p", f.ID, 0, p)
				})
			}
			start.Done()
			wg.Wait()

			fresh, reused, replayed, revoked := 0, 0, 0, 0
			for i := range n {
				switch {
				case errs[i] == nil && !rots[i].Reused:
					fresh++
				case errs[i] == nil:
					reused++
					assert.Equal(t, int64(1), rots[i].Family.Generation)
				case errors.Is(errs[i], store.ErrReplayed):
					replayed++
				case errors.Is(errs[i], store.ErrRevoked):
					// A replay revoked the family before this call read it.
					revoked++
				default:
					t.Errorf("RotateRefresh #%d: %v", i, errs[i])
				}
			}
			assert.Equal(t, 1, fresh, "exactly one rotation")
			got, err := b.GetRefreshFamily(ctx, "p", f.ID)
			require.NoError(t, err)
			assert.Equal(t, int64(1), got.Generation)
			if window > 0 {
				assert.Equal(t, n-1, reused)
				assert.True(t, got.RevokedAt.IsZero())
			} else {
				assert.GreaterOrEqual(t, replayed, 1)
				assert.Equal(t, n-1, replayed+revoked)
				assert.False(t, got.RevokedAt.IsZero())
			}
		})
	}
}
