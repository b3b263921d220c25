package paginate

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidCursor is matched (with errors.Is) by every error ParseCursor and
// ParseRequest return for a cursor that is not one Latchkey produced.
var ErrInvalidCursor = errors.New("paginate: invalid cursor")

// TimeLayout is the layout of the timestamp half of a cursor: RFC 3339 in UTC
// with exactly six fractional digits.
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// maxCursorLen bounds the cursor text accepted, so that parsing costs the same
// whatever a client sends. Ids are far shorter in practice.
const maxCursorLen = 512

// Cursor is a position in a list: the id and creation time of the last item
// a client has seen. The zero Cursor means "before the first item".
type Cursor struct {
	// ID is the id of the last item seen.
	ID string
	// CreatedAt is that item's creation time; only microseconds count.
	CreatedAt time.Time
}

// IsZero reports whether c is the zero Cursor, the start of a list.
func (c Cursor) IsZero() bool { return c.ID == "" && c.CreatedAt.IsZero() }

// String encodes c as "<id>:<time>", the form clients pass back unchanged.
// The time is converted to UTC and truncated to microseconds. The zero Cursor
// encodes as the empty string.
func (c Cursor) String() string {
	if c.IsZero() {
		return ""
	}
	// A cursor of a usual id fits buf, which stays on the stack, so the
	// string conversion is the only allocation.
	var buf [96]byte
	b := append(buf[:0], c.ID...)
	b = append(b, ':')
	return string(AppendTime(b, c.CreatedAt))
}

// The errors of ParseCursor. Their text is part of no contract, but each is
// built once so that a rejected cursor costs no allocation.
var (
	errCursorTooLong = fmt.Errorf("%w: too long", ErrInvalidCursor)
	errCursorNoColon = fmt.Errorf("%w: missing ':'", ErrInvalidCursor)
	errCursorEmptyID = fmt.Errorf("%w: empty id", ErrInvalidCursor)
	errCursorBadID   = fmt.Errorf("%w: bad character in id", ErrInvalidCursor)
	errCursorBadTime = fmt.Errorf("%w: bad timestamp", ErrInvalidCursor)
)

// ParseCursor decodes a cursor made by [Cursor.String]. It splits s at the
// first colon; the id half must be non-empty printable ASCII without spaces
// or colons and the time half must be in [TimeLayout] exactly. Anything else
// returns an error matching [ErrInvalidCursor]. ParseCursor never panics.
func ParseCursor(s string) (Cursor, error) {
	colon, t, err := splitCursor(s)
	if err != nil {
		return Cursor{}, err
	}
	return Cursor{ID: s[:colon], CreatedAt: t}, nil
}

// splitCursor checks the cursor text s by the rules of ParseCursor and
// returns the index of the colon that ends the id, and the time. It takes
// the unescaped bytes of a query value too (ParseQuery), without a copy.
func splitCursor[S string | []byte](s S) (int, time.Time, error) {
	if len(s) > maxCursorLen {
		return 0, time.Time{}, errCursorTooLong
	}
	colon := -1
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			colon = i
			break
		}
	}
	if colon < 0 {
		return 0, time.Time{}, errCursorNoColon
	}
	if colon == 0 {
		return 0, time.Time{}, errCursorEmptyID
	}
	for i := 0; i < colon; i++ {
		if b := s[i]; b <= ' ' || b >= 0x7f {
			return 0, time.Time{}, errCursorBadID
		}
	}
	// For a []byte the conversion is short and does not escape: it stays
	// on the stack.
	t, ok := parseTime(string(s[colon+1:]))
	if !ok {
		return 0, time.Time{}, errCursorBadTime
	}
	return colon, t, nil
}

// Unix times of the first and last second whose year has four digits,
// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z.
const (
	minFourDigitUnix = -62167219200
	maxFourDigitUnix = 253402300799
)

// AppendTime appends t to b in [TimeLayout], converted to UTC and truncated
// to microseconds, as t.UTC().Truncate(time.Microsecond).Format(TimeLayout)
// would, and returns the extended slice. It is what [Cursor.String] writes
// after the colon. Times whose year is outside 0 to 9999, which the layout
// cannot hold in four digits, are written as Format writes them.
func AppendTime(b []byte, t time.Time) []byte {
	sec := t.Unix()
	if sec < minFourDigitUnix || sec > maxFourDigitUnix {
		return t.UTC().Truncate(time.Microsecond).AppendFormat(b, TimeLayout)
	}
	s := uint64(sec - minFourDigitUnix) // seconds since 0000-01-01
	days := uint32(s / 86400)
	clock := uint32(s - uint64(days)*86400)
	year, month, day := civilDate(days)
	hour, minute, second := clock/3600, clock/60%60, clock%60
	us := uint32(t.Nanosecond()) / 1000
	usHigh, usLow := us/10000, us%10000
	return append(b,
		digitPairs[2*(year/100)], digitPairs[2*(year/100)+1],
		digitPairs[2*(year%100)], digitPairs[2*(year%100)+1], '-',
		digitPairs[2*month], digitPairs[2*month+1], '-',
		digitPairs[2*day], digitPairs[2*day+1], 'T',
		digitPairs[2*hour], digitPairs[2*hour+1], ':',
		digitPairs[2*minute], digitPairs[2*minute+1], ':',
		digitPairs[2*second], digitPairs[2*second+1], '.',
		digitPairs[2*usHigh], digitPairs[2*usHigh+1],
		digitPairs[2*(usLow/100)], digitPairs[2*(usLow/100)+1],
		digitPairs[2*(usLow%100)], digitPairs[2*(usLow%100)+1], 'Z')
}

// digitPairs[2*n:2*n+2] is n from 0 to 99 in two decimal digits.
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// Days in 400 Gregorian years, and from 0000-01-01 to 0000-03-01 (year 0 is
// a leap year).
const (
	daysPer400Years = 146097
	daysJanFeb0     = 60
)

// civilDate returns the proleptic Gregorian date days after 0000-01-01, for
// days from 0 to the end of year 9999. It counts years from March 1, so
// that the leap day ends a year, and 400 years ahead, so that January and
// February of year 0 count from a March 1 too (C. Neri and L. Schneider,
// "Euclidean affine functions and their application to calendar
// algorithms", 2023).
func civilDate(days uint32) (year, month, day uint32) {
	n := 4*(days-daysJanFeb0+daysPer400Years) + 3
	century := n / daysPer400Years
	cd := n%daysPer400Years | 3 // 4*(day of century)+3
	cyear := cd / 1461
	yday := cd % 1461 / 4 // day of the March-based year, 0..365
	md := 2141*yday + 197913
	month, day = md>>16, (md&0xffff)/2141+1 // month 3..14
	year = century*100 + cyear
	if month > 12 {
		month -= 12
		year++
	}
	return year - 400, month, day
}

// parseTime parses s in [TimeLayout] exactly: every field its fixed number
// of ASCII digits, month 01-12, a day that exists in that month (leap years
// by the Gregorian rule), hour 00-23, minute and second 00-59, and the
// literal separators. These are the strings that time.Parse accepts for the
// layout and Time.Format writes back unchanged. The time is in UTC.
func parseTime(s string) (time.Time, bool) {
	if len(s) != len(TimeLayout) {
		return time.Time{}, false
	}
	if s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[26] != 'Z' {
		return time.Time{}, false
	}
	year, ok1 := fixedDigits(s[0:4])
	month, ok2 := fixedDigits(s[5:7])
	day, ok3 := fixedDigits(s[8:10])
	hour, ok4 := fixedDigits(s[11:13])
	minute, ok5 := fixedDigits(s[14:16])
	second, ok6 := fixedDigits(s[17:19])
	us, ok7 := fixedDigits(s[20:26])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) ||
		month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour > 23 || minute > 59 || second > 59 {
		return time.Time{}, false
	}
	days := daysSinceYear0(year, month, day)
	sec := minFourDigitUnix + int64(days)*86400 + int64(hour*3600+minute*60+second)
	return time.Unix(sec, int64(us)*1000).UTC(), true
}

// fixedDigits returns the value of s if it is all ASCII digits.
func fixedDigits(s string) (n int, ok bool) {
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + int(d)
	}
	return n, true
}

// monthDays[m-1] is the number of days of month m in a common year.
var monthDays = [12]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// daysIn returns the number of days of month (1-12) in year.
func daysIn(month, year int) int {
	if month == 2 && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		return 29
	}
	return monthDays[month-1]
}

// daysSinceYear0 returns the number of days from 0000-01-01 to the date,
// which must be valid and in years 0 to 9999 (H. Hinnant's days_from_civil).
func daysSinceYear0(year, month, day int) int {
	// Count years from March 1 so that the leap day ends a year, 400
	// years ahead so that January and February of year 0 stay positive.
	year += 400
	if month <= 2 {
		year--
		month += 9
	} else {
		month -= 3
	}
	era := year / 400
	yoe := year - era*400                  // year of era, 0..399
	doy := (153*month+2)/5 + day - 1       // day of March-based year, 0..365
	doe := yoe*365 + yoe/4 - yoe/100 + doy // day of era, 0..146096
	return (era-1)*daysPer400Years + doe + daysJanFeb0
}
