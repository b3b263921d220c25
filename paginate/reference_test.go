package paginate

import (
	"fmt"
	"net/url"
)

// parseValues is the reference ParseQuery is checked against (it was
// ParseRequest, the parser of url.Values, before ParseQuery was the one
// parser): it reads the limit and cursor query parameters of q.
//
// A missing limit means DefaultLimit; a limit above MaxLimit is clamped to
// MaxLimit. A limit that is zero, negative, not a decimal integer, or given
// more than once returns an error matching ErrInvalidLimit. A missing cursor
// asks for the first page; a cursor given more than once, empty, or not one
// ParseCursor accepts returns an error matching ErrInvalidCursor.
func parseValues(q url.Values) (Request, error) {
	req := Request{Limit: DefaultLimit}
	if vs, ok := q["limit"]; ok {
		if len(vs) != 1 {
			return Request{}, fmt.Errorf("%w: limit given %d times", ErrInvalidLimit, len(vs))
		}
		n, err := parseLimit(vs[0])
		if err != nil {
			return Request{}, err
		}
		req.Limit = n
	}
	if vs, ok := q["cursor"]; ok {
		if len(vs) != 1 {
			return Request{}, fmt.Errorf("%w: cursor given %d times", ErrInvalidCursor, len(vs))
		}
		c, err := ParseCursor(vs[0])
		if err != nil {
			return Request{}, err
		}
		req.After = c
	}
	return req, nil
}
