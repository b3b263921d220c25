package sqlite

import (
	"time"

	"zombiezen.com/go/sqlite"
)

// Times are stored as INTEGER microseconds since the Unix epoch, UTC. This
// keeps exactly the precision the store contract promises, compares
// correctly in SQL and indexes compactly. Optional times are NULL when
// unset.

// dbTime returns t as stored: microseconds since the Unix epoch, rounded
// down (t.Truncate(time.Microsecond) maps to the same value).
func dbTime(t time.Time) int64 { return t.UnixMicro() }

// fromDBTime returns the UTC time of a stored value.
func fromDBTime(v int64) time.Time { return time.UnixMicro(v).UTC() }

// nullDBTime returns an optional time as an argument: nil (NULL) for the
// zero time.
func nullDBTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

// columnTime returns column col of stmt's row as a time.
func columnTime(stmt *sqlite.Stmt, col int) time.Time {
	return fromDBTime(stmt.ColumnInt64(col))
}

// columnNullTime returns column col of stmt's row as an optional time: the
// zero time for NULL.
func columnNullTime(stmt *sqlite.Stmt, col int) time.Time {
	if stmt.ColumnIsNull(col) {
		return time.Time{}
	}
	return columnTime(stmt, col)
}
