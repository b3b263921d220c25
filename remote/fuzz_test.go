package remote

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/latchkey-dev/latchkey/keys"
)

// FuzzVerify checks that no token makes Verify or the middleware panic, and
// that Verify accepts only the tokens Latchkey minted: anything else is a
// refusal matching keys.ErrInvalidToken (never another error while the feed
// is fresh), and the middleware answers it 401.
func FuzzVerify(f *testing.F) {
	h := newHarness(f, nil)
	_, key := h.apiKey("svc")
	h.user("ann@example.com")
	login, _ := h.login("ann@example.com")
	v := h.verifier(key, &Options{KeyRefetchInterval: time.Millisecond, StaleAfter: time.Hour})
	handler := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	valid := map[string]bool{key: true, login: true}

	parts := strings.Split(login, ".")
	for _, seed := range []string{
		login, key, "", ".", "..", "a.b.c", parts[0] + "." + parts[1] + ".",
		parts[0] + ".e30." + parts[2], "eyJhbGciOiJub25lIn0.e30.", strings.Repeat("A", 9000),
		login + "=", login[:len(login)-1], "\x00", "Bearer " + login,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		c, err := v.Verify(context.Background(), token)
		switch {
		case valid[token]:
			if err != nil {
				t.Fatalf("a token Latchkey minted was refused: %v", err)
			}
		case err == nil:
			t.Fatalf("Verify accepted a token Latchkey did not mint (sub %q)", c.Subject)
		case !errors.Is(err, keys.ErrInvalidToken):
			t.Fatalf("not a refusal: %v", err)
		}
		want := http.StatusUnauthorized
		if valid[token] {
			want = http.StatusOK
		}
		if rec := serve(handler, token); rec.Code != want {
			t.Fatalf("the middleware answered %d, want %d", rec.Code, want)
		}
	})
}
