package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/tenant"
)

// ListFunc reads the page req asks for of a project's list.
type ListFunc[T any] func(ctx context.Context, project string, req paginate.Request) (paginate.Page[T], error)

// errNoProject means a list endpoint was mounted without a handler that
// puts the project in the request's context.
var errNoProject = errors.New("httpapi: no project in the request context")

// ReadList is the recipe of every list endpoint, of the API and of the
// console alike: it reads the page request of r's query (ParsePage), then
// lists that page of the request's project (tenant.FromContext) with list.
// It returns the page with the request it was read for, for the response
// (paginate.ResponseOf, or paginate.NewResponse); or the error of the
// query (a *problem.Error of status 400), or list's.
//
// A list endpoint is thus, besides its own parameters (filters), ReadList
// then the page written:
//
//	page, req, err := httpapi.ReadList(r, st.ListThings)
//	if err != nil {
//		return err
//	}
//	return httpapi.WriteJSON(w, http.StatusOK, paginate.NewResponse(page, req, viewOf, cursorOf))
func ReadList[T any](r *http.Request, list ListFunc[T]) (paginate.Page[T], paginate.Request, error) {
	project, ok := tenant.FromContext(r.Context())
	if !ok {
		return paginate.Page[T]{}, paginate.Request{}, errNoProject
	}
	req, err := ParsePage(r.URL.RawQuery)
	if err != nil {
		return paginate.Page[T]{}, req, err
	}
	page, err := list(r.Context(), project, req)
	return page, req, err
}

// ParsePage reads the limit and cursor parameters of a list endpoint from
// a raw query string (paginate.ParseQuery), and answers a bad limit with
// 400 invalid_parameter and a bad cursor with 400 invalid_cursor, the same
// words for every list. The answer's cause is paginate's error, matching
// paginate.ErrInvalidLimit or paginate.ErrInvalidCursor.
func ParsePage(rawQuery string) (paginate.Request, error) {
	req, err := paginate.ParseQuery(rawQuery)
	switch {
	case errors.Is(err, paginate.ErrInvalidLimit):
		return req, problem.Errorf(problem.CodeInvalidParameter,
			"The limit parameter must be given once, as an integer from 1 to %d.", paginate.MaxLimit).WithCause(err)
	case errors.Is(err, paginate.ErrInvalidCursor):
		return req, problem.New(problem.CodeInvalidCursor,
			"The cursor parameter must be given once, as pagination.next_cursor of a previous page.").WithCause(err)
	}
	return req, err
}

// BadPage reports whether err, from ReadList or ParsePage, is the answer
// to a malformed limit or cursor.
func BadPage(err error) bool {
	return errors.Is(err, paginate.ErrInvalidLimit) || errors.Is(err, paginate.ErrInvalidCursor)
}
