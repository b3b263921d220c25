package mysql_test

import (
	"net/url"
	"testing"

	"github.com/latchkey-dev/latchkey/internal/faultproxy"
)

// newProxy starts a fault proxy (see package faultproxy) to the server of
// dbURL, a mysql:// URL, and returns it and dbURL pointing at it; t.Cleanup
// stops it. The store interpolates parameters, so a statement's arguments
// are in its text, and the driver writes each command whole: any chunk a
// client sends ends a request.
func newProxy(t *testing.T, dbURL string) (*faultproxy.Proxy, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	if u.Port() == "" {
		target += ":3306"
	}
	p := faultproxy.New(t, target, nil)
	u.Host = p.Addr()
	return p, u.String()
}
