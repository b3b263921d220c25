// Package tenant carries the project of a request through its context.
//
// A Latchkey handler serves one project per request. The mounting handler
// resolves that project with a [Resolver] supplied by the host app and
// stores it with [NewContext]; every handler below reads it with
// [FromContext]. Nothing in Latchkey reads a project from anywhere else, so a
// request can never act on a project other than the one resolved for it.
package tenant

import (
	"context"
	"errors"
	"net/http"
)

// ErrUnknownProject is returned by a Resolver that cannot name a project for
// the request. Handlers answer it with 404.
var ErrUnknownProject = errors.New("tenant: unknown project")

// Resolver names the project a request is for. It must not read the request
// body. It returns an error matching ErrUnknownProject when the request names
// no project it serves.
type Resolver func(r *http.Request) (string, error)

// Fixed returns a Resolver that puts every request in project id.
func Fixed(id string) Resolver {
	return func(*http.Request) (string, error) { return id, nil }
}

type ctxKey struct{}

// NewContext returns a copy of ctx that carries project id.
func NewContext(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// FromContext returns the project stored in ctx by NewContext, and whether
// there was one.
func FromContext(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(ctxKey{}).(string)
	return id, ok && id != ""
}

// FromRequest is a Resolver for a host whose own handler, in front of
// Latchkey's, has already put the project in the request's context with
// NewContext (for example one that routes /p/{project}/... by path). It
// returns ErrUnknownProject when there is none.
func FromRequest(r *http.Request) (string, error) {
	if id, ok := FromContext(r.Context()); ok {
		return id, nil
	}
	return "", ErrUnknownProject
}
