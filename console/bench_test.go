package console_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/tenant"
)

// BenchmarkSignedInRequest measures what a signed-in click costs the
// server, without the network: the stored session looked up, the user
// looked up and the page rendered, on a real SQLite file. "session" is the
// sign-in page of a signed-in browser, which only looks the session up
// and redirects; the others are whole pages.
func BenchmarkSignedInRequest(b *testing.B) {
	f := newFixture(b, nil)
	c := f.newClient(b, project)
	c.createKey(c.mustSignIn(), "bench")
	f.seedUsers(b, project, 30)
	secret := c.sessionSecret(project)
	h := tenant.ByPath("/p/", store.DefaultProject, f.lk.Handler())
	for _, bc := range []struct{ name, page string }{
		{"session", "signin"},
		{"keys", "keys"},
		{"users", "users"},
		{"audit", "audit"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodGet, "/p/acme/console/"+bc.page, nil)
				r.AddCookie(&http.Cookie{Name: "latchkey_console_acme", Value: secret})
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK && w.Code != http.StatusSeeOther {
					b.Fatalf("%s: status %d", bc.page, w.Code)
				}
			}
		})
	}
}
