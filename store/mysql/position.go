package mysql

import (
	"database/sql"
	"encoding/binary"
	"time"

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
func markOf(at sql.NullTime, id sql.NullString) mark {
	return mark{at: fromNull(at), id: id.String, set: at.Valid && id.Valid}
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

// position returns the bytes of a contact's position, the contacts table's
// pos: at, truncated to microseconds, as 8 bytes (Unix microseconds,
// big-endian, the sign bit flipped so that earlier times sort first), then
// id. Byte order on positions is (at, id) order with ids compared byte by
// byte.
func position(at time.Time, id string) []byte {
	b := make([]byte, 8, 8+len(id))
	binary.BigEndian.PutUint64(b, uint64(dbTime(at).UnixMicro())^(1<<63))
	return append(b, id...)
}
