package remote_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/remote"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
)

// An orders service guards its routes with Latchkey's tokens. It is given
// the project's base_url and a permanent API key of the project, which lets
// it read the revocation feed; it never asks Latchkey about a token.
func Example() {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	// Latchkey, somewhere else (here in-process, on an in-memory
	// database). Its tokens carry its base_url as iss.
	st, err := sqlite.Open(ctx, ":memory:", &sqlite.Options{Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	var baseURL string
	lk, err := latchkey.New(st, []byte("an example key; use 32 random B!"), &latchkey.Options{
		Issuer: func(string) string { return baseURL },
		Logger: quiet,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer lk.Close()
	idp := httptest.NewUnstartedServer(lk.Handler())
	baseURL = "http://" + idp.Listener.Addr().String()
	idp.Start()
	defer idp.Close()
	_, feedToken, err := lk.APIKeys().Create(ctx, store.DefaultProject, "orders service")
	if err != nil {
		log.Fatal(err)
	}
	billing, clientToken, err := lk.APIKeys().Create(ctx, store.DefaultProject, "billing batch")
	if err != nil {
		log.Fatal(err)
	}

	// The orders service.
	v, err := remote.New(ctx, baseURL, feedToken, &remote.Options{Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	defer v.Close()
	mux := http.NewServeMux()
	mux.Handle("GET /whoami", v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := remote.ClaimsFromContext(r.Context())
		fmt.Fprintf(w, "a %s of project %s", c.Kind(), c.Audience)
	})))
	orders := httptest.NewServer(mux)
	defer orders.Close()

	whoami := func() string {
		req, _ := http.NewRequest("GET", orders.URL+"/whoami", nil)
		req.Header.Set("Authorization", "Bearer "+clientToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			return res.Status
		}
		return string(body)
	}
	fmt.Println(whoami())

	// The key is revoked in Latchkey; the orders service refuses it
	// within a second.
	if err := lk.APIKeys().Revoke(ctx, store.DefaultProject, billing.ID); err != nil {
		log.Fatal(err)
	}
	answer := whoami()
	for deadline := time.Now().Add(time.Second); answer != "401 Unauthorized" && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		answer = whoami()
	}
	fmt.Println(answer)
	// Output:
	// a api_key of project default
	// 401 Unauthorized
}
