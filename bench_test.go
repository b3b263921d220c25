package latchkey_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
)

// seed adds n contacts to the project, in batches.
func seed(b *testing.B, st store.Store, n int) {
	b.Helper()
	for done := 0; done < n; done += 10_000 {
		now := time.Now()
		batch := make([]store.Contact, 0, 10_000)
		for range min(10_000, n-done) {
			batch = append(batch, store.Contact{ID: store.NewIDAt(store.PrefixContact, now), Name: "Ada Lovelace", CreatedAt: now})
		}
		slices.SortFunc(batch, func(x, y store.Contact) int { return strings.Compare(x.ID, y.ID) })
		require.NoError(b, st.CreateContacts(context.Background(), store.DefaultProject, batch))
	}
}

// BenchmarkHandler_listContacts measures GET /v1/contacts?limit=25 with
// an API key through the whole mount, on a SQLite file with 20,000
// contacts, without the network: resolving, the token check, the query and
// the JSON. examples/bench measures the same over HTTP with wrk.
func BenchmarkHandler_listContacts(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), nil)
	require.NoError(b, err)
	b.Cleanup(func() { _ = st.Close() })
	lk, err := latchkey.New(st, testMasterKey, &latchkey.Options{PruneInterval: -1})
	require.NoError(b, err)
	b.Cleanup(func() { _ = lk.Close() })
	seed(b, st, 20_000)
	marker, err := st.CreateContact(ctx, store.Contact{ID: store.NewID(store.PrefixContact), ProjectID: store.DefaultProject, Name: "Marker", CreatedAt: time.Now()})
	require.NoError(b, err)
	seed(b, st, 100)
	_, token, err := lk.APIKeys().Create(ctx, store.DefaultProject, "bench")
	require.NoError(b, err)
	h := lk.Handler()
	cursor := url.QueryEscape(marker.ID + ":" + marker.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000Z"))

	for name, target := range map[string]string{
		"first": "/v1/contacts?limit=25",
		"deep":  "/v1/contacts?limit=25&cursor=" + cursor,
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					r := httptest.NewRequest(http.MethodGet, target, nil)
					r.Header.Set("Authorization", "Bearer "+token)
					w := httptest.NewRecorder()
					h.ServeHTTP(w, r)
					if w.Code != http.StatusOK {
						b.Fatalf("status %d: %s", w.Code, w.Body)
					}
				}
			})
		})
	}
}
