package contacts

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
)

// jsonItem is item as encoding/json would write it, the reference the hand
// encoder must match byte for byte.
type jsonItem struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
}

func reference(t *testing.T, resp paginate.Response[item]) string {
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
	var data []item
	for i, n := range names {
		data = append(data, item{ID: "ct_" + string(rune('a'+i)), Name: n, CreatedAt: at.Add(time.Duration(i) * time.Second)})
	}
	cases := map[string]paginate.Response[item]{
		"empty":   {Data: []item{}, Pagination: paginate.Pagination{Limit: 25}},
		"one":     {Data: data[:1], Pagination: paginate.Pagination{Limit: 1, HasMore: true, NextCursor: "ct_a:2026-11-21T09:15:30.123456Z"}},
		"escapes": {Data: data, Pagination: paginate.Pagination{Limit: 100}},
	}
	for name, resp := range cases {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, reference(t, resp), string(appendResponse(nil, resp)))
		})
	}
}

func TestAppendTime(t *testing.T) {
	times := []time.Time{
		{},
		time.Date(2026, 11, 21, 10, 15, 30, 123456789, time.UTC),
		time.Date(1999, 1, 2, 3, 4, 5, 999, time.FixedZone("x", -7*3600)),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(0, 0),
		time.Now(),
	}
	for _, tm := range times {
		want := tm.UTC().Truncate(time.Microsecond).Format(paginate.TimeLayout)
		require.Equal(t, want, string(appendTime(nil, tm)), "%v", tm)
	}
}

func FuzzAppendTime(f *testing.F) {
	f.Add(int64(0), int64(0))
	f.Add(int64(1795291650), int64(848227000))
	f.Fuzz(func(t *testing.T, sec, nsec int64) {
		tm := time.Unix(sec%(400*365*86400*30), nsec)
		want := tm.UTC().Truncate(time.Microsecond).Format(paginate.TimeLayout)
		if got := string(appendTime(nil, tm)); got != want {
			t.Fatalf("appendTime(%v) = %s, want %s", tm, got, want)
		}
	})
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a", "\"\\", "<>&", "\u2028", "\xff", "日本", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString(nil, s); string(got) != string(want) {
			t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
		}
	})
}
