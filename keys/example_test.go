package keys_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
	"github.com/latchkey-dev/latchkey/tenant"
)

// Example shows a project's life: its first signing key, a login token, a
// permanent API key, and the middleware admitting both.
func Example() {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		panic(err)
	}
	defer st.Close()
	master := make([]byte, keys.MasterKeySize) // from LATCHKEY_MASTER_KEY in a real server
	_, _ = rand.Read(master)

	kr, err := keys.NewKeyring(st, master, nil)
	if err != nil {
		panic(err)
	}
	now := time.Now()
	if err := st.CreateProject(ctx, store.Project{ID: "acme", CreatedAt: now}); err != nil {
		panic(err)
	}
	if _, err := kr.Rotate(ctx, "acme"); err != nil { // the project's first key
		panic(err)
	}
	// A login token belongs to a user and a session (what login starts).
	u := store.User{ID: store.NewID(store.PrefixUser), ProjectID: "acme", Email: "ann@example.com",
		PasswordHash: "(argon2id)", Tags: []string{"admin"}, CreatedAt: now}
	session := store.RefreshFamily{ID: store.NewID(store.PrefixFamily), ProjectID: "acme", UserID: u.ID,
		IssuedAt: now, ExpiresAt: now.Add(24 * time.Hour), CreatedAt: now}
	if err := st.CreateUser(ctx, u); err != nil {
		panic(err)
	}
	if err := st.CreateRefreshFamily(ctx, session, u.PasswordHash); err != nil {
		panic(err)
	}
	login, _, err := kr.MintLoginToken(ctx, "acme", u, session.ID)
	if err != nil {
		panic(err)
	}
	_, apiKey, err := keys.NewAPIKeys(st, kr, nil).Create(ctx, "acme", "billing backend")
	if err != nil {
		panic(err)
	}

	v := keys.NewVerifier(st, nil)
	h := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := keys.PrincipalFromContext(r.Context())
		fmt.Println(p.ProjectID, p.Kind, p.Subject[:4], p.HasTag("admin"))
	}))
	for _, tok := range []string{login, apiKey, "not-a-token"} {
		r := httptest.NewRequest(http.MethodGet, "/v1/contacts", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r.WithContext(tenant.NewContext(r.Context(), "acme")))
		if w.Code != http.StatusOK {
			fmt.Println(w.Code, w.Header().Get("WWW-Authenticate"))
		}
	}
	// Output:
	// acme user usr_ true
	// acme api_key key_ false
	// 401 Bearer error="invalid_token"
}

// ExampleVerifier_Verify is a host's own bearer check, for when the answer
// should depend on why a token was refused: each refusal matches
// ErrInvalidToken and one reason (ErrTokenExpired, ErrTokenRevoked,
// ErrSigningKeyRetired, ErrWrongProject, ErrTokenMalformed), and package
// problem answers as Latchkey's own middleware does.
func ExampleVerifier_Verify() {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		panic(err)
	}
	defer st.Close()
	master := make([]byte, keys.MasterKeySize)
	_, _ = rand.Read(master)
	kr, err := keys.NewKeyring(st, master, nil)
	if err != nil {
		panic(err)
	}
	if err := st.CreateProject(ctx, store.Project{ID: "acme", CreatedAt: time.Now()}); err != nil {
		panic(err)
	}
	if _, err := kr.Rotate(ctx, "acme"); err != nil {
		panic(err)
	}
	apiKeys := keys.NewAPIKeys(st, kr, nil)
	k, revoked, err := apiKeys.Create(ctx, "acme", "old backend")
	if err != nil {
		panic(err)
	}
	if err := apiKeys.Revoke(ctx, "acme", k.ID); err != nil {
		panic(err)
	}

	v := keys.NewVerifier(st, nil)
	guard := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, presented, _ := keys.BearerToken(r.Header)
		_, err := v.Verify(r.Context(), "acme", token)
		switch {
		case err == nil:
			fmt.Fprintln(w, "welcome")
		case errors.Is(err, keys.ErrTokenRevoked):
			fmt.Println("revoked: tell the owner of the key")
			problem.Write(w, r, nil, problem.Unauthorized(true))
		case errors.Is(err, keys.ErrInvalidToken):
			fmt.Println("refused:", keys.ReasonOf(err))
			problem.Write(w, r, nil, problem.Unauthorized(presented))
		default: // the store failed: 503 or 500, never a refusal
			problem.Write(w, r, nil, err)
		}
	})
	for _, auth := range []string{"Bearer " + revoked, "Bearer not.a.token", ""} {
		r := httptest.NewRequest(http.MethodGet, "/hello", nil)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		guard.ServeHTTP(w, r)
		fmt.Println(w.Code, w.Header().Get("Content-Type"), w.Header().Get("WWW-Authenticate"))
	}
	// Output:
	// revoked: tell the owner of the key
	// 401 application/problem+json Bearer error="invalid_token"
	// refused: malformed
	// 401 application/problem+json Bearer error="invalid_token"
	// refused: empty token
	// 401 application/problem+json Bearer
}
