package paginate

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Page size bounds shared by every list endpoint.
const (
	// DefaultLimit is the page size when a request gives no limit.
	DefaultLimit = 25
	// MaxLimit is the largest page size; larger limits are clamped to it.
	MaxLimit = 100
)

// ErrInvalidLimit is matched (with errors.Is) by every error ParseQuery
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

// errBadLimit is the error of every limit that is not a positive decimal
// integer.
var errBadLimit = fmt.Errorf("%w: must be an integer from 1 to %d", ErrInvalidLimit, MaxLimit)

// parseLimit returns the page size s asks for: s must be a decimal integer
// of at least one digit and above zero; a value above MaxLimit, however
// long, is clamped to MaxLimit.
func parseLimit(s string) (int, error) {
	if s == "" {
		return 0, errBadLimit
	}
	n := 0
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, errBadLimit
		}
		// Past MaxLimit the value only matters as "too large", so n
		// stops growing there and never overflows.
		if n <= MaxLimit {
			n = n*10 + int(d)
		}
	}
	switch {
	case n == 0:
		return 0, errBadLimit
	case n > MaxLimit:
		return MaxLimit, nil
	}
	return n, nil
}

// The errors of a limit or cursor pair that url.ParseQuery rejects.
var (
	errLimitMalformed  = fmt.Errorf("%w: malformed query pair (a ';' or a bad %%-escape)", ErrInvalidLimit)
	errCursorMalformed = fmt.Errorf("%w: malformed query pair (a ';' or a bad %%-escape)", ErrInvalidCursor)
)

// ParseQuery reads the limit and cursor parameters from rawQuery, a query
// string without its '?' as [url.URL.RawQuery] holds it, without building a
// [url.Values]. It is the one parser of every list's parameters.
//
// A missing limit means DefaultLimit; a limit above MaxLimit is clamped to
// MaxLimit. A limit that is zero, negative, not a decimal integer, or given
// more than once returns an error matching ErrInvalidLimit. A missing cursor
// asks for the first page; a cursor given more than once, empty, or not one
// ParseCursor accepts returns an error matching ErrInvalidCursor.
//
// The query is read as url.ParseQuery reads it: pairs are split at '&' only
// and empty pairs are skipped; a pair is split at its first '='; a pair
// without '=' has an empty value; keys and values are unescaped, '+'
// meaning a space, so that "%6Cimit=5" is a limit; a key given twice
// counts twice; and other keys are ignored. Whenever
// url.ParseQuery(rawQuery) succeeds, ParseQuery thus reads the same
// parameters as r.URL.Query() would.
//
// ParseQuery departs from r.URL.Query() only where url.ParseQuery reports
// an error. A pair holding a ';' or a malformed %-escape, which
// url.ParseQuery leaves out, is an invalid limit or an invalid cursor if its
// key, unescaped, is "limit" or "cursor": the error then matches
// ErrInvalidLimit or ErrInvalidCursor, as a wrong value of that parameter
// would, so that "cursor=%zz" is not served the first page. Such a pair with
// any other key is ignored. And ParseQuery reads the query however many
// pairs it has, where url.ParseQuery gives up on more than 10000.
func ParseQuery(rawQuery string) (Request, error) {
	var limit, cursor queryParam
	for q := rawQuery; q != ""; {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		key, value, _ := strings.Cut(pair, "=")
		// A key with a bad escape or a ';' never unescapes to limit or
		// cursor, so such a pair is ignored.
		switch key, _ = url.QueryUnescape(key); key {
		case "limit":
			limit.add(value)
		case "cursor":
			cursor.add(value)
		}
	}

	req := Request{Limit: DefaultLimit}
	if limit.count > 0 {
		if limit.count != 1 {
			return Request{}, fmt.Errorf("%w: limit given %d times", ErrInvalidLimit, limit.count)
		}
		v, ok := limit.value()
		if !ok {
			return Request{}, errLimitMalformed
		}
		n, err := parseLimit(v)
		if err != nil {
			return Request{}, err
		}
		req.Limit = n
	}
	if cursor.count > 0 {
		if cursor.count != 1 {
			return Request{}, fmt.Errorf("%w: cursor given %d times", ErrInvalidCursor, cursor.count)
		}
		v, ok := cursor.value()
		if !ok {
			return Request{}, errCursorMalformed
		}
		c, err := ParseCursor(v)
		if err != nil {
			return Request{}, err
		}
		req.After = c
	}
	return req, nil
}

// queryParam collects the values of one parameter of a raw query.
type queryParam struct {
	// count is how many times the parameter was given.
	count int
	// raw is its last value, still escaped.
	raw string
}

// add records one value, still escaped.
func (p *queryParam) add(raw string) {
	p.count++
	p.raw = raw
}

// value returns the last value unescaped, or false if url.ParseQuery would
// reject its pair: for a ';' or a malformed %-escape.
func (p *queryParam) value() (string, bool) {
	if strings.Contains(p.raw, ";") {
		return "", false
	}
	v, err := url.QueryUnescape(p.raw)
	return v, err == nil
}
