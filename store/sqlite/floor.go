package sqlite

import (
	"zombiezen.com/go/sqlite"

	"github.com/latchkey-dev/latchkey/store"
)

// floor is the newest position, (at, id), that a project's ordered list
// (its contacts, its revocation feed) has ever had, deleted or pruned items
// included. New items are placed after it, so that an item is never added
// before one that a reader may have seen: a client paging with a cursor
// never has new items appear behind it.
type floor struct {
	has bool
	at  int64
	id  string
}

// place returns the stored time of a new item given at t with id, placed
// after the floor by store.HighWater.Place.
func (f floor) place(t int64, id string) int64 {
	if !f.has {
		return t
	}
	return dbTime(f.highWater().Place(fromDBTime(t), id))
}

// raise moves the floor to (at, id) if that sorts after it
// (store.HighWater.Raise).
func (f *floor) raise(at int64, id string) {
	h := f.highWater().Raise(fromDBTime(at), id)
	f.has, f.at, f.id = h.Set, dbTime(h.At), h.ID
}

// highWater returns the floor as store's high-water position, whose rule
// it follows.
func (f floor) highWater() store.HighWater {
	if !f.has {
		return store.HighWater{}
	}
	return store.HighWater{At: fromDBTime(f.at), ID: f.id, Set: true}
}

// readFloor reads a project's floor in the transaction: the (at, id)
// columns of query's row for projectID, NULL while the list has never had
// an item. It returns errNoRows when there is no such project.
func (t *wtx) readFloor(query, projectID string) (floor, error) {
	var f floor
	err := t.queryRow(query, func(st *sqlite.Stmt) error {
		f = floor{has: !st.ColumnIsNull(0) && !st.ColumnIsNull(1), at: st.ColumnInt64(0), id: st.ColumnText(1)}
		return nil
	}, projectID)
	return f, err
}
