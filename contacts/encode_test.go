package contacts

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// jsonItem is a listed contact as encoding/json would write it, the
// reference the hand encoder must match byte for byte.
type jsonItem struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
}

func reference(t testing.TB, resp paginate.Response[store.Contact]) string {
	t.Helper()
	data := make([]jsonItem, len(resp.Data))
	for i, it := range resp.Data {
		data[i] = jsonItem{ID: it.ID, Name: it.Name, CreatedAt: it.CreatedAt.UTC().Format(paginate.TimeLayout)}
	}
	b, err := json.Marshal(paginate.Response[jsonItem]{Data: data, Pagination: resp.Pagination})
	require.NoError(t, err)
	return string(b) + "\n"
}

func TestAppendResponse_matchesEncodingJSON(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 15, 30, 123456789, time.FixedZone("x", 3600))
	names := []string{
		"", "Ada Lovelace", `quote " and \ backslash`, "tab\tnew\nline\rcr\bbs\fff",
		"\x00\x01\x1f\x7f", "<script>&amp;</script>", "émile 日本 🎉", "bad \xff utf8 \xc3",
		"line\u2028sep\u2029para", "\xed\xa0\x80 surrogate",
	}
	var data []store.Contact
	for i, n := range names {
		data = append(data, store.Contact{ID: "ct_" + string(rune('a'+i)), Name: n, CreatedAt: at.Add(time.Duration(i) * time.Second)})
	}
	cases := map[string]paginate.Response[store.Contact]{
		"empty":   {Data: []store.Contact{}, Pagination: paginate.Pagination{Limit: 25}},
		"one":     {Data: data[:1], Pagination: paginate.Pagination{Limit: 1, HasMore: true, NextCursor: "ct_a:2026-11-21T09:15:30.123456Z"}},
		"escapes": {Data: data, Pagination: paginate.Pagination{Limit: 100}},
	}
	for name, resp := range cases {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, reference(t, resp), string(appendResponse(nil, resp)))
		})
	}
}

// benchPage is a full default page of realistic contacts and its pagination.
func benchPage() paginate.Response[store.Contact] {
	names := []string{"Ada Lovelace", "Grace Hopper", "Alan Turing", "Katherine Johnson", "Edsger Dijkstra"}
	at := time.Date(2026, 11, 21, 10, 15, 30, 123456000, time.UTC)
	data := make([]store.Contact, 25)
	for i := range data {
		data[i] = store.Contact{
			ID:        "ct_01jd9x6x0k3v8m2q4r5t6w" + string(rune('a'+i)) + "y8z",
			Name:      names[i%len(names)],
			CreatedAt: at.Add(time.Duration(i) * 1234567 * time.Microsecond),
		}
	}
	last := data[len(data)-1]
	next := paginate.Cursor{ID: last.ID, CreatedAt: last.CreatedAt}.String()
	return paginate.Response[store.Contact]{Data: data, Pagination: paginate.Pagination{Limit: 25, HasMore: true, NextCursor: next}}
}

// BenchmarkAppendResponse compares appendResponse with json.Marshal of
// the same page, the encoder it stands in for. Compare with
// benchstat -col /impl.
func BenchmarkAppendResponse(b *testing.B) {
	resp := benchPage()
	b.Run("impl=encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = reference(b, resp)
		}
	})
	b.Run("impl=appendResponse", func(b *testing.B) {
		buf := make([]byte, 0, 4096)
		b.ReportAllocs()
		for b.Loop() {
			buf = appendResponse(buf[:0], resp)
		}
	})
}
