package paginate

import (
	"errors"
	"fmt"
	"strings"
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
	return c.ID + ":" + c.CreatedAt.UTC().Truncate(time.Microsecond).Format(TimeLayout)
}

// ParseCursor decodes a cursor made by [Cursor.String]. It splits s at the
// first colon; the id half must be non-empty printable ASCII without spaces
// or colons and the time half must be in [TimeLayout] exactly. Anything else
// returns an error matching [ErrInvalidCursor]. ParseCursor never panics.
func ParseCursor(s string) (Cursor, error) {
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
	// time.Parse accepts some inputs that do not format back identically
	// (for example a leap second); a cursor must round-trip exactly.
	if t.Format(TimeLayout) != ts {
		return Cursor{}, fmt.Errorf("%w: bad timestamp", ErrInvalidCursor)
	}
	return Cursor{ID: id, CreatedAt: t.UTC()}, nil
}
