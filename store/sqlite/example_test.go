package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
)

// A host application's test opens a private in-memory store, creates the
// project it needs and uses the store through the store interfaces.
func ExampleOpen() {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.MemoryPath, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	at := time.Date(2026, 11, 21, 10, 15, 30, 123456789, time.UTC)
	if err := st.CreateProject(ctx, store.Project{ID: store.DefaultProject, CreatedAt: at}); err != nil {
		log.Fatal(err)
	}
	c, err := st.CreateContact(ctx, store.Contact{ID: "ct_0a1b2c", ProjectID: store.DefaultProject, Name: "Ada", CreatedAt: at})
	if err != nil {
		log.Fatal(err)
	}
	page, err := st.ListContacts(ctx, store.DefaultProject, paginate.Request{Limit: paginate.DefaultLimit})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(page.Items), page.HasMore)
	fmt.Println(paginate.Cursor{ID: c.ID, CreatedAt: c.CreatedAt})
	// Output:
	// 1 false
	// ct_0a1b2c:2026-11-21T10:15:30.123456Z
}
