package postgres

import (
	"encoding/binary"
	"net/url"
	"testing"

	"github.com/latchkey-dev/latchkey/internal/faultproxy"
)

// newProxy starts a fault proxy (see package faultproxy) to the server of
// dbURL, one that cuts a client after whole requests of PostgreSQL's
// protocol, and returns it and dbURL pointing at it; t.Cleanup stops it.
func newProxy(t testing.TB, dbURL string) (*faultproxy.Proxy, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	p := faultproxy.New(t, u.Host, endsRequest)
	u.Host = p.Addr()
	return p, u.String()
}

// endsRequest reports whether b, a client's bytes that start at a message,
// ends a request the server answers: its last message is a Sync (the
// extended query protocol) or a Query (the simple one), and complete.
func endsRequest(b []byte) bool {
	var last byte
	for len(b) >= 5 {
		n := int(binary.BigEndian.Uint32(b[1:5])) // the length counts itself
		if n < 4 || len(b) < 1+n {
			return false
		}
		last, b = b[0], b[1+n:]
	}
	return len(b) == 0 && (last == 'S' || last == 'Q')
}
