package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

// seedBatch is how many contacts seedContacts writes per transaction.
const seedBatch = 10_000

// contactsAnalyzer is a store that readies its contacts table after a bulk
// import (postgres.Store.AnalyzeContacts): without it, a freshly seeded
// table is readied later by the database's own maintenance, while it
// serves.
type contactsAnalyzer interface {
	AnalyzeContacts(ctx context.Context) error
}

// seedContacts adds n contacts with generated names to the project, in
// atomic batches of seedBatch (a failure keeps the batches written before
// it). Contacts of one batch share a created_at, and their ids are
// time-ordered (store.NewIDAt), so that each batch lands at the end of the
// id index. Then, if st is a contactsAnalyzer, it readies the table. It
// returns an error matching store.ErrNotFound for an unknown project.
func seedContacts(ctx context.Context, st store.ContactStore, now func() time.Time, project string, n int) error {
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	batch := make([]store.Contact, 0, min(n, seedBatch))
	for done := 0; done < n; {
		batch = batch[:0]
		at := now()
		for i := 0; i < seedBatch && done+i < n; i++ {
			batch = append(batch, store.Contact{
				ID:        store.NewIDAt(store.PrefixContact, at),
				ProjectID: project,
				Name:      firstNames[rng.IntN(len(firstNames))] + " " + lastNames[rng.IntN(len(lastNames))],
				CreatedAt: at,
			})
		}
		slices.SortFunc(batch, func(a, b store.Contact) int { return strings.Compare(a.ID, b.ID) })
		if err := st.CreateContacts(ctx, project, batch); err != nil {
			return fmt.Errorf("seeding contacts (%d of %d written): %w", done, n, err)
		}
		done += len(batch)
	}
	if a, ok := store.As[contactsAnalyzer](st); ok {
		if err := a.AnalyzeContacts(ctx); err != nil {
			return fmt.Errorf("readying the contacts table after seeding: %w", err)
		}
	}
	return nil
}

// Demo contacts are named after computing pioneers.
var firstNames = []string{
	"Ada", "Alan", "Barbara", "Claude", "Dennis", "Donald", "Edsger", "Frances",
	"Grace", "Hedy", "John", "Ken", "Leslie", "Margaret", "Niklaus", "Radia",
	"Rob", "Shafi", "Sophie", "Tim", "Tony", "Vint", "Whitfield", "Yukihiro",
}

var lastNames = []string{
	"Allen", "Backus", "Berners-Lee", "Cerf", "Diffie", "Dijkstra", "Goldwasser",
	"Hamilton", "Hoare", "Hopper", "Knuth", "Lamarr", "Lamport", "Liskov",
	"Lovelace", "Matsumoto", "McCarthy", "Perlman", "Pike", "Ritchie", "Shannon",
	"Thompson", "Turing", "Wilson", "Wirth",
}
