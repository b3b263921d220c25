package paginate

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
)

// Page size bounds shared by every list endpoint.
const (
	// DefaultLimit is the page size when a request gives no limit.
	DefaultLimit = 25
	// MaxLimit is the largest page size; larger limits are clamped to it.
	MaxLimit = 100
)

// ErrInvalidLimit is matched (with errors.Is) by every error ParseRequest
// returns for a bad limit parameter.
var ErrInvalidLimit = errors.New("paginate: invalid limit")

// Request is a validated page request: how many items, and after which
// position. Stores take it as it is.
type Request struct {
	// Limit is the page size, from 1 to MaxLimit.
	Limit int
	// After is the position the page starts strictly after; the zero Cursor
	// asks for the first page.
	After Cursor
}

// ParseRequest reads the limit and cursor query parameters.
//
// A missing limit means DefaultLimit; a limit above MaxLimit is clamped to
// MaxLimit. A limit that is zero, negative, not a decimal integer, or given
// more than once returns an error matching ErrInvalidLimit. A missing cursor
// asks for the first page; a cursor given more than once, empty, or not one
// ParseCursor accepts returns an error matching ErrInvalidCursor.
func ParseRequest(q url.Values) (Request, error) {
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

// errBadLimit is the error of every limit that is not a positive decimal
// integer, built once so that a rejected limit costs no allocation.
var errBadLimit = fmt.Errorf("%w: must be an integer from 1 to %d", ErrInvalidLimit, MaxLimit)

func parseLimit(s string) (int, error) {
	if s == "" {
		return 0, errBadLimit
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errBadLimit
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		// Only overflow reaches here: a huge positive number clamps.
		return MaxLimit, nil
	}
	if n == 0 {
		return 0, errBadLimit
	}
	if n > MaxLimit {
		return MaxLimit, nil
	}
	return int(n), nil
}
