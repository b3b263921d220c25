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
