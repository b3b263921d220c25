package paginate

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCursor_RoundTrip(t *testing.T) {
	c := Cursor{ID: "ct_0a1b2c", CreatedAt: time.Date(2026, 11, 21, 10, 15, 30, 123456789, time.UTC)}
	s := c.String()
	assert.Equal(t, "ct_0a1b2c:2026-11-21T10:15:30.123456Z", s)
	got, err := ParseCursor(s)
	require.NoError(t, err)
	assert.Equal(t, c.ID, got.ID)
	assert.True(t, got.CreatedAt.Equal(c.CreatedAt.Truncate(time.Microsecond)), "got %v", got.CreatedAt)
	assert.Equal(t, time.UTC, got.CreatedAt.Location())
}

func TestCursor_StringConvertsToUTC(t *testing.T) {
	loc := time.FixedZone("plus2", 2*3600)
	c := Cursor{ID: "ct_x", CreatedAt: time.Date(2026, 1, 2, 12, 0, 0, 0, loc)}
	assert.Equal(t, "ct_x:2026-01-02T10:00:00.000000Z", c.String())
}

func TestCursor_ZeroEncodesEmpty(t *testing.T) {
	assert.Equal(t, "", Cursor{}.String())
	assert.True(t, Cursor{}.IsZero())
}

func TestParseCursor_SplitsAtFirstColon(t *testing.T) {
	// The id half cannot hold a colon, so the time half here is
	// "abc:2026-..." and the cursor is rejected rather than misread.
	_, err := ParseCursor("ct_1:abc:2026-11-21T10:15:30.123456Z")
	assert.ErrorIs(t, err, ErrInvalidCursor)
}

func TestParseCursor_Rejects(t *testing.T) {
	for name, in := range map[string]string{
		"empty":           "",
		"no colon":        "ct_1",
		"empty id":        ":2026-11-21T10:15:30.123456Z",
		"empty time":      "ct_1:",
		"no fraction":     "ct_1:2026-11-21T10:15:30Z",
		"millis":          "ct_1:2026-11-21T10:15:30.123Z",
		"nanos":           "ct_1:2026-11-21T10:15:30.123456789Z",
		"offset":          "ct_1:2026-11-21T10:15:30.123456+01:00",
		"lowercase z":     "ct_1:2026-11-21T10:15:30.123456z",
		"space in id":     "ct 1:2026-11-21T10:15:30.123456Z",
		"control in id":   "ct\x001:2026-11-21T10:15:30.123456Z",
		"non-ascii id":    "ct_é:2026-11-21T10:15:30.123456Z",
		"month 13":        "ct_1:2026-13-21T10:15:30.123456Z",
		"feb 30":          "ct_1:2026-02-30T10:15:30.123456Z",
		"hour 24":         "ct_1:2026-11-21T24:15:30.123456Z",
		"leap second":     "ct_1:2026-12-31T23:59:60.000000Z",
		"trailing":        "ct_1:2026-11-21T10:15:30.123456Zx",
		"too long":        strings.Repeat("a", 600) + ":2026-11-21T10:15:30.123456Z",
		"base64 garbage":  "eyJpZCI6MX0=",
		"sign in year":    "ct_1:+026-11-21T10:15:30.123456Z",
		"space in time":   "ct_1:2026-11-21 10:15:30.123456Z",
		"letter fraction": "ct_1:2026-11-21T10:15:30.12345aZ",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseCursor(in)
			assert.ErrorIs(t, err, ErrInvalidCursor, "ParseCursor(%q)", in)
		})
	}
}

// FuzzParseCursor checks that ParseCursor never panics, that whatever it
// accepts encodes back to the same text, and that every cursor it makes is
// accepted.
func FuzzParseCursor(f *testing.F) {
	for _, s := range []string{
		"ct_0a1b2c:2026-11-21T10:15:30.123456Z",
		"ct_1:abc:2026",
		"",
		":",
		"x:0000-01-01T00:00:00.000000Z",
		"ct_1:9999-12-31T23:59:59.999999Z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCursor(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidCursor) {
				t.Fatalf("ParseCursor(%q) error %v does not match ErrInvalidCursor", s, err)
			}
			return
		}
		if got := c.String(); got != s {
			t.Fatalf("ParseCursor(%q).String() = %q, want the input back", s, got)
		}
		again, err := ParseCursor(c.String())
		if err != nil || again.ID != c.ID || !again.CreatedAt.Equal(c.CreatedAt) {
			t.Fatalf("round trip of %q: %v, %v", s, again, err)
		}
	})
}

// FuzzCursorEncode checks that every cursor built from an id without colons,
// spaces or control bytes and any time between years 0 and 9999 round-trips.
func FuzzCursorEncode(f *testing.F) {
	f.Add("ct_abc", int64(1795000000123456))
	f.Add("k", int64(0))
	f.Fuzz(func(t *testing.T, id string, micros int64) {
		if id == "" || len(id) > 200 || strings.ContainsAny(id, ": ") {
			return
		}
		for i := 0; i < len(id); i++ {
			if id[i] <= ' ' || id[i] >= 0x7f {
				return
			}
		}
		const minMicros, maxMicros = -62135596800000000, 253402300799999999 // years 1..9999
		if micros < minMicros || micros > maxMicros {
			return
		}
		c := Cursor{ID: id, CreatedAt: time.UnixMicro(micros).UTC()}
		got, err := ParseCursor(c.String())
		if err != nil {
			t.Fatalf("ParseCursor(%q) = %v", c.String(), err)
		}
		if got.ID != id || !got.CreatedAt.Equal(c.CreatedAt) {
			t.Fatalf("round trip %v -> %v", c, got)
		}
	})
}

func TestParseCursor_Edges(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s, us int) time.Time {
		return time.Date(y, mo, d, h, mi, s, us*1000, time.UTC)
	}
	for _, tc := range []struct {
		ts   string
		want time.Time // zero: rejected
	}{
		{"2026-11-21T10:15:30.123456Z", utc(2026, 11, 21, 10, 15, 30, 123456)},
		{"0000-01-01T00:00:00.000000Z", utc(0, 1, 1, 0, 0, 0, 0)},
		{"9999-12-31T23:59:59.999999Z", utc(9999, 12, 31, 23, 59, 59, 999999)},
		{"1970-01-01T00:00:00.000000Z", utc(1970, 1, 1, 0, 0, 0, 0)},
		{"1969-12-31T23:59:59.999999Z", utc(1969, 12, 31, 23, 59, 59, 999999)},
		{"2024-02-29T00:00:00.000000Z", utc(2024, 2, 29, 0, 0, 0, 0)},
		{"2000-02-29T12:00:00.000000Z", utc(2000, 2, 29, 12, 0, 0, 0)},
		{"0000-02-29T12:00:00.000000Z", utc(0, 2, 29, 12, 0, 0, 0)},
		{"0400-02-29T12:00:00.000000Z", utc(400, 2, 29, 12, 0, 0, 0)},
		{"0004-02-29T12:00:00.000000Z", utc(4, 2, 29, 12, 0, 0, 0)},
		{"2026-01-31T00:00:00.000000Z", utc(2026, 1, 31, 0, 0, 0, 0)},
		{"2026-03-31T00:00:00.000000Z", utc(2026, 3, 31, 0, 0, 0, 0)},
		{"2026-07-31T00:00:00.000000Z", utc(2026, 7, 31, 0, 0, 0, 0)},
		{"2026-08-31T00:00:00.000000Z", utc(2026, 8, 31, 0, 0, 0, 0)},
		{"2026-12-31T00:00:00.000000Z", utc(2026, 12, 31, 0, 0, 0, 0)},
		{"2026-04-30T23:59:59.000001Z", utc(2026, 4, 30, 23, 59, 59, 1)},
		{"2026-02-28T00:00:00.000000Z", utc(2026, 2, 28, 0, 0, 0, 0)},

		{"2023-02-29T00:00:00.000000Z", time.Time{}},
		{"1900-02-29T00:00:00.000000Z", time.Time{}},
		{"2100-02-29T00:00:00.000000Z", time.Time{}},
		{"0100-02-29T00:00:00.000000Z", time.Time{}},
		{"2024-02-30T00:00:00.000000Z", time.Time{}},
		{"2026-04-31T00:00:00.000000Z", time.Time{}},
		{"2026-06-31T00:00:00.000000Z", time.Time{}},
		{"2026-09-31T00:00:00.000000Z", time.Time{}},
		{"2026-11-31T00:00:00.000000Z", time.Time{}},
		{"2026-01-32T00:00:00.000000Z", time.Time{}},
		{"2026-01-00T00:00:00.000000Z", time.Time{}},
		{"2026-00-10T00:00:00.000000Z", time.Time{}},
		{"2026-13-10T00:00:00.000000Z", time.Time{}},
		{"2026-01-10T24:00:00.000000Z", time.Time{}},
		{"2026-01-10T23:60:00.000000Z", time.Time{}},
		{"2026-01-10T23:59:60.000000Z", time.Time{}},
		{"2026-01-10T23:59:99.000000Z", time.Time{}},
		{"2026-01-10T1:59:59.0000000Z", time.Time{}},  // one-digit hour, time.Parse takes it
		{"2026-1-10T01:59:59.0000000Z", time.Time{}},  // one-digit month
		{"2026-01-10T01:59:59,000000Z", time.Time{}},  // comma, time.Parse takes it
		{"2026-01-10T01:59:59.+12345Z", time.Time{}},  // sign in the fraction
		{"2026-01-10T01:59:59.-12345Z", time.Time{}},  // sign in the fraction
		{"-026-01-10T01:59:59.012345Z", time.Time{}},  // sign in the year
		{"2026-01-10t01:59:59.012345Z", time.Time{}},  // lowercase t
		{"2026-01-10T01:59:59.012345z", time.Time{}},  // lowercase z
		{"2026/01/10T01:59:59.012345Z", time.Time{}},  // other separators
		{"2026-01-10T01-59-59.012345Z", time.Time{}},  // other separators
		{"２026-01-10T01:59:59.0123Z", time.Time{}},    // non-ASCII digit
		{"2026-01-10T01:59:59.012345", time.Time{}},   // no zone
		{"2026-01-10T01:59:59.012345ZZ", time.Time{}}, // trailing
		{"", time.Time{}},
	} {
		t.Run(tc.ts, func(t *testing.T) {
			s := "ct_1:" + tc.ts
			got, err := ParseCursor(s)
			if tc.want.IsZero() {
				assert.ErrorIs(t, err, ErrInvalidCursor)
			} else if assert.NoError(t, err) {
				assert.Equal(t, "ct_1", got.ID)
				assert.True(t, got.CreatedAt.Equal(tc.want), "got %v, want %v", got.CreatedAt, tc.want)
				assert.Equal(t, time.UTC, got.CreatedAt.Location())
			}
		})
	}
}

// referenceString is Cursor.String written with Time.Format, the reference
// that Cursor.String (through internal/utcmicro) must match.
func referenceString(c Cursor) string {
	if c.IsZero() {
		return ""
	}
	return c.ID + ":" + c.CreatedAt.UTC().Truncate(time.Microsecond).Format(TimeLayout)
}

func TestCursorString_MatchesFormat(t *testing.T) {
	east, west := time.FixedZone("east", 14*3600), time.FixedZone("west", -12*3600-30*60)
	for _, at := range []time.Time{
		{},
		time.Date(2026, 11, 21, 10, 15, 30, 123456789, time.UTC),
		time.Date(2026, 11, 21, 10, 15, 30, 999, time.UTC),
		time.Date(2026, 1, 1, 1, 0, 0, 0, east),
		time.Date(2026, 12, 31, 20, 0, 0, 0, west),
		time.Date(2024, 2, 29, 23, 59, 59, 999999999, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, west), // year 0 in UTC
		time.Date(0, 1, 1, 0, 0, 0, 0, east), // year -1 in UTC: Format's path
		time.Date(-1, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(-5, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, west), // year 10000 in UTC
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(123456, 7, 8, 9, 10, 11, 12000, time.UTC),
		time.Unix(0, 0),
		time.Now(), // with a monotonic reading and the local zone
	} {
		for _, id := range []string{"ct_1", "", strings.Repeat("k", 200)} {
			c := Cursor{ID: id, CreatedAt: at}
			require.Equal(t, referenceString(c), c.String(), "%q %v", id, at)
		}
	}
}

// FuzzCursorStringMatchesFormat checks that Cursor.String writes what
// Time.Format writes, whatever the time, its zone and its year.
func FuzzCursorStringMatchesFormat(f *testing.F) {
	f.Add("ct_1", int64(1795291650), int64(848227123), int32(0))
	f.Add("", int64(-62167219200), int64(0), int32(-3600))
	f.Add("x", int64(253402300799), int64(999999999), int32(60))
	f.Fuzz(func(t *testing.T, id string, sec, nsec int64, offset int32) {
		at := time.Unix(sec, nsec).In(time.FixedZone("z", int(offset%(26*3600))))
		c := Cursor{ID: id, CreatedAt: at}
		if got, want := c.String(), referenceString(c); got != want {
			t.Fatalf("Cursor{%q, %v}.String() = %q, want %q", id, at, got, want)
		}
	})
}

func TestAppendTime(t *testing.T) {
	for _, at := range []time.Time{
		{},
		time.Date(2026, 11, 21, 10, 15, 30, 123456789, time.UTC),
		time.Date(1999, 1, 2, 3, 4, 5, 999, time.FixedZone("x", -7*3600)),
		time.Date(2000, 2, 29, 0, 0, 0, 1000, time.UTC),
		time.Date(2100, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(0, 2, 29, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(0, 0),
		time.Now(),
	} {
		want := at.UTC().Truncate(time.Microsecond).Format(TimeLayout)
		require.Equal(t, "prefix "+want, string(AppendTime([]byte("prefix "), at)), "%v", at)
	}
}
