package postgres

import (
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/latchkey-dev/latchkey/store"
)

// mark is the high-water position (store.HighWater) of a project's list: the
// contacts' or the revocation feed's. New items are placed after it, so that
// an item is never added before one a reader has already seen.
type mark struct {
	at  time.Time
	id  string
	set bool
}

// markOf returns the mark read from a nullable (time, id) pair of columns.
func markOf(at pgtype.Timestamptz, id pgtype.Text) mark {
	return mark{at: fromNullDBTime(at), id: id.String, set: at.Valid && id.Valid}
}

// place returns the time a new item with the given id gets after the
// mark (store.HighWater.Place).
func (m mark) place(at time.Time, id string) time.Time { return m.highWater().Place(at, id) }

// after reports whether (at, id) sorts after the mark
// (store.HighWater.After).
func (m mark) after(at time.Time, id string) bool { return m.highWater().After(at, id) }

// highWater returns the mark as store's high-water position, whose rule it
// follows.
func (m mark) highWater() store.HighWater { return store.HighWater{At: m.at, ID: m.id, Set: m.set} }
