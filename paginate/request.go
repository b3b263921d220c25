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

// parseLimit returns the page size s asks for: s must be a decimal integer
// of at least one digit and above zero; a value above MaxLimit, however
// long, is clamped to MaxLimit.
func parseLimit[T string | []byte](s T) (int, error) {
	if len(s) == 0 {
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

// The errors of a limit or cursor pair that url.ParseQuery rejects, built
// once so that a rejected pair costs no allocation.
var (
	errLimitMalformed  = fmt.Errorf("%w: malformed query pair (a ';' or a bad %%-escape)", ErrInvalidLimit)
	errCursorMalformed = fmt.Errorf("%w: malformed query pair (a ';' or a bad %%-escape)", ErrInvalidCursor)
)

// ParseQuery reads the limit and cursor parameters from rawQuery, a query
// string without its '?' as [url.URL.RawQuery] holds it, by the rules of
// [ParseRequest], without building a [url.Values]. It allocates nothing
// for the queries clients send, escaped cursors included; only a cursor
// whose id is escaped itself (one string, the id), a limit longer than 32
// bytes unescaped, and a parameter given twice (the error) allocate.
//
// Whenever url.ParseQuery(rawQuery) succeeds, ParseQuery returns the Request
// that ParseRequest returns for its result, or an error matching the same
// one of ErrInvalidLimit and ErrInvalidCursor. The query is read as
// url.ParseQuery reads it: pairs are split at '&' only and empty pairs are
// skipped; a pair is split at its first '='; a pair without '=' has an empty
// value; keys and values are unescaped, '+' meaning a space, so that
// "%6Cimit=5" is a limit; a key given twice counts twice; and other keys are
// ignored.
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
	var (
		limits, cursors int    // how many times each key was given
		limit, cursor   string // the last value of each, still escaped
	)
	for q := rawQuery; q != ""; {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		key, value, _ := strings.Cut(pair, "=")
		switch {
		case key == "limit" || keyIs(key, "limit"):
			limits++
			limit = value
		case key == "cursor" || keyIs(key, "cursor"):
			cursors++
			cursor = value
		}
	}

	req := Request{Limit: DefaultLimit}
	if limits > 0 {
		if limits != 1 {
			return Request{}, fmt.Errorf("%w: limit given %d times", ErrInvalidLimit, limits)
		}
		n, err := parseLimitComponent(limit)
		if err != nil {
			return Request{}, err
		}
		req.Limit = n
	}
	if cursors > 0 {
		if cursors != 1 {
			return Request{}, fmt.Errorf("%w: cursor given %d times", ErrInvalidCursor, cursors)
		}
		c, err := parseCursorComponent(cursor)
		if err != nil {
			return Request{}, err
		}
		req.After = c
	}
	return req, nil
}

// parseLimitComponent is parseLimit of the escaped query value v.
func parseLimitComponent(v string) (int, error) {
	// A key with a literal ';' never unescapes to limit or cursor, so a
	// ';' in a pair of theirs is in the value.
	if strings.IndexByte(v, ';') >= 0 {
		return 0, errLimitMalformed
	}
	from := firstEscape(v)
	if from < 0 {
		return parseLimit(v)
	}
	var buf [32]byte
	n, ok, fits := unescape(buf[:], v, from)
	switch {
	case !ok:
		return 0, errLimitMalformed
	case !fits:
		// A limit padded with many escaped zeros.
		long := make([]byte, len(v))
		n, _, _ = unescape(long, v, from)
		return parseLimit(long[:n])
	}
	return parseLimit(buf[:n])
}

// parseCursorComponent is ParseCursor of the escaped query value v. The
// value is unescaped into a stack buffer; the id is a substring of v unless
// it was escaped itself.
func parseCursorComponent(v string) (Cursor, error) {
	if strings.IndexByte(v, ';') >= 0 {
		return Cursor{}, errCursorMalformed
	}
	from := firstEscape(v)
	if from < 0 {
		return ParseCursor(v)
	}
	var buf [maxCursorLen]byte
	n, ok, fits := unescape(buf[:], v, from)
	switch {
	case !ok:
		return Cursor{}, errCursorMalformed
	case !fits:
		return Cursor{}, errCursorTooLong
	}
	b := buf[:n]
	colon, t, err := splitCursor(b)
	if err != nil {
		return Cursor{}, err
	}
	// v and its unescaped form agree up to the first '%' or '+'.
	id := v[:colon]
	if from < colon {
		id = string(b[:colon])
	}
	return Cursor{ID: id, CreatedAt: t}, nil
}

// firstEscape returns the index of the first '%' or '+' in s, or -1 if s
// needs no unescaping.
func firstEscape(s string) int {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		i = len(s)
	}
	if j := strings.IndexByte(s[:i], '+'); j >= 0 {
		return j
	}
	if i == len(s) {
		return -1
	}
	return i
}

// unescape writes the query component s to dst unescaped, as
// url.QueryUnescape would, and returns the number of bytes written. s[:from]
// must hold no '%' or '+'. ok is false if s holds a malformed escape, one
// '%' not followed by two hex digits; fits is false if the unescaped s is
// longer than dst.
func unescape(dst []byte, s string, from int) (n int, ok, fits bool) {
	if from > len(dst) {
		return 0, wellFormed(s[from:]), false
	}
	n = copy(dst, s[:from])
	for i := from; i < len(s); i++ {
		c := s[i]
		switch c {
		case '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return 0, false, true
			}
			c = unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
		case '+':
			c = ' '
		}
		if n == len(dst) {
			return 0, wellFormed(s[i:]), false
		}
		dst[n] = c
		n++
	}
	return n, true, true
}

// wellFormed reports whether every '%' in s is followed by two hex digits.
func wellFormed(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

// keyIs reports whether the query component key unescapes, without error,
// to name.
func keyIs(key, name string) bool {
	j := 0
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch c {
		case '%':
			if i+2 >= len(key) || !isHex(key[i+1]) || !isHex(key[i+2]) {
				return false
			}
			c = unhex(key[i+1])<<4 | unhex(key[i+2])
			i += 2
		case '+':
			c = ' '
		}
		if j == len(name) || c != name[j] {
			return false
		}
		j++
	}
	return j == len(name)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// unhex returns the value of the hex digit c.
func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
