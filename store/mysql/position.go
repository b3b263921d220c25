package mysql

import (
	"database/sql"
	"encoding/binary"
	"time"
)

// mark is the greatest (time, id) position a project's list has had: the
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

// place returns the time a new item with the given id gets: at (already
// truncated) when (at, id) sorts after the mark, else the smallest time that
// makes it sort after, raised by whole microseconds: the mark's time if id is
// greater than the mark's id, one microsecond later otherwise.
func (m mark) place(at time.Time, id string) time.Time {
	if m.after(at, id) {
		return at
	}
	if id > m.id {
		return m.at
	}
	return m.at.Add(time.Microsecond)
}

// after reports whether (at, id) sorts after the mark.
func (m mark) after(at time.Time, id string) bool {
	return !m.set || at.After(m.at) || (at.Equal(m.at) && id > m.id)
}

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
