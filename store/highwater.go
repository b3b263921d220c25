package store

import "time"

// HighWater is the newest position, (At, ID), that a project's ordered list
// (its contacts, its revocation feed) has ever had, deleted or pruned items
// included; Set is false while the list has never had an item. New items
// are placed after it (Place), so that an item is never added before one a
// reader may have seen: a client paging with a cursor never has new items
// appear behind it. Positions sort by time, then by id compared byte by
// byte. Every store keeps the high-water position in its own table and
// applies this rule to it.
type HighWater struct {
	At  time.Time
	ID  string
	Set bool
}

// Place returns the time a new item given at at (already truncated to
// microseconds) with id gets: at when (at, id) sorts after h, else the
// smallest time that makes it sort after, raised by whole microseconds:
// h.At if id is greater than h.ID, one microsecond later otherwise.
func (h HighWater) Place(at time.Time, id string) time.Time {
	if h.After(at, id) {
		return at
	}
	if id > h.ID {
		return h.At
	}
	return h.At.Add(time.Microsecond)
}

// After reports whether (at, id) sorts after h.
func (h HighWater) After(at time.Time, id string) bool {
	return !h.Set || at.After(h.At) || (at.Equal(h.At) && id > h.ID)
}

// Raise returns the high-water position after an item at (at, id): that
// position if it sorts after h, else h.
func (h HighWater) Raise(at time.Time, id string) HighWater {
	if h.After(at, id) {
		return HighWater{At: at, ID: id, Set: true}
	}
	return h
}
