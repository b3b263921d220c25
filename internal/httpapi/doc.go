// Package httpapi is the HTTP plumbing shared by Latchkey's handlers: one
// problem+json error writer with the stable error codes of the wire
// contract, strict JSON request-body decoding, and an adapter that lets
// handlers return errors instead of writing them.
//
// Handlers are written as [HandlerFunc], func(w, r) error, and return store
// errors as they are: [WriteError] alone decides the answer. An error
// matching store.ErrUnavailable becomes 503 unavailable with Retry-After; a
// returned *Error is written as RFC 9457 problem+json with its status and
// code; any other error becomes a generic 500 "internal" answer. The causes
// of 5xx answers are logged and never shown to the client.
package httpapi
