package postgres

import (
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/latchkey-dev/latchkey/store"
)

// Times are stored as timestamptz, UTC, at microsecond precision, the
// precision the store contract promises. Optional times are NULL when
// unset.

// dbTime returns t as the store keeps it: UTC, truncated to microseconds.
func dbTime(t time.Time) time.Time { return store.Truncate(t) }

// nullDBTime returns t as a nullable timestamptz: NULL for the zero time.
func nullDBTime(t time.Time) pgtype.Timestamptz {
	if t.IsZero() {
		return pgtype.Timestamptz{}
	}
	return pgtype.Timestamptz{Time: dbTime(t), Valid: true}
}

// fromNullDBTime returns the time read from a nullable timestamptz in UTC, or
// the zero time for NULL.
func fromNullDBTime(v pgtype.Timestamptz) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return v.Time.UTC()
}
