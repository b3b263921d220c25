package postgres_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres"
)

// Open a store on a database shared by every instance of a deployment,
// migrating it, and create the default project once.
func ExampleOpen() {
	ctx := context.Background()
	st, err := postgres.Open(ctx, "postgres://latchkey@db.internal:5432/latchkey", &postgres.Options{MaxConns: 20})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	err = st.CreateProject(ctx, store.Project{ID: store.DefaultProject, CreatedAt: time.Now()})
	if err != nil && !errors.Is(err, store.ErrConflict) { // another instance may have created it
		log.Fatal(err)
	}
}

// Migrate from a deploy job, and open the serving instances with NoMigrate.
func ExampleStore_Migrate() {
	ctx := context.Background()
	url := "postgres://latchkey@db.internal:5432/latchkey"
	st, err := postgres.Open(ctx, url, &postgres.Options{NoMigrate: true})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
}
