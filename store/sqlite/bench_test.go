package sqlite_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
)

// The benchmarks use file databases with the production settings (WAL,
// synchronous=FULL) in a temporary directory. The large database of the
// list and lookup benchmarks is seeded once per process.

const (
	benchProject = "bench"
	// benchContacts is the depth of the deep page: it starts after this
	// many contacts.
	benchContacts = 1_000_000
	benchUsers    = 10_000
	benchKeys     = 10_000
)

var benchTime0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// benchDir holds the benchmark databases; TestMain removes it.
var benchDir string

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		// A child process of TestMultiProcess.
		if err := runChild(path, os.Getenv("LATCHKEY_CHILD_ID")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if role := os.Getenv(faultEnv); role != "" {
		// A child process of a fault test.
		if err := runFaultChild(role); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if benchDir != "" {
		_ = os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

var quiet = &sqlite.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}

// benchSeq makes file names unique: a benchmark function runs several
// times in one process.
var benchSeq atomic.Int64

func benchOpen(b *testing.B, name string) *sqlite.Store {
	b.Helper()
	if benchDir == "" {
		d, err := os.MkdirTemp("", "latchkey-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = d
	}
	s, err := sqlite.Open(context.Background(), filepath.Join(benchDir, name), quiet)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// contactsBatch returns n contacts starting at index from, one microsecond
// apart.
func contactsBatch(from, n int) []store.Contact {
	cs := make([]store.Contact, n)
	for i := range cs {
		cs[i] = store.Contact{
			ID:        store.NewID(store.PrefixContact),
			Name:      fmt.Sprintf("Contact %d", from+i),
			CreatedAt: benchTime0.Add(time.Duration(from+i) * time.Microsecond),
		}
	}
	return cs
}

type seeded struct {
	s      *sqlite.Store
	deep   paginate.Cursor // the position of the benchContacts-th contact
	emails []string
	keys   []string
}

var (
	seedOnce sync.Once
	seed     seeded
	seedErr  error
)

// seededStore returns the shared database: benchContacts+1000 contacts,
// benchUsers users and benchKeys API keys in project "bench".
func seededStore(b *testing.B) seeded {
	b.Helper()
	seedOnce.Do(func() {
		ctx := context.Background()
		s := benchOpen(b, "seeded.db")
		seed.s = s
		if seedErr = s.CreateProject(ctx, store.Project{ID: benchProject, CreatedAt: benchTime0}); seedErr != nil {
			return
		}
		const chunk = 100_000
		for from := 0; from < benchContacts+1000; from += chunk {
			n := min(chunk, benchContacts+1000-from)
			if seedErr = s.CreateContacts(ctx, benchProject, contactsBatch(from, n)); seedErr != nil {
				return
			}
		}
		page, err := s.ListContacts(ctx, benchProject, paginate.Request{Limit: 1, After: paginate.Cursor{
			ID: "", CreatedAt: benchTime0.Add((benchContacts - 1) * time.Microsecond),
		}})
		if err != nil || len(page.Items) != 1 {
			seedErr = fmt.Errorf("find deep cursor: %v", err)
			return
		}
		seed.deep = paginate.Cursor{ID: page.Items[0].ID, CreatedAt: page.Items[0].CreatedAt}
		// Users and keys go in from many goroutines, so that group commit
		// shares the syncs.
		seed.emails = make([]string, benchUsers)
		seed.keys = make([]string, benchKeys)
		seedErr = parallel(benchUsers, func(i int) error {
			u := store.User{
				ID: store.NewID(store.PrefixUser), ProjectID: benchProject,
				Email: fmt.Sprintf("User%05d@Example.com", i), PasswordHash: "$argon2id$x",
				Tags: []string{"a"}, CreatedAt: benchTime0,
			}
			seed.emails[i] = u.Email
			return s.CreateUser(ctx, u)
		})
		if seedErr != nil {
			return
		}
		seedErr = parallel(benchKeys, func(i int) error {
			k := store.APIKey{ID: store.NewID(store.PrefixAPIKey), ProjectID: benchProject, Name: "k", CreatedAt: benchTime0}
			seed.keys[i] = k.ID
			return s.CreateAPIKey(ctx, k)
		})
	})
	if seedErr != nil {
		b.Fatalf("seed: %v", seedErr)
	}
	return seed
}

// parallel runs fn(0..n-1) on 32 goroutines and returns the first error.
func parallel(n int, fn func(i int) error) error {
	var next atomic.Int64
	var first atomic.Pointer[error]
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || first.Load() != nil {
					return
				}
				if err := fn(i); err != nil {
					first.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	if p := first.Load(); p != nil {
		return *p
	}
	return nil
}

// BenchmarkListContacts compares the first page with the page after
// 1,000,000 contacts; the keyset query makes them cost the same.
func BenchmarkListContacts(b *testing.B) {
	sd := seededStore(b)
	ctx := context.Background()
	for _, bc := range []struct {
		name  string
		after paginate.Cursor
	}{
		{"first", paginate.Cursor{}},
		{"after1M", sd.deep},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := paginate.Request{Limit: 25, After: bc.after}
			for b.Loop() {
				page, err := sd.s.ListContacts(ctx, benchProject, req)
				if err != nil || len(page.Items) != 25 || !page.HasMore {
					b.Fatalf("ListContacts = %d items, more %v, %v", len(page.Items), page.HasMore, err)
				}
			}
		})
	}
}

// BenchmarkListContactsParallel reads the first page from 16 goroutines a
// processor, as the load benchmark's 32 connections do on two cores: each
// read takes one of the store's read-only connections, so the result shows
// what concurrent readers cost beyond BenchmarkListContacts.
func BenchmarkListContactsParallel(b *testing.B) {
	sd := seededStore(b)
	ctx := context.Background()
	req := paginate.Request{Limit: 25}
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			page, err := sd.s.ListContacts(ctx, benchProject, req)
			if err != nil || len(page.Items) != 25 || !page.HasMore {
				b.Errorf("ListContacts = %d items, more %v, %v", len(page.Items), page.HasMore, err)
				return
			}
		}
	})
}

// BenchmarkCreateContacts1M inserts 1,000,000 contacts with one
// CreateContacts call into a fresh database, the path of `contact seed`.
func BenchmarkCreateContacts1M(b *testing.B) {
	ctx := context.Background()
	cs := contactsBatch(0, 1_000_000)
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		s := benchOpen(b, fmt.Sprintf("bulk-%d.db", i))
		if err := s.CreateProject(ctx, store.Project{ID: benchProject, CreatedAt: benchTime0}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := s.CreateContacts(ctx, benchProject, cs); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = s.Close()
		_ = os.Remove(filepath.Join(benchDir, fmt.Sprintf("bulk-%d.db", i)))
		b.StartTimer()
	}
	b.ReportMetric(float64(len(cs))*float64(b.N)/b.Elapsed().Seconds(), "contacts/s")
}

// latencies times each call of op and reports the median and the 99th
// percentile, the figures the lookup targets are stated in.
func latencies(b *testing.B, op func(i int) error) {
	b.Helper()
	var ds []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		if err := op(i); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
		i++
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(ds[len(ds)*99/100].Nanoseconds())/1e3, "p99-µs")
}

func BenchmarkGetUserByEmail(b *testing.B) {
	sd := seededStore(b)
	ctx := context.Background()
	latencies(b, func(i int) error {
		// Another case than stored: the lookup compares normalized emails.
		email := sd.emails[(i*7919)%len(sd.emails)]
		_, err := sd.s.GetUserByEmail(ctx, benchProject, "  "+email+" ")
		return err
	})
}

func BenchmarkGetAPIKey(b *testing.B) {
	sd := seededStore(b)
	ctx := context.Background()
	latencies(b, func(i int) error {
		_, err := sd.s.GetAPIKey(ctx, benchProject, sd.keys[(i*7919)%len(sd.keys)])
		return err
	})
}

// benchFamilies returns a store on a fresh file with n users, each with a
// refresh family.
func benchFamilies(b *testing.B, name string, n int) (*sqlite.Store, []store.RefreshFamily) {
	b.Helper()
	ctx := context.Background()
	s := benchOpen(b, fmt.Sprintf("%d-%s", benchSeq.Add(1), name))
	b.Cleanup(func() { _ = s.Close() })
	if err := s.CreateProject(ctx, store.Project{ID: benchProject, CreatedAt: benchTime0}); err != nil {
		b.Fatal(err)
	}
	var fs []store.RefreshFamily
	for i := range n {
		u := store.User{ID: store.NewID(store.PrefixUser), ProjectID: benchProject,
			Email: fmt.Sprintf("u%d@example.com", i), PasswordHash: "x", CreatedAt: benchTime0}
		if err := s.CreateUser(ctx, u); err != nil {
			b.Fatal(err)
		}
		f := store.RefreshFamily{ID: store.NewID(store.PrefixFamily), ProjectID: benchProject, UserID: u.ID,
			IssuedAt: benchTime0, ExpiresAt: benchTime0.Add(24 * time.Hour), CreatedAt: benchTime0}
		if err := s.CreateRefreshFamily(ctx, f, u.PasswordHash); err != nil {
			b.Fatal(err)
		}
		fs = append(fs, f)
	}
	return s, fs
}

// BenchmarkRotateRefresh measures durable rotations (each one a committed,
// synced write transaction): one goroutine rotating one family in a loop,
// and parallel goroutines each rotating their own family.
func BenchmarkRotateRefresh(b *testing.B) {
	ctx := context.Background()
	b.Run("serial", func(b *testing.B) {
		s, fs := benchFamilies(b, "rotate-serial.db", 1)
		gen := int64(0)
		for b.Loop() {
			p := store.RotateParams{Now: benchTime0.Add(time.Duration(gen) * time.Millisecond), TTL: time.Hour, ReuseWindow: 10 * time.Second}
			if _, err := s.RotateRefresh(ctx, benchProject, fs[0].ID, gen, p); err != nil {
				b.Fatal(err)
			}
			gen++
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rotations/s")
	})
	b.Run("parallel", func(b *testing.B) {
		const families = 64
		s, fs := benchFamilies(b, "rotate-parallel.db", families)
		var next atomic.Int64
		b.SetParallelism(4)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			f := fs[next.Add(1)-1]
			gen := int64(0)
			for pb.Next() {
				p := store.RotateParams{Now: benchTime0.Add(time.Duration(gen) * time.Millisecond), TTL: time.Hour, ReuseWindow: 10 * time.Second}
				if _, err := s.RotateRefresh(ctx, benchProject, f.ID, gen, p); err != nil {
					b.Error(err)
					return
				}
				gen++
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rotations/s")
	})
}

// BenchmarkChangeVersion is the cost of the change signal a verifier reads
// on every request (PRAGMA data_version on the dedicated connection).
func BenchmarkChangeVersion(b *testing.B) {
	s := benchOpen(b, fmt.Sprintf("version-%d.db", benchSeq.Add(1)))
	defer s.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.ChangeVersion(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
