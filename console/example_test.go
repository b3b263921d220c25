package console_test

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/console"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
	"github.com/latchkey-dev/latchkey/tenant"
)

// The root package latchkey serves the console at {base_url}/console/;
// Options.Console tunes it.
func Example() {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, "latchkey.db", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	masterKey := make([]byte, 32) // load it from a secret store in real use

	lk, err := latchkey.New(st, masterKey, &latchkey.Options{
		Resolver: tenant.FromRequest,
		Console:  &console.Options{IdleTimeout: 15 * time.Minute},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer lk.Close()
	// Project P at http://ADDR/p/P/console/, the default project also at
	// http://ADDR/console/.
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", tenant.ByPath("/p/", store.DefaultProject, lk.Handler())))
}
