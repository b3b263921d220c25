package latchkey_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
)

// BenchmarkPathHandler_listContacts measures GET /v1/contacts?limit=25 with
// an API key through the whole mount, on a SQLite file with 20,000
// contacts, without the network: resolving, the token check, the query and
// the JSON. examples/bench measures the same over HTTP with wrk.
func BenchmarkPathHandler_listContacts(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), nil)
	require.NoError(b, err)
	b.Cleanup(func() { _ = st.Close() })
	lk, err := latchkey.New(st, testMasterKey, nil)
	require.NoError(b, err)
	require.NoError(b, lk.SeedContacts(ctx, store.DefaultProject, 20_000, nil))
	marker, err := lk.CreateContact(ctx, store.DefaultProject, "Marker")
	require.NoError(b, err)
	require.NoError(b, lk.SeedContacts(ctx, store.DefaultProject, 100, nil))
	_, token, err := lk.CreateAPIKey(ctx, store.DefaultProject, "bench")
	require.NoError(b, err)
	h := lk.PathHandler(store.DefaultProject)
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
