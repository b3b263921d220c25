package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// TestRevocations_OrderAcrossInstances revokes sessions through two pools
// (two instances), with revocation times often in the past, while a reader
// pages through the feed through a third: every item is seen exactly once,
// in (RevokedAt, ID) order, because each item is placed after the project's
// floor under the project row's lock and commits before the next is
// placed. It runs in both isolation modes.
func TestRevocations_OrderAcrossInstances(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name  string
		newDB func(testing.TB) string
	}{{"ReadCommitted", pgtest.NewDatabase}, {"Serializable", pgtest.NewSerializableDatabase}} {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			url := mode.newDB(t)
			a, b, r := openStore(t, url), openStore(t, url), openStore(t, url)
			mustProject(t, a, "p")
			u := mustUser(t, a, "p", "a@example.com")
			const writers, each = 4, 25
			fams := make([][]store.RefreshFamily, writers)
			for w := range writers {
				for range each {
					f := store.RefreshFamily{ID: store.NewID(store.PrefixFamily), ProjectID: "p", UserID: u.ID,
						IssuedAt: t0, ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}
					require.NoError(t, a.CreateRefreshFamily(ctx, f, u.PasswordHash))
					fams[w] = append(fams[w], f)
				}
			}
			var wg sync.WaitGroup
			var done atomic.Bool
			for w := range writers {
				st := []*postgres.Store{a, b}[w%2]
				wg.Go(func() {
					for _, f := range fams[w] {
						at := time.Now().Add(-time.Duration(rand.IntN(1000)) * time.Millisecond)
						assert.NoError(t, st.RevokeRefreshFamily(ctx, "p", f.ID, at))
					}
				})
			}
			go func() { wg.Wait(); done.Store(true) }()

			seen := map[string]bool{}
			var last paginate.Cursor
			for {
				finished := done.Load() // read before the page, so that an empty page after it is final
				page, err := r.ListRevocations(ctx, "p", paginate.Request{Limit: 3, After: last})
				require.NoError(t, err)
				for _, it := range page.Items {
					require.False(t, seen[it.Subject], "%s listed twice", it.Subject)
					seen[it.Subject] = true
					if !last.IsZero() {
						require.True(t, it.RevokedAt.After(last.CreatedAt) ||
							it.RevokedAt.Equal(last.CreatedAt) && it.ID > last.ID,
							"%s at %s sorts before the cursor %s at %s", it.ID, it.RevokedAt, last.ID, last.CreatedAt)
					}
					last = paginate.Cursor{ID: it.ID, CreatedAt: it.RevokedAt}
				}
				if len(page.Items) == 0 {
					if finished {
						break
					}
					time.Sleep(time.Millisecond)
				}
			}
			assert.Len(t, seen, writers*each, "every revocation seen once")
		})
	}
}

// TestRevocations_Floor checks the placement of items: the time given when
// it sorts after every item the project had, else raised by whole
// microseconds; repeated revocations add nothing; the floor stays after the
// items below it are pruned; projects have floors of their own.
func TestRevocations_Floor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t)
	mustProject(t, st, "p")
	mustProject(t, st, "q")
	u := mustUser(t, st, "p", "a@example.com")
	uq := mustUser(t, st, "q", "a@example.com")
	fam := func(u store.User) string {
		f := store.RefreshFamily{ID: store.NewID(store.PrefixFamily), ProjectID: u.ProjectID, UserID: u.ID,
			IssuedAt: t0, ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}
		require.NoError(t, st.CreateRefreshFamily(ctx, f, u.PasswordHash))
		return f.ID
	}
	feed := func(p string) []store.Revocation {
		page, err := st.ListRevocations(ctx, p, paginate.Request{Limit: 100})
		require.NoError(t, err)
		return page.Items
	}
	base := store.Truncate(t0)
	late := base.Add(time.Hour)
	f1, f2, f3 := fam(u), fam(u), fam(u)
	require.NoError(t, st.RevokeRefreshFamily(ctx, "p", f1, late))
	require.NoError(t, st.RevokeRefreshFamily(ctx, "p", f1, late.Add(time.Hour)), "revoking again")
	require.NoError(t, st.RevokeRefreshFamily(ctx, "p", f2, base), "an earlier time")
	items := feed("p")
	require.Len(t, items, 2, "a second revocation adds nothing")
	assert.Equal(t, late, items[0].RevokedAt)
	second := items[1].RevokedAt
	if items[1].ID > items[0].ID {
		assert.Equal(t, late, second, "raised to the floor: its id sorts after")
	} else {
		assert.Equal(t, late.Add(time.Microsecond), second, "raised one microsecond past the floor")
	}
	got, err := st.GetRefreshFamily(ctx, "p", f2)
	require.NoError(t, err)
	assert.Equal(t, base, got.RevokedAt, "the family keeps the time given")

	n, err := st.PruneSessionRevocations(ctx, late.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.Empty(t, feed("p"))
	require.NoError(t, st.RevokeRefreshFamily(ctx, "p", f3, base))
	items = feed("p")
	require.Len(t, items, 1)
	assert.False(t, items[0].RevokedAt.Before(second), "after the pruned items: %s", items[0].RevokedAt)

	require.NoError(t, st.RevokeRefreshFamily(ctx, "q", fam(uq), base))
	items = feed("q")
	require.Len(t, items, 1)
	assert.Equal(t, base, items[0].RevokedAt, "another project's floor is its own")
	assert.Equal(t, fmt.Sprint(store.RevokedSession), fmt.Sprint(items[0].Kind))
}
