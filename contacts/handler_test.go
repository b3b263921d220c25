package contacts_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/contacts"
	"github.com/latchkey-dev/latchkey/internal/openapitest"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
	"github.com/latchkey-dev/latchkey/store/sqlite/sqlitetest"
	"github.com/latchkey-dev/latchkey/tenant"
)

type listBody struct {
	Data []struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		CreatedAt string `json:"created_at"`
	} `json:"data"`
	Pagination struct {
		Limit      int    `json:"limit"`
		HasMore    bool   `json:"has_more"`
		NextCursor string `json:"next_cursor"`
	} `json:"pagination"`
}

type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Code   string `json:"code"`
}

// fixture is a real SQLite store with projects "a" and "b" and the contacts
// handler in front of it.
type fixture struct {
	st store.Store
	h  http.Handler
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlitetest.Path(t), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	for _, p := range []string{"a", "b"} {
		require.NoError(t, st.CreateProject(ctx, store.Project{ID: p, CreatedAt: time.Now()}))
	}
	logger := slog.New(slog.NewTextHandler(t.Output(), nil))
	// Every exchange is checked against the OpenAPI document; the bearer
	// token is the routing table's business, not this handler's.
	contract := openapitest.New(t, &openapitest.Options{NoAuthentication: true})
	return &fixture{st: st, h: contract.Handler(contacts.NewHandler(st, &contacts.Options{Logger: logger}))}
}

// seed creates n contacts in project p, one microsecond apart, and returns
// their ids in list order.
func (f *fixture) seed(t *testing.T, p string, n int) []string {
	t.Helper()
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cs := make([]store.Contact, n)
	ids := make([]string, n)
	for i := range cs {
		cs[i] = store.Contact{ID: store.NewID(store.PrefixContact), ProjectID: p, Name: fmt.Sprintf("Contact %d", i), CreatedAt: base.Add(time.Duration(i) * time.Microsecond)}
		ids[i] = cs[i].ID
	}
	require.NoError(t, f.st.CreateContacts(context.Background(), p, cs))
	return ids
}

// do sends method target for project p (none when p is "").
func (f *fixture) do(t *testing.T, p, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	if p != "" {
		r = r.WithContext(tenant.NewContext(r.Context(), p))
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	return w
}

func (f *fixture) list(t *testing.T, p, query string) listBody {
	t.Helper()
	w := f.do(t, p, http.MethodGet, "/v1/contacts"+query)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.Equal(t, "application/json", w.Header().Get("Content-Type"))
	var b listBody
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &b))
	return b
}

func (f *fixture) problem(t *testing.T, p, method, target string, status int, code string) *httptest.ResponseRecorder {
	t.Helper()
	w := f.do(t, p, method, target)
	require.Equal(t, status, w.Code, w.Body.String())
	require.Equal(t, "application/problem+json", w.Header().Get("Content-Type"))
	var pb problem
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &pb))
	assert.Equal(t, code, pb.Code)
	assert.Equal(t, status, pb.Status)
	assert.NotEmpty(t, pb.Detail)
	return w
}

// pageAll follows next_cursor from the first page and returns every id seen.
func (f *fixture) pageAll(t *testing.T, p string, limit int, between func(page int)) []string {
	t.Helper()
	var ids []string
	q := fmt.Sprintf("?limit=%d", limit)
	for page := 0; ; page++ {
		b := f.list(t, p, q)
		require.LessOrEqual(t, len(b.Data), limit)
		for _, c := range b.Data {
			ids = append(ids, c.ID)
		}
		if !b.Pagination.HasMore {
			require.Empty(t, b.Pagination.NextCursor)
			return ids
		}
		require.NotEmpty(t, b.Data)
		require.Equal(t, b.Data[len(b.Data)-1].ID+":"+b.Data[len(b.Data)-1].CreatedAt, b.Pagination.NextCursor)
		q = fmt.Sprintf("?limit=%d&cursor=%s", limit, url.QueryEscape(b.Pagination.NextCursor))
		if between != nil {
			between(page)
		}
	}
}

func TestList_empty(t *testing.T) {
	f := newFixture(t)
	w := f.do(t, "a", http.MethodGet, "/v1/contacts")
	require.Equal(t, http.StatusOK, w.Code)
	assert.JSONEq(t, `{"data":[],"pagination":{"limit":25,"has_more":false,"next_cursor":""}}`, w.Body.String())
	assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
}

func TestList_pagesEveryContactOnce(t *testing.T) {
	f := newFixture(t)
	want := f.seed(t, "a", 237)
	for _, limit := range []int{1, 25, 100} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			require.Equal(t, want, f.pageAll(t, "a", limit, nil))
		})
	}
}

func TestList_shape(t *testing.T) {
	f := newFixture(t)
	at := time.Date(2026, 11, 21, 10, 15, 30, 123456789, time.UTC)
	c, err := f.st.CreateContact(context.Background(), store.Contact{ID: "ct_x", ProjectID: "a", Name: "Ada <Lovelace>", CreatedAt: at})
	require.NoError(t, err)
	f.seed(t, "a", 1)
	w := f.do(t, "a", http.MethodGet, "/v1/contacts?limit=1")
	require.Equal(t, http.StatusOK, w.Code)
	ts := c.CreatedAt.Format("2006-01-02T15:04:05.000000Z")
	assert.JSONEq(t, `{"data":[{"id":"ct_x","name":"Ada <Lovelace>","created_at":"`+ts+`"}],
		"pagination":{"limit":1,"has_more":true,"next_cursor":"ct_x:`+ts+`"}}`, w.Body.String())
	assert.Regexp(t, regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`), ts)
}

func TestList_limits(t *testing.T) {
	f := newFixture(t)
	f.seed(t, "a", 150)
	cases := map[string]struct {
		query     string
		wantLimit int
		wantLen   int
	}{
		"default":  {"", 25, 25},
		"one":      {"?limit=1", 1, 1},
		"max":      {"?limit=100", 100, 100},
		"clamped":  {"?limit=1000", 100, 100},
		"huge":     {"?limit=99999999999999999999999", 100, 100},
		"leading0": {"?limit=007", 7, 7},

		// The raw query is read as url.ParseQuery reads it.
		"escaped key":    {"?%6Cimit=3", 3, 3},
		"escaped value":  {"?limit=%34", 4, 4},
		"other bad pair": {"?x=%zz&limit=2", 2, 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := f.list(t, "a", tc.query)
			assert.Equal(t, tc.wantLimit, b.Pagination.Limit)
			assert.Len(t, b.Data, tc.wantLen)
			assert.True(t, b.Pagination.HasMore)
		})
	}
}

func TestList_invalidParameters(t *testing.T) {
	f := newFixture(t)
	f.seed(t, "a", 3)
	cases := map[string]struct{ query, code string }{
		"limit zero":         {"limit=0", "invalid_parameter"},
		"limit negative":     {"limit=-1", "invalid_parameter"},
		"limit word":         {"limit=abc", "invalid_parameter"},
		"limit fraction":     {"limit=1.5", "invalid_parameter"},
		"limit empty":        {"limit=", "invalid_parameter"},
		"limit plus":         {"limit=%2B5", "invalid_parameter"},
		"limit repeated":     {"limit=5&limit=5", "invalid_parameter"},
		"cursor garbage":     {"cursor=garbage", "invalid_cursor"},
		"cursor no colon":    {"cursor=ct_abc2026-01-01T00:00:00.000000Z", "invalid_cursor"},
		"cursor bad time":    {"cursor=ct_abc:yesterday", "invalid_cursor"},
		"cursor millis":      {"cursor=ct_abc:2026-01-01T00:00:00.000Z", "invalid_cursor"},
		"cursor offset":      {"cursor=ct_abc:2026-01-01T00:00:00.000000%2B01:00", "invalid_cursor"},
		"cursor empty id":    {"cursor=:2026-01-01T00:00:00.000000Z", "invalid_cursor"},
		"cursor empty":       {"cursor=", "invalid_cursor"},
		"cursor repeated":    {"cursor=ct_a:2026-01-01T00:00:00.000000Z&cursor=ct_a:2026-01-01T00:00:00.000000Z", "invalid_cursor"},
		"cursor space in id": {"cursor=ct%20a:2026-01-01T00:00:00.000000Z", "invalid_cursor"},
		// Pairs url.ParseQuery drops: the parameter was given, and is invalid.
		"cursor bad escape":    {"cursor=%zz", "invalid_cursor"},
		"cursor semicolon":     {"cursor=ct_a:2026-01-01T00:00:00.000000Z;x", "invalid_cursor"},
		"limit bad escape":     {"limit=%zz", "invalid_parameter"},
		"limit semicolon":      {"limit=5;", "invalid_parameter"},
		"escaped key, bad":     {"%6Cimit=%zz", "invalid_parameter"},
		"limit bad, cursor ok": {"limit=%zz&cursor=ct_a:2026-01-01T00:00:00.000000Z", "invalid_parameter"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f.problem(t, "a", http.MethodGet, "/v1/contacts?"+tc.query, http.StatusBadRequest, tc.code)
		})
	}
}

func TestList_projectIsolation(t *testing.T) {
	f := newFixture(t)
	a := f.seed(t, "a", 30)
	b := f.seed(t, "b", 20)
	assert.Equal(t, a, f.pageAll(t, "a", 7, nil))
	assert.Equal(t, b, f.pageAll(t, "b", 7, nil))
	// A cursor taken in project b shows nothing of b when used in a.
	first := f.list(t, "b", "?limit=5")
	next := f.list(t, "a", "?limit=100&cursor="+url.QueryEscape(first.Pagination.NextCursor))
	for _, c := range next.Data {
		assert.Contains(t, a, c.ID)
	}
	// An unknown project lists as empty.
	assert.Empty(t, f.list(t, "nope", "").Data)
}

func TestList_insertsWhilePaging(t *testing.T) {
	f := newFixture(t)
	existing := f.seed(t, "a", 60)
	var added []string
	got := f.pageAll(t, "a", 10, func(page int) {
		// Each new contact claims a time before everything: the store
		// raises it, so it sorts after the contacts that existed.
		c, err := f.st.CreateContact(context.Background(), store.Contact{
			ID: store.NewID(store.PrefixContact), ProjectID: "a", Name: "late", CreatedAt: time.Unix(0, 0),
		})
		require.NoError(t, err)
		added = append(added, c.ID)
	})
	// Every contact once: those that existed in order, then the new ones in
	// the order they were added.
	require.Equal(t, append(existing, added...), got)
}

func TestList_cursorOfDeletedContact(t *testing.T) {
	f := newFixture(t)
	ids := f.seed(t, "a", 10)
	first := f.list(t, "a", "?limit=4")
	require.NoError(t, f.st.DeleteContact(context.Background(), "a", ids[3]))
	next := f.list(t, "a", "?limit=100&cursor="+url.QueryEscape(first.Pagination.NextCursor))
	var got []string
	for _, c := range next.Data {
		got = append(got, c.ID)
	}
	assert.Equal(t, ids[4:], got)
}

// Paths and methods are the routing table's (package latchkey); HEAD,
// which it routes here with GET, gets the headers only.
func TestHandler_head(t *testing.T) {
	f := newFixture(t)
	w := f.do(t, "a", http.MethodHead, "/v1/contacts")
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Empty(t, w.Body.String())
}

func TestHandler_noProjectIsInternal(t *testing.T) {
	f := newFixture(t)
	w := f.problem(t, "", http.MethodGet, "/v1/contacts", http.StatusInternalServerError, "internal")
	body, _ := io.ReadAll(w.Body)
	assert.NotContains(t, string(body), "context")
}

func TestNewHandler_nilStorePanics(t *testing.T) {
	assert.Panics(t, func() { contacts.NewHandler(nil, nil) })
}

// Response bodies are encoded into reused buffers: pages answered at once
// must each get their own bytes.
func TestList_concurrentPagesKeepTheirBodies(t *testing.T) {
	f := newFixture(t)
	f.seed(t, "a", 60)
	f.seed(t, "b", 7)
	targets := []struct{ p, query string }{
		{"a", "?limit=1"}, {"a", "?limit=25"}, {"a", "?limit=100"}, {"b", "?limit=3"}, {"b", ""},
	}
	want := make([]string, len(targets))
	for i, tg := range targets {
		want[i] = f.do(t, tg.p, http.MethodGet, "/v1/contacts"+tg.query).Body.String()
	}
	done := make(chan error)
	for g := range 8 {
		go func() {
			var err error
			for n := range 50 {
				i := (g + n) % len(targets)
				r := httptest.NewRequest(http.MethodGet, "/v1/contacts"+targets[i].query, nil)
				r = r.WithContext(tenant.NewContext(r.Context(), targets[i].p))
				w := httptest.NewRecorder()
				f.h.ServeHTTP(w, r)
				if got := w.Body.String(); got != want[i] && err == nil {
					err = fmt.Errorf("%s %s: got %q, want %q", targets[i].p, targets[i].query, got, want[i])
				}
			}
			done <- err
		}()
	}
	for range 8 {
		assert.NoError(t, <-done)
	}
}
