package httpapi

import (
	"errors"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/problem"
)

// ParsePage reads the limit and cursor parameters of a list endpoint from
// a raw query string (paginate.ParseQuery), and answers a bad limit with
// 400 invalid_parameter and a bad cursor with 400 invalid_cursor, the same
// words for every list.
func ParsePage(rawQuery string) (paginate.Request, error) {
	req, err := paginate.ParseQuery(rawQuery)
	switch {
	case errors.Is(err, paginate.ErrInvalidLimit):
		return req, problem.Errorf(problem.CodeInvalidParameter,
			"The limit parameter must be given once, as an integer from 1 to %d.", paginate.MaxLimit)
	case errors.Is(err, paginate.ErrInvalidCursor):
		return req, problem.New(problem.CodeInvalidCursor,
			"The cursor parameter must be given once, as pagination.next_cursor of a previous page.")
	}
	return req, err
}
