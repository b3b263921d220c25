package console_test

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/keys/console"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
)

// The root package latchkey serves the console at {base_url}/console/;
// Options.ConsoleOptions tunes it.
func Example() {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, "latchkey.db", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	masterKey := make([]byte, 32) // load it from a secret store in real use

	lk, err := latchkey.New(st, masterKey, &latchkey.Options{
		ConsoleOptions: &console.Options{IdleTimeout: 15 * time.Minute},
	})
	if err != nil {
		log.Fatal(err)
	}
	// Project P at http://ADDR/p/P/console/, the default project also at
	// http://ADDR/console/.
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", lk.PathHandler(store.DefaultProject)))
}
