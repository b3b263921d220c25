// Package requestid gives every HTTP request an id that its response, its
// log lines and its error bodies carry, so that a client's report and a
// server's logs can be matched.
//
// [Middleware] keeps an incoming X-Request-Id that is a short token of safe
// characters ([Valid]) and otherwise makes a new one; it sets the id on the
// response and puts it in the request's context, where [FromContext] reads
// it. Latchkey's handlers apply it themselves; a host that logs requests
// applies it in front of its logger, and Latchkey keeps the id it finds.
package requestid

import (
	"context"
	"crypto/rand"
	"net/http"
)

// Header is the request and response header that carries the id.
const Header = "X-Request-Id"

// MaxLen is the length, in bytes, of the longest incoming id that is kept.
const MaxLen = 64

type ctxKey struct{}

// entry is a request's id in its context, with the header value that
// carries it, so that giving a request its id allocates once.
type entry struct {
	id     string
	header [1]string
}

// NewContext returns a copy of ctx that carries the request id id.
func NewContext(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, &entry{id: id})
}

// FromContext returns the request id stored in ctx by NewContext, Start
// or Middleware, or "" when there is none.
func FromContext(ctx context.Context) string {
	if e, _ := ctx.Value(ctxKey{}).(*entry); e != nil {
		return e.id
	}
	return ""
}

// Valid reports whether id may be kept as a request id: 1 to MaxLen bytes,
// each a letter, a digit, '.', '_' or '-'. Such an id is safe to log and to
// echo in a header or a JSON body.
func Valid(id string) bool {
	if id == "" || len(id) > MaxLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' {
			continue
		}
		return false
	}
	return true
}

// New returns a fresh random request id: 128 random bits as 26 base32
// characters.
func New() string { return rand.Text() }

// Of returns the id for r: the one in its context if any, else its single
// X-Request-Id header when Valid, else a new one.
func Of(r *http.Request) string {
	if id := FromContext(r.Context()); id != "" {
		return id
	}
	if vs := r.Header.Values(Header); len(vs) == 1 && Valid(vs[0]) {
		return vs[0]
	}
	return New()
}

// Start gives the request r its id (see [Of]), sets it as w's X-Request-Id
// header, and returns ctx (r's context, or one derived from it) with the
// id. When ctx already has an id (an outer Middleware gave it one), it
// returns ctx unchanged.
func Start(ctx context.Context, w http.ResponseWriter, r *http.Request) context.Context {
	if FromContext(ctx) != "" {
		return ctx
	}
	e := &entry{id: Of(r)}
	e.header[0] = e.id
	w.Header()[Header] = e.header[:]
	return context.WithValue(ctx, ctxKey{}, e)
}

// Middleware returns next behind a handler that gives each request its id
// with [Start] and calls next with it in the request's context. A request
// whose context already has an id (an outer Middleware gave it one)
// reaches next unchanged.
func Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if FromContext(ctx) != "" {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r.WithContext(Start(ctx, w, r)))
	})
}
