package paginate

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/latchkey-dev/latchkey/internal/utcmicro"
)

// ErrInvalidCursor is matched (with errors.Is) by every error ParseCursor and
// ParseQuery return for a cursor that is not one Latchkey produced.
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
// The time is converted to UTC and truncated to microseconds, and written in
// TimeLayout. The zero Cursor encodes as the empty string.
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

// The errors of ParseCursor. Their text is part of no contract.
var (
	errCursorTooLong = fmt.Errorf("%w: too long", ErrInvalidCursor)
	errCursorNoColon = fmt.Errorf("%w: missing ':'", ErrInvalidCursor)
	errCursorEmptyID = fmt.Errorf("%w: empty id", ErrInvalidCursor)
	errCursorBadID   = fmt.Errorf("%w: bad character in id", ErrInvalidCursor)
	errCursorBadTime = fmt.Errorf("%w: bad timestamp", ErrInvalidCursor)
)

// ParseCursor decodes a cursor made by [Cursor.String]. It splits s at the
// first colon; the id half must be non-empty printable ASCII without spaces
// or colons and the time half must be in [TimeLayout] exactly, as
// Time.Format writes it. Anything else, or a cursor longer than 512 bytes,
// returns an error matching [ErrInvalidCursor]. ParseCursor never panics.
func ParseCursor(s string) (Cursor, error) {
	if len(s) > maxCursorLen {
		return Cursor{}, errCursorTooLong
	}
	id, ts, ok := strings.Cut(s, ":")
	switch {
	case !ok:
		return Cursor{}, errCursorNoColon
	case id == "":
		return Cursor{}, errCursorEmptyID
	}
	for i := 0; i < len(id); i++ {
		if b := id[i]; b <= ' ' || b >= 0x7f {
			return Cursor{}, errCursorBadID
		}
	}
	t, ok := parseTime(ts)
	if !ok {
		return Cursor{}, errCursorBadTime
	}
	return Cursor{ID: id, CreatedAt: t}, nil
}

// parseTime parses s in TimeLayout exactly: s must be what time.Parse
// accepts for the layout and Time.Format writes back unchanged, which rules
// out the looser forms time.Parse also takes (a one-digit hour, a comma
// before the fraction). The time is in UTC.
func parseTime(s string) (time.Time, bool) {
	if len(s) != len(TimeLayout) {
		return time.Time{}, false
	}
	t, err := time.Parse(TimeLayout, s)
	if err != nil {
		return time.Time{}, false
	}
	// AppendFormat writes all nine fractional digits before it cuts them
	// to six: with that room the buffer stays on the stack.
	var again [len(TimeLayout) + 3]byte
	if string(t.AppendFormat(again[:0], TimeLayout)) != s {
		return time.Time{}, false
	}
	return t, true
}

// AppendTime appends t to b in [TimeLayout], converted to UTC and truncated
// to microseconds, exactly as t.UTC().Truncate(time.Microsecond).Format(TimeLayout)
// would, and returns the extended slice. It is what [Cursor.String] writes
// after the colon, and how list responses write their items' times.
func AppendTime(b []byte, t time.Time) []byte {
	return utcmicro.Append(b, t)
}
