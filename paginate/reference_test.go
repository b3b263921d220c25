package paginate

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// referenceString is Cursor.String as it was first written, on
// Time.Format: the reference the fixed-layout encoder must match.
func referenceString(c Cursor) string {
	if c.IsZero() {
		return ""
	}
	return c.ID + ":" + c.CreatedAt.UTC().Truncate(time.Microsecond).Format(TimeLayout)
}

// referenceParseCursor is ParseCursor as it was first written, on
// time.Parse and a Format round trip: the reference that defines which
// cursors the fixed-layout parser accepts, with which errors and values.
func referenceParseCursor(s string) (Cursor, error) {
	if len(s) > maxCursorLen {
		return Cursor{}, fmt.Errorf("%w: too long", ErrInvalidCursor)
	}
	id, ts, ok := strings.Cut(s, ":")
	if !ok {
		return Cursor{}, fmt.Errorf("%w: missing ':'", ErrInvalidCursor)
	}
	if id == "" {
		return Cursor{}, fmt.Errorf("%w: empty id", ErrInvalidCursor)
	}
	for i := 0; i < len(id); i++ {
		if b := id[i]; b <= ' ' || b >= 0x7f {
			return Cursor{}, fmt.Errorf("%w: bad character in id", ErrInvalidCursor)
		}
	}
	if len(ts) != len(TimeLayout) {
		return Cursor{}, fmt.Errorf("%w: bad timestamp", ErrInvalidCursor)
	}
	t, err := time.Parse(TimeLayout, ts)
	if err != nil {
		return Cursor{}, fmt.Errorf("%w: bad timestamp", ErrInvalidCursor)
	}
	if t.Format(TimeLayout) != ts {
		return Cursor{}, fmt.Errorf("%w: bad timestamp", ErrInvalidCursor)
	}
	return Cursor{ID: id, CreatedAt: t.UTC()}, nil
}

// sameAsReference reports how ParseCursor(s) differs from
// referenceParseCursor(s), or "" if it does not: both must accept or both
// reject, with the same error text, and an accepted cursor must be the same
// value down to its time's representation.
func sameAsReference(s string) string {
	got, err := ParseCursor(s)
	want, wantErr := referenceParseCursor(s)
	switch {
	case (err == nil) != (wantErr == nil):
		return fmt.Sprintf("ParseCursor(%q) error %v, reference error %v", s, err, wantErr)
	case err != nil && err.Error() != wantErr.Error():
		return fmt.Sprintf("ParseCursor(%q) error %q, reference error %q", s, err, wantErr)
	case err != nil && !errors.Is(err, ErrInvalidCursor):
		return fmt.Sprintf("ParseCursor(%q) error %v does not match ErrInvalidCursor", s, err)
	case got != want: // == also compares the times' location and encoding
		return fmt.Sprintf("ParseCursor(%q) = %#v, reference %#v", s, got, want)
	}
	return ""
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
			assert.Empty(t, sameAsReference(s))
		})
	}
}

func TestParseCursor_MatchesReferenceOnEveryDate(t *testing.T) {
	// Every month and day number, valid or not, of years around each leap
	// rule and the ends of the range.
	for _, year := range []int{0, 1, 3, 4, 99, 100, 200, 400, 1600, 1700, 1899, 1900, 1970, 1999, 2000, 2023, 2024, 2026, 2100, 2400, 9996, 9999} {
		for month := 0; month <= 13; month++ {
			for day := 0; day <= 32; day++ {
				s := fmt.Sprintf("id:%04d-%02d-%02dT12:34:56.789012Z", year, month, day)
				require.Empty(t, sameAsReference(s))
			}
		}
	}
	// Every clock value, valid or not.
	for hour := 0; hour <= 25; hour++ {
		for minute := 0; minute <= 61; minute++ {
			for sec := 0; sec <= 61; sec++ {
				s := fmt.Sprintf("id:2026-02-28T%02d:%02d:%02d.000001Z", hour, minute, sec)
				require.Empty(t, sameAsReference(s))
			}
		}
	}
}

func TestParseCursor_MatchesReferenceOnEveryByte(t *testing.T) {
	// Every byte in every position of a valid timestamp.
	valid := "2024-02-29T23:59:59.999999Z"
	for i := 0; i < len(valid); i++ {
		for c := 0; c < 256; c++ {
			ts := valid[:i] + string([]byte{byte(c)}) + valid[i+1:]
			require.Empty(t, sameAsReference("ct_1:"+ts))
		}
	}
}

func TestParseCursor_MatchesReferenceErrors(t *testing.T) {
	for _, s := range []string{
		"", ":", "ct_1", ":2026-11-21T10:15:30.123456Z", "ct 1:2026-11-21T10:15:30.123456Z",
		"ct_1:", "ct_1:x", strings.Repeat("a", 600) + ":2026-11-21T10:15:30.123456Z",
		strings.Repeat("a", maxCursorLen-len(TimeLayout)-1) + ":2026-11-21T10:15:30.123456Z",
		strings.Repeat("a", maxCursorLen-len(TimeLayout)) + ":2026-11-21T10:15:30.123456Z",
	} {
		assert.Empty(t, sameAsReference(s))
	}
}

// FuzzParseCursorMatchesReference checks that ParseCursor accepts exactly
// the strings the time.Parse implementation accepts, with the same errors and
// values.
func FuzzParseCursorMatchesReference(f *testing.F) {
	for _, s := range []string{
		"ct_0a1b2c:2026-11-21T10:15:30.123456Z",
		"ct_1:2024-02-29T23:59:59.999999Z",
		"ct_1:2023-02-29T23:59:59.999999Z",
		"ct_1:2026-04-31T00:00:00.000000Z",
		"ct_1:2026-01-10T1:59:59.0000000Z",
		"ct_1:2026-01-10T01:59:59,000000Z",
		"ct_1:0000-01-01T00:00:00.000000Z",
		"ct_1:9999-12-31T23:59:59.999999Z",
		"ct_1:abc:2026", "", ":",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d := sameAsReference(s); d != "" {
			t.Fatal(d)
		}
	})
}

// FuzzParseCursorFieldsMatchReference is FuzzParseCursorMatchesReference
// with the timestamp built from numbers, so that most inputs have the
// layout's shape and the date and clock checks get the exercise.
func FuzzParseCursorFieldsMatchReference(f *testing.F) {
	f.Add(uint16(2024), uint8(2), uint8(29), uint8(23), uint8(59), uint8(59), uint32(999999))
	f.Add(uint16(2100), uint8(2), uint8(29), uint8(0), uint8(0), uint8(0), uint32(0))
	f.Add(uint16(0), uint8(1), uint8(1), uint8(24), uint8(0), uint8(60), uint32(1))
	f.Fuzz(func(t *testing.T, year uint16, month, day, hour, minute, sec uint8, us uint32) {
		s := fmt.Sprintf("ct_1:%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", year, month, day, hour, minute, sec, us)
		if d := sameAsReference(s); d != "" {
			t.Fatal(d)
		}
	})
}

func TestCursorString_MatchesReference(t *testing.T) {
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

// FuzzCursorStringMatchesReference checks that Cursor.String writes what
// Time.Format writes, whatever the time, its zone and its year.
func FuzzCursorStringMatchesReference(f *testing.F) {
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

// FuzzAppendTime checks AppendTime against Time.Format over the whole range
// of times, zones included.
func FuzzAppendTime(f *testing.F) {
	f.Add(int64(0), int64(0), int32(0))
	f.Add(int64(1795291650), int64(848227000), int32(3600))
	f.Add(int64(-62167219200), int64(0), int32(0))
	f.Fuzz(func(t *testing.T, sec, nsec int64, offset int32) {
		at := time.Unix(sec, nsec).In(time.FixedZone("z", int(offset%(26*3600))))
		want := at.UTC().Truncate(time.Microsecond).Format(TimeLayout)
		if got := string(AppendTime(nil, at)); got != want {
			t.Fatalf("AppendTime(%v) = %s, want %s", at, got, want)
		}
	})
}

func TestCalendar_EveryDay(t *testing.T) {
	// civilDate, daysSinceYear0 and daysIn against the time package on
	// every day of years 0 to 9999.
	last := uint32((maxFourDigitUnix - minFourDigitUnix) / 86400)
	for days := uint32(0); days <= last; days++ {
		y, m, d := time.Unix(minFourDigitUnix+int64(days)*86400, 0).UTC().Date()
		year, month, day := civilDate(days)
		if int(year) != y || int(month) != int(m) || int(day) != d {
			t.Fatalf("civilDate(%d) = %d-%d-%d, want %d-%d-%d", days, year, month, day, y, m, d)
		}
		if got := daysSinceYear0(y, int(m), d); got != int(days) {
			t.Fatalf("daysSinceYear0(%d, %d, %d) = %d, want %d", y, m, d, got, days)
		}
		if time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC).Day() == 1 && daysIn(int(m), y) != d {
			t.Fatalf("daysIn(%d, %d) = %d, want %d", m, y, daysIn(int(m), y), d)
		}
	}
}
