package latchkey_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
)

// A host application mounts Latchkey next to its own routes. Here it serves
// the project "default" on an in-memory database; a real host opens a file
// (or PostgreSQL) and reads a secret 32-byte master key from its
// configuration.
func ExampleNew() {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	masterKey := []byte("an example key; use 32 random B!") // 32 bytes
	lk, err := latchkey.New(st, masterKey, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer lk.Close()
	mux := http.NewServeMux()
	mux.Handle("/v1/", lk.Handler())
	mux.Handle("/.well-known/", lk.Handler())
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello") })
	srv := httptest.NewServer(mux) // a real host: http.ListenAndServe(addr, mux)
	defer srv.Close()

	// Somebody with an account logs in and lists the contacts.
	if _, err := lk.Users().Create(ctx, store.DefaultProject, "ada@example.com", "correct horse", nil); err != nil {
		log.Fatal(err)
	}
	grace := store.Contact{ID: store.NewID(store.PrefixContact), ProjectID: store.DefaultProject, Name: "Grace Hopper", CreatedAt: time.Now()}
	if _, err := st.CreateContact(ctx, grace); err != nil {
		log.Fatal(err)
	}
	res, err := http.Post(srv.URL+"/v1/identity/login", "application/json",
		strings.NewReader(`{"email":"ada@example.com","password":"correct horse"}`))
	if err != nil {
		log.Fatal(err)
	}
	var tokens struct {
		AccessToken string `json:"access_token"`
	}
	_ = json.NewDecoder(res.Body).Decode(&tokens)
	res.Body.Close()

	req, _ := http.NewRequest("GET", srv.URL+"/v1/contacts?limit=10", nil)
	req.Header.Set("Authorization", "Bearer "+tokens.AccessToken)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Body.Close()
	var page struct {
		Data []struct {
			Name string `json:"name"`
		} `json:"data"`
	}
	_ = json.NewDecoder(res.Body).Decode(&page)
	fmt.Println(res.Status, page.Data[0].Name)
	// Output: 200 OK Grace Hopper
}
