package checkedlist

import (
	"errors"
	"maps"
	"net/http"

	"github.com/latchkey-dev/latchkey/keys"
)

// errWriteRefused is what a handler's Write returns once its request's
// token was refused: its answer is not sent.
var errWriteRefused = errors.New("checkedlist: the request's token was refused; its answer is not sent")

// guard holds a handler's answer until its request's pending check is
// decided, and answers as the bearer check does instead when the token is
// refused. Deliberately, it has no Unwrap: http.ResponseController must
// not reach the connection around it.
type guard struct {
	w http.ResponseWriter
	h http.Header // the handler's headers while held (nil until asked for)
	r *http.Request
	c *keys.Check

	state guardState
}

type guardState uint8

const (
	undecided guardState = iota
	admitted
	refused // the refusal is written
)

// allowed decides the check if needed (reading the store), answers a
// refusal, and reports whether the handler's answer may be sent.
func (g *guard) allowed() bool {
	if g.state == undecided {
		if err := g.c.Decide(g.r.Context()); err != nil {
			// The refusal goes out with the headers set before the
			// handler ran (the request id), not the handler's.
			g.c.Refuse(g.w, g.r, err)
			g.state = refused
		} else {
			if g.h != nil {
				out := g.w.Header()
				clear(out)
				maps.Copy(out, g.h)
			}
			g.state = admitted
		}
	}
	return g.state == admitted
}

// Header returns the handler's headers. Once the token is admitted they are
// w's own. While the check is undecided they are a copy of those set
// before the handler ran, sent only if the token is admitted; after a
// refusal, a map that is never sent. A check already decided (by the
// list's read) is settled here, so an admitted request's headers are not
// copied.
func (g *guard) Header() http.Header {
	if g.state == undecided && g.h == nil && g.c.Decided() {
		g.allowed() // decided: no store read
	}
	switch {
	case g.state == admitted:
		return g.w.Header() // with the copy's headers, if it had one
	case g.h == nil:
		g.h = g.w.Header().Clone()
	}
	return g.h
}

func (g *guard) WriteHeader(status int) {
	if g.allowed() {
		g.w.WriteHeader(status)
	}
}

func (g *guard) Write(b []byte) (int, error) {
	if !g.allowed() {
		return 0, errWriteRefused
	}
	return g.w.Write(b)
}

// Flush flushes the handler's answer once it may be sent.
func (g *guard) Flush() {
	if g.allowed() {
		if f, ok := g.w.(http.Flusher); ok {
			f.Flush()
		}
	}
}
