package paginate

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deepQuery is the query of a page after a cursor, escaped as url.Values.Encode
// and encodeURIComponent escape it.
const deepQuery = "limit=25&cursor=ct_01jd9x6x0k3v8m2q4r5t6w7y8z%3A2026-11-21T22%3A00%3A45.123456Z"

// deepCursor is the cursor of deepQuery.
var deepCursor = Cursor{ID: "ct_01jd9x6x0k3v8m2q4r5t6w7y8z", CreatedAt: time.Date(2026, 11, 21, 22, 0, 45, 123456000, time.UTC)}

// errClass names the one of ErrInvalidLimit and ErrInvalidCursor err
// matches: "" for nil, "limit", "cursor", or "other" for anything else.
func errClass(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrInvalidLimit) && errors.Is(err, ErrInvalidCursor):
		return "other" // must never happen: one class per error
	case errors.Is(err, ErrInvalidLimit):
		return "limit"
	case errors.Is(err, ErrInvalidCursor):
		return "cursor"
	}
	return "other"
}

// viaValues is what the contacts handler did before ParseQuery:
// parseValues(r.URL.Query()).
func viaValues(raw string) (Request, error) {
	q, _ := url.ParseQuery(raw)
	return parseValues(q)
}

// documentedValues builds the url.Values that ParseQuery's documented rule
// reads from raw: every pair url.ParseQuery accepts on its own as that pair
// gives it, and for a pair it rejects whose key unescapes to limit or
// cursor, an empty value, which neither parameter accepts. Other rejected
// pairs are left out.
func documentedValues(raw string) url.Values {
	vs := url.Values{}
	for _, pair := range strings.Split(raw, "&") {
		if pair == "" {
			continue
		}
		if q, err := url.ParseQuery(pair); err == nil {
			for k, v := range q {
				vs[k] = append(vs[k], v...)
			}
			continue
		}
		key, _, _ := strings.Cut(pair, "=")
		if k, err := url.QueryUnescape(key); err == nil && (k == "limit" || k == "cursor") {
			vs[k] = append(vs[k], "")
		}
	}
	return vs
}

// TestParseQuery_Accepted covers queries url.ParseQuery accepts: ParseQuery
// returns the stated result, which is also what parseValues returns for
// url.ParseQuery's values.
func TestParseQuery_Accepted(t *testing.T) {
	ts := "2026-11-21T22:00:45.123456Z"
	escTS := "2026-11-21T22%3A00%3A45.123456Z"
	c1 := Cursor{ID: "ct_1", CreatedAt: deepCursor.CreatedAt}
	longLimit := "limit=" + strings.Repeat("%30", 40) + "9"
	maxID := strings.Repeat("a", maxCursorLen-len(":")-len(TimeLayout))
	for _, tc := range []struct {
		name  string
		query string
		want  Request // compared when class is ""
		class string
	}{
		{"empty", "", Request{Limit: DefaultLimit}, ""},
		{"first page", "limit=25", Request{Limit: 25}, ""},
		{"deep page", deepQuery, Request{Limit: 25, After: deepCursor}, ""},
		{"raw colons", "cursor=ct_1:" + ts, Request{Limit: DefaultLimit, After: c1}, ""},
		{"escaped id", "cursor=ct%5F1%3A" + escTS, Request{Limit: DefaultLimit, After: c1}, ""},
		{"escaped everything", "cursor=%63%74%5f%31%3a%32%30%32%36-11-21T22:00:45.123456Z", Request{Limit: DefaultLimit, After: c1}, ""},
		{"escaped limit key", "%6Cimit=5", Request{Limit: 5}, ""},
		{"escaped cursor key", "%63ursor=ct_1%3A" + escTS, Request{Limit: DefaultLimit, After: c1}, ""},
		{"escaped limit value", "limit=%35", Request{Limit: 5}, ""},
		{"escaped leading zeros", "limit=%30%30%37", Request{Limit: 7}, ""},
		{"long escaped limit", longLimit, Request{Limit: 9}, ""},
		{"escaped cursor of the greatest length", "cursor=" + maxID + "%3A" + escTS, Request{Limit: DefaultLimit, After: Cursor{ID: maxID, CreatedAt: c1.CreatedAt}}, ""},
		{"clamped", "limit=101", Request{Limit: MaxLimit}, ""},
		{"clamped overflow", "limit=" + strings.Repeat("9", 40), Request{Limit: MaxLimit}, ""},
		{"empty pairs", "&&limit=5&&", Request{Limit: 5}, ""},
		{"other keys", "x=1&limit=7&y&z=%41", Request{Limit: 7}, ""},
		{"keys are case-sensitive", "Limit=5&CURSOR=x", Request{Limit: DefaultLimit}, ""},
		{"escaped '=' in key", "limit%3D5", Request{Limit: DefaultLimit}, ""},
		{"plus in key", "limit+=5", Request{Limit: DefaultLimit}, ""},
		{"key with more", "limits=5&cursor2=x", Request{Limit: DefaultLimit}, ""},

		{"zero", "limit=0", Request{}, "limit"},
		{"double zero", "limit=00", Request{}, "limit"},
		{"plus is space", "limit=+5", Request{}, "limit"},
		{"trailing plus", "limit=5+", Request{}, "limit"},
		{"escaped plus", "limit=%2B5", Request{}, "limit"},
		{"no '='", "limit", Request{}, "limit"},
		{"second '='", "limit=5=6", Request{}, "limit"},
		{"limit twice", "limit=5&limit=5", Request{}, "limit"},
		{"limit twice, once escaped", "limit=5&%6Cimit=5", Request{}, "limit"},
		{"limit checked first", "cursor=x&limit=0", Request{}, "limit"},
		{"cursor no '='", "cursor", Request{}, "cursor"},
		{"cursor empty", "cursor=", Request{}, "cursor"},
		{"cursor twice", "cursor=ct_1:" + ts + "&%63ursor=ct_1:" + ts, Request{}, "cursor"},
		{"cursor plus in id", "cursor=ct+1%3A" + escTS, Request{}, "cursor"},
		{"cursor escaped space in id", "cursor=ct%201%3A" + escTS, Request{}, "cursor"},
		{"cursor escaped empty id", "cursor=%3A" + escTS, Request{}, "cursor"},
		{"cursor escaped no colon", "cursor=ct_1%2F" + escTS, Request{}, "cursor"},
		{"cursor escaped short time", "cursor=ct_1%3A2026-11-21T22%3A00%3A45Z", Request{}, "cursor"},
		{"cursor escaped bad time", "cursor=ct_1%3A2026-02-30T22%3A00%3A45.123456Z", Request{}, "cursor"},
		{"escaped cursor one byte too long", "cursor=" + maxID + "a%3A" + escTS, Request{}, "cursor"},
		{"cursor escaped too long", "cursor=" + strings.Repeat("a", maxCursorLen) + "%3A" + escTS, Request{}, "cursor"},
		{"cursor escaped offset", "cursor=ct_1%3A2026-11-21T22%3A00%3A45.123456%2B01", Request{}, "cursor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			require.NoError(t, err, "the case must be one url.ParseQuery accepts")
			wantReq, wantErr := parseValues(q)

			got, err := ParseQuery(tc.query)
			assert.Equal(t, tc.class, errClass(err), "ParseQuery(%q) error %v", tc.query, err)
			assert.Equal(t, errClass(wantErr), errClass(err), "parseValues gives %v", wantErr)
			if tc.class == "" {
				assert.Equal(t, tc.want, got)
				assert.Equal(t, wantReq, got)
			} else {
				assert.Equal(t, Request{}, got)
			}
		})
	}
}

// TestParseQuery_Malformed covers pairs url.ParseQuery rejects: a bad
// %-escape or a ';' makes a limit or cursor pair invalid, and is ignored in
// any other pair.
func TestParseQuery_Malformed(t *testing.T) {
	ts := "2026-11-21T22:00:45.123456Z"
	for _, tc := range []struct {
		name  string
		query string
		limit int // compared when class is ""
		class string
	}{
		{"cursor bad escape", "cursor=%zz", 0, "cursor"},
		{"cursor truncated escape", "cursor=ct_1%3", 0, "cursor"},
		{"cursor bad escape in valid cursor", "cursor=ct_1:" + ts + "%", 0, "cursor"},
		{"cursor semicolon", "cursor=ct_1:" + ts + ";x", 0, "cursor"},
		{"escaped cursor key", "%63ursor=%zz", 0, "cursor"},
		{"cursor bad then good", "cursor=%zz&cursor=ct_1:" + ts, 0, "cursor"},
		{"limit bad escape", "limit=%zz", 0, "limit"},
		{"limit lone percent", "limit=%", 0, "limit"},
		{"limit half escape", "limit=%4", 0, "limit"},
		{"limit semicolon", "limit=5;", 0, "limit"},
		{"limit semicolon pair", "limit=5;cursor=x", 0, "limit"},
		{"escaped limit key", "%6Cimit=%zz", 0, "limit"},
		{"limit good then bad", "limit=5&limit=%zz", 0, "limit"},
		{"limit before cursor", "cursor=%zz&limit=%zz", 0, "limit"},
		{"valid limit, bad cursor", "limit=5&cursor=%zz", 0, "cursor"},
		{"other key bad escape", "x=%zz&limit=5", 5, ""},
		{"other key semicolon", "a;b&limit=5", 5, ""},
		{"bad escape in key", "li%zzmit=5", DefaultLimit, ""},
		{"semicolon in key", "limit;=5", DefaultLimit, ""},
		{"lone bad escape", "%zz", DefaultLimit, ""},
		{"lone semicolon", ";", DefaultLimit, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := url.ParseQuery(tc.query)
			require.Error(t, err, "the case must be one url.ParseQuery rejects")

			got, err := ParseQuery(tc.query)
			assert.Equal(t, tc.class, errClass(err), "ParseQuery(%q) error %v", tc.query, err)
			if tc.class == "" {
				assert.Equal(t, Request{Limit: tc.limit}, got)
			} else {
				assert.Equal(t, Request{}, got)
			}
		})
	}
}

// TestParseQuery_ManyPairs shows that ParseQuery reads a query with more
// pairs than url.ParseQuery takes.
func TestParseQuery_ManyPairs(t *testing.T) {
	raw := strings.Repeat("x=1&", 20000) + "limit=5"
	_, err := url.ParseQuery(raw)
	require.Error(t, err)
	got, err := ParseQuery(raw)
	require.NoError(t, err)
	assert.Equal(t, Request{Limit: 5}, got)
}

// FuzzParseQueryMatchesParseValues checks ParseQuery against
// url.ParseQuery and parseValues: the same Request and error class
// wherever url.ParseQuery succeeds, and the documented rule for malformed
// pairs elsewhere.
func FuzzParseQueryMatchesParseValues(f *testing.F) {
	for _, s := range []string{
		"", "limit=25", deepQuery, "%6Cimit=5", "limit=+5", "limit", "cursor",
		"&&limit=5&&x", "limit=5&limit=5", "cursor=ct%5F1%3A2026-11-21T22%3A00%3A45.123456Z",
		"cursor=ct_1:2026-02-29T00:00:00.000000Z", "limit=%30%30%37", "cursor=%zz", "limit=%zz",
		"limit=5;", "a;b&limit=5", "li%zzmit=5", "%63ursor=%zz&limit=1", "limit=%", "cursor=%3",
		"limit=" + strings.Repeat("%30", 40) + "1",
	} {
		f.Add(s)
	}
	f.Fuzz(checkParseQuery)
}

// FuzzParseQueryEscapedCursor builds queries of a limit and a cursor,
// usually valid ones, escaping each byte or not as mask says, and checks them
// as FuzzParseQueryMatchesParseValues does.
func FuzzParseQueryEscapedCursor(f *testing.F) {
	f.Add("25", deepCursor.String(), []byte{0})
	f.Add("7", "ct_1:2026-02-29T00:00:00.000000Z", []byte{1, 0, 2, 3})
	f.Add("100", "ct 1:2026-11-21T22:00:45.123456Z", []byte{0, 0, 3})
	f.Add("0", "c:0000-01-01T00:00:00.000000Z", []byte{2, 1})
	f.Fuzz(func(t *testing.T, limit, cursor string, mask []byte) {
		raw := "limit=" + escapeByMask(limit, mask) + "&cursor=" + escapeByMask(cursor, mask)
		checkParseQuery(t, raw)
	})
}

// escapeByMask escapes byte i of s as mask[i%len(mask)]%4 says: 0 leaves
// it, 1 and 2 write %XX with upper- and lower-case digits, 3 writes a space
// as '+' and leaves any other byte.
func escapeByMask(s string, mask []byte) string {
	if len(mask) == 0 {
		return s
	}
	const upper, lower = "0123456789ABCDEF", "0123456789abcdef"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch mask[i%len(mask)] % 4 {
		case 1:
			b.WriteByte('%')
			b.WriteByte(upper[c>>4])
			b.WriteByte(upper[c&15])
		case 2:
			b.WriteByte('%')
			b.WriteByte(lower[c>>4])
			b.WriteByte(lower[c&15])
		case 3:
			if c == ' ' {
				c = '+'
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// checkParseQuery fails t unless ParseQuery(raw) returns what parseValues
// returns for url.ParseQuery(raw) where that succeeds, or for
// documentedValues(raw) where it does not.
func checkParseQuery(t *testing.T, raw string) {
	got, gotErr := ParseQuery(raw)
	var want Request
	var wantErr error
	if q, err := url.ParseQuery(raw); err == nil {
		// The oracle of the other branch agrees with url.ParseQuery
		// where url.ParseQuery succeeds.
		if d := documentedValues(raw); !equalValues(d, q) {
			t.Fatalf("documentedValues(%q) = %q, url.ParseQuery gives %q", raw, d, q)
		}
		want, wantErr = parseValues(q)
	} else {
		want, wantErr = parseValues(documentedValues(raw))
	}
	if errClass(gotErr) != errClass(wantErr) {
		t.Fatalf("ParseQuery(%q) error %v, want class of %v", raw, gotErr, wantErr)
	}
	if gotErr != nil {
		want = Request{}
	}
	if got.Limit != want.Limit || got.After.ID != want.After.ID || !got.After.CreatedAt.Equal(want.After.CreatedAt) ||
		got.After.CreatedAt.Location() != want.After.CreatedAt.Location() {
		t.Fatalf("ParseQuery(%q) = %+v, want %+v", raw, got, want)
	}
}

// referenceParseLimit is parseLimit as it was first written, on
// strconv.ParseUint: the reference for the saturating parser that
// parseValues and ParseQuery share.
func referenceParseLimit(s string) (int, error) {
	if s == "" {
		return 0, errBadLimit
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errBadLimit
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	switch {
	case err != nil: // only overflow: a huge positive number clamps
		return MaxLimit, nil
	case n == 0:
		return 0, errBadLimit
	case n > MaxLimit:
		return MaxLimit, nil
	}
	return int(n), nil
}

// FuzzParseLimitMatchesReference checks parseLimit against
// referenceParseLimit.
func FuzzParseLimitMatchesReference(f *testing.F) {
	for _, s := range []string{"", "0", "00", "1", "007", "100", "101", "+5", "-1", "1.5",
		"18446744073709551615", "18446744073709551616", strings.Repeat("9", 40), "0000000000000000000000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseLimit(s)
		wantN, wantErr := referenceParseLimit(s)
		if n != wantN || !errors.Is(err, wantErr) {
			t.Fatalf("parseLimit(%q) = %d, %v; want %d, %v", s, n, err, wantN, wantErr)
		}
	})
}

// equalValues reports whether a and b hold the same keys and values; an
// empty Values equals a nil one.
func equalValues(a, b url.Values) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if av[i] != bv[i] {
				return false
			}
		}
	}
	return true
}

// BenchmarkParseQuery compares ParseQuery with what the contacts handler did
// before, parseValues of url.ParseQuery's values, on the queries of the
// first page and of a page after a cursor. Compare with
// benchstat -col /impl.
func BenchmarkParseQuery(b *testing.B) {
	impls := []struct {
		name  string
		parse func(string) (Request, error)
	}{
		{"url.ParseQuery", viaValues},
		{"ParseQuery", ParseQuery},
	}
	for _, q := range []struct{ name, raw string }{{"first", "limit=25"}, {"deep", deepQuery}} {
		for _, impl := range impls {
			b.Run("q="+q.name+"/impl="+impl.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if req, err := impl.parse(q.raw); err != nil || req.Limit != 25 {
						b.Fatal(req, err)
					}
				}
			})
		}
	}
}
