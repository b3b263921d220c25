package postgres_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// BenchmarkListContacts compares the first page of 25 with the page after
// 1,000,000 contacts. The keyset query should cost the same at any depth
// (target: deep at most 1.3 times first). Seeding goes through
// CreateContacts (COPY) in batches of 100,000 and is logged.
func BenchmarkListContacts(b *testing.B) {
	const total, batch, depth, limit = 1_000_100, 100_000, 1_000_000, 25
	ctx := context.Background()
	st, _, url := newShared(b)
	mustProject(b, st, "p")

	start := time.Now()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var deep paginate.Cursor
	cs := make([]store.Contact, 0, batch)
	for i := range total {
		c := store.Contact{ID: store.NewID(store.PrefixContact), Name: "Contact", CreatedAt: base.Add(time.Duration(i) * time.Microsecond)}
		if i == depth-1 {
			deep = paginate.Cursor{ID: c.ID, CreatedAt: c.CreatedAt}
		}
		cs = append(cs, c)
		if len(cs) == batch || i == total-1 {
			if err := st.CreateContacts(ctx, "p", cs); err != nil {
				b.Fatal(err)
			}
			cs = cs[:0]
		}
	}
	b.Logf("seeded %d contacts with CreateContacts in %s", total, time.Since(start).Round(time.Millisecond))
	if _, err := connect(b, url).Exec(ctx, "VACUUM ANALYZE contacts"); err != nil {
		b.Fatal(err)
	}

	for _, bc := range []struct {
		name  string
		after paginate.Cursor
	}{{"first", paginate.Cursor{}}, {"after_1M", deep}} {
		b.Run(bc.name, func(b *testing.B) {
			req := paginate.Request{Limit: limit, After: bc.after}
			for b.Loop() {
				page, err := st.ListContacts(ctx, "p", req)
				if err != nil {
					b.Fatal(err)
				}
				if len(page.Items) != limit || !page.HasMore {
					b.Fatalf("page of %d items, HasMore %v", len(page.Items), page.HasMore)
				}
			}
		})
	}
}

// BenchmarkRotateRefresh measures refresh rotations (the conditional UPDATE
// that consumes a generation and issues its successor) from one process
// with the default pool (target: at least 1,000 per second). Each goroutine
// rotates a family of its own.
func BenchmarkRotateRefresh(b *testing.B) {
	ctx := context.Background()
	st := newStore(b)
	mustProject(b, st, "p")
	u := mustUser(b, st, "p", "bench@example.com")
	newFamily := func() string {
		now := time.Now()
		f := store.RefreshFamily{ID: store.NewID(store.PrefixFamily), ProjectID: "p", UserID: u.ID,
			IssuedAt: now, ExpiresAt: now.Add(time.Hour), CreatedAt: now}
		if err := st.CreateRefreshFamily(ctx, f, u.PasswordHash); err != nil {
			b.Fatal(err)
		}
		return f.ID
	}
	params := func() store.RotateParams {
		return store.RotateParams{Now: time.Now(), TTL: time.Hour, ReuseWindow: 10 * time.Second}
	}
	report := func(b *testing.B) {
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rotations/s")
	}

	b.Run("serial", func(b *testing.B) {
		id := newFamily()
		var gen int64
		for b.Loop() {
			r, err := st.RotateRefresh(ctx, "p", id, gen, params())
			if err != nil || r.Reused {
				b.Fatalf("RotateRefresh: %v (reused %v)", err, r.Reused)
			}
			gen = r.Family.Generation
		}
		report(b)
	})
	for _, par := range []int{1, 4} {
		b.Run(fmt.Sprintf("goroutines=%d", par*runtime.GOMAXPROCS(0)), func(b *testing.B) {
			b.SetParallelism(par)
			var failed atomic.Bool
			b.RunParallel(func(pb *testing.PB) {
				id := newFamily()
				var gen int64
				for pb.Next() {
					r, err := st.RotateRefresh(ctx, "p", id, gen, params())
					if err != nil || r.Reused {
						failed.Store(true)
						b.Errorf("RotateRefresh: %v (reused %v)", err, r.Reused)
						return
					}
					gen = r.Family.Generation
				}
			})
			if !failed.Load() {
				report(b)
			}
		})
	}
}

// BenchmarkGetAPIKey measures the read every API-key request makes, from
// one goroutine and from several, through the store's whole call path
// (argument checks, acquiring a checked connection, retry bookkeeping).
func BenchmarkGetAPIKey(b *testing.B) {
	ctx := context.Background()
	st := newStore(b)
	mustProject(b, st, "p")
	k := store.APIKey{ID: store.NewID(store.PrefixAPIKey), ProjectID: "p", Name: "bench", CreatedAt: time.Now()}
	if err := st.CreateAPIKey(ctx, k); err != nil {
		b.Fatal(err)
	}
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			if _, err := st.GetAPIKey(ctx, "p", k.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(fmt.Sprintf("goroutines=%d", 4*runtime.GOMAXPROCS(0)), func(b *testing.B) {
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := st.GetAPIKey(ctx, "p", k.ID); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
