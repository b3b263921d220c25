package sqlite

import (
	"database/sql"
	"time"
)

// Times are stored as INTEGER microseconds since the Unix epoch, UTC. This
// keeps exactly the precision the store contract promises, compares
// correctly in SQL and indexes compactly.

// micros returns t as stored: microseconds since the Unix epoch, rounded
// down (t.Truncate(time.Microsecond) maps to the same value).
func micros(t time.Time) int64 { return t.UnixMicro() }

// fromMicros returns the UTC time of a stored value.
func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

// nullMicros returns an optional time as stored: NULL for the zero time.
func nullMicros(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

// fromNullMicros returns the time of an optional stored value: the zero time
// for NULL.
func fromNullMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMicros(v.Int64)
}
