// Package httpapi is the HTTP plumbing shared by Latchkey's handlers:
// strict JSON and form request-body decoding, the list parameters, JSON
// responses, and an adapter that lets handlers return errors instead of
// writing them.
//
// Handlers are written as [HandlerFunc], func(w, r) error, and return store
// errors as they are: problem.Write alone decides the answer. An error
// matching store.ErrUnavailable becomes 503 unavailable with Retry-After; a
// returned *problem.Error is written as RFC 9457 problem+json with its
// status and code; any other error becomes a generic 500 "internal" answer.
// The causes of 5xx answers are logged and never shown to the client.
package httpapi
