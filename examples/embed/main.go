// Command embed is a host server that mounts Latchkey next to its own
// routes: the README's embedding example, as a program that builds.
//
//	export LATCHKEY_MASTER_KEY=$(head -c 32 /dev/urandom | base64)  # once; keep it secret and stable
//	ADMIN_PASSWORD='choose one' go run ./examples/embed [-addr 127.0.0.1:8080] [-db latchkey.db]
package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	db := flag.String("db", "latchkey.db", "SQLite database file")
	flag.Parse()
	ctx := context.Background()
	// 32 secret random bytes, base64: the same key every time this
	// database is used (it seals the signing keys and keys the refresh
	// tokens' MAC).
	masterKey, err := base64.StdEncoding.DecodeString(os.Getenv("LATCHKEY_MASTER_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	st, err := sqlite.Open(ctx, *db, nil) // or postgres.Open(ctx, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	lk, err := latchkey.New(st, masterKey, &latchkey.Options{
		// The iss of the tokens, and the issuer of the discovery document.
		Issuer: func(project string) string { return "http://" + *addr },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer lk.Close()

	// The first administrator, once: they sign in to /console/ to make API
	// keys, and the API's login works for them too.
	if pw := os.Getenv("ADMIN_PASSWORD"); pw != "" {
		_, err := lk.Users().Create(ctx, store.DefaultProject, "admin@example.com", pw, []string{"admin"})
		if err != nil && !errors.Is(err, store.ErrConflict) {
			log.Fatal(err)
		}
	}

	mux := http.NewServeMux()
	mux.Handle("/", lk.Handler()) // /v1/..., /.well-known/..., /console/
	// A route of the host's own, behind Latchkey's bearer-token check.
	mux.Handle("GET /hello", lk.Protect(http.HandlerFunc(hello)))
	// One that an API key with scopes may call only if it holds
	// "reports:read" (else 403 forbidden); login tokens and keys without
	// scopes may call it too.
	mux.Handle("GET /reports", lk.Protect(keys.RequireScope("reports:read")(http.HandlerFunc(reports))))
	log.Fatal(http.ListenAndServe(*addr, mux))
}

// hello greets whoever the token speaks for.
func hello(w http.ResponseWriter, r *http.Request) {
	p, _ := keys.PrincipalFromContext(r.Context())
	fmt.Fprintf(w, "hello, %s (%s)\n", p.Subject, p.Kind)
}

// reports answers with the scopes of the request's key (none: a login
// token or a key that may do everything).
func reports(w http.ResponseWriter, r *http.Request) {
	p, _ := keys.PrincipalFromContext(r.Context())
	fmt.Fprintf(w, "reports for %s, scopes %q\n", p.Subject, p.Scopes)
}
