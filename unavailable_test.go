package latchkey_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
	"github.com/latchkey-dev/latchkey/store/sqlite/sqlitetest"
)

// failingListStore is a SQLite store whose combined list read (the page
// with the change version) fails as a database that cannot be used fails,
// with store.ErrUnavailable, while down is set. Every other call is the
// store's own.
type failingListStore struct {
	*sqlite.Store
	down *atomic.Bool
}

func (s failingListStore) ListContactsVersioned(ctx context.Context, projectID string, req paginate.Request) (uint64, paginate.Page[store.Contact], error) {
	if s.down.Load() {
		return 0, paginate.Page[store.Contact]{}, fmt.Errorf("test: the disk is gone: %w", store.ErrUnavailable)
	}
	return s.Store.ListContactsVersioned(ctx, projectID, req)
}

// TestContacts_StoreDownOnSQLite: when SQLite cannot be read during an
// authenticated list's combined read (a warm token, its check pending), the
// list is answered 503 unavailable with Retry-After, over HTTP and as the
// OpenAPI document says, and nothing of the page; once the store reads
// again, the list is served. The PostgreSQL counterpart is
// TestContacts_StoreDownOnPostgres.
func TestContacts_StoreDownOnSQLite(t *testing.T) {
	sq, err := sqlite.Open(context.Background(), sqlitetest.Path(t), &sqlite.Options{Logger: testLogger(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sq.Close() })
	st := failingListStore{Store: sq, down: new(atomic.Bool)}
	lk, h := newPathLatchkey(t, st, nil)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	contract(t).WrapClient(srv.Client()) // every exchange checked against the OpenAPI document
	in := instance{lk: lk, url: srv.URL, client: srv.Client()}
	createContact(t, st, "default", "Secret Contact")
	_, apiKey, err := lk.APIKeys().Create(context.Background(), "default", "down")
	require.NoError(t, err)
	get := func() (*http.Response, string) {
		t.Helper()
		res, body := in.do(t, "GET", "/v1/contacts", apiKey, "")
		require.NotNil(t, res, body)
		return res, body
	}
	for range 3 { // the first use checks the token at once; later ones combine
		res, body := get()
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		require.Contains(t, body, "Secret Contact")
	}

	st.down.Store(true)
	res, body := get()
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, body)
	require.Equal(t, "unavailable", codeOf(body))
	require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
	require.NotEmpty(t, res.Header.Get("Retry-After"))
	require.NotContains(t, body, "Secret Contact")

	st.down.Store(false)
	res, body = get()
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	require.Contains(t, body, "Secret Contact")
}
