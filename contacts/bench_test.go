package contacts_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/latchkey-dev/latchkey/contacts"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/tenant"
)

// pageStore answers every list with the same page, so that a benchmark
// measures the handler alone: parsing the query, calling the store and
// writing the page.
type pageStore struct {
	store.ContactStore
	page paginate.Page[store.Contact]
}

func (s pageStore) ListContacts(context.Context, string, paginate.Request) (paginate.Page[store.Contact], error) {
	return s.page, nil
}

// BenchmarkHandler measures the handler's own work for a page of 25
// contacts, the first page and one after a cursor, without a store
// (BenchmarkHandler_listContacts of the root package measures the whole
// mount on SQLite).
func BenchmarkHandler(b *testing.B) {
	at := time.Date(2026, 11, 21, 10, 15, 30, 123456000, time.UTC)
	items := make([]store.Contact, 25)
	for i := range items {
		items[i] = store.Contact{ID: "ct_01jd9x6x0k3v8m2q4r5t6w7y" + strconv.Itoa(10+i), Name: "Ada Lovelace", CreatedAt: at.Add(time.Duration(i) * time.Millisecond)}
	}
	h := contacts.NewHandler(pageStore{page: paginate.Page[store.Contact]{Items: items, HasMore: true}}, nil)
	cursor := url.QueryEscape(paginate.Cursor{ID: items[0].ID, CreatedAt: at}.String())
	ctx := tenant.NewContext(context.Background(), "default")
	for _, bc := range []struct{ name, target string }{
		{"first", "/v1/contacts?limit=25"},
		{"deep", "/v1/contacts?limit=25&cursor=" + cursor},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodGet, bc.target, nil).WithContext(ctx)
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
