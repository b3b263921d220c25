package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// Times are stored as DATETIME(6) in UTC (the session's time_zone is
// +00:00 and the driver's loc is UTC), at microsecond precision, the
// precision the store contract promises. Optional times are NULL when unset.

// dbTime returns t as the store keeps it: UTC, truncated to microseconds.
func dbTime(t time.Time) time.Time { return store.Truncate(t) }

// nullTime returns t as a nullable argument: NULL for the zero time.
func nullTime(t time.Time) sql.NullTime {
	if t.IsZero() {
		return sql.NullTime{}
	}
	return sql.NullTime{Time: dbTime(t), Valid: true}
}

// fromNull returns the time read from a nullable column in UTC, or the zero
// time for NULL.
func fromNull(v sql.NullTime) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return v.Time.UTC()
}

// rowScanner is a row to scan: a *sql.Row or *sql.Rows.
type rowScanner interface {
	Scan(dest ...any) error
}

// pageSize returns the number of items a page holds and the number of rows
// its query reads: one more, whose presence is HasMore.
func pageSize(req paginate.Request) (limit, fetch int) {
	limit = min(req.Limit, math.MaxInt32-1)
	return limit, limit + 1
}

// listPage runs query, a keyset query reading at most limit+1 rows, scans
// its rows with scan and returns them as a page of at most limit items.
func listPage[T any](ctx context.Context, s *Store, op string, limit int, query string, args []any, scan func(rowScanner) (T, error)) (paginate.Page[T], error) {
	var items []T
	err := s.read(ctx, op, func(q querier) error {
		items = make([]T, 0, min(limit+1, paginate.MaxLimit+1))
		var err error
		items, err = queryAll(ctx, q, query, args, items, scan)
		return err
	})
	if err != nil {
		return paginate.Page[T]{}, err
	}
	return paginate.PageOf(items, limit), nil
}

// listAll runs query and returns every row, scanned with scan; an empty
// result is an empty, non-nil slice.
func listAll[T any](ctx context.Context, s *Store, op string, query string, args []any, scan func(rowScanner) (T, error)) ([]T, error) {
	var items []T
	err := s.read(ctx, op, func(q querier) error {
		var err error
		items, err = queryAll(ctx, q, query, args, []T{}, scan)
		return err
	})
	if err != nil {
		return nil, err
	}
	return items, nil
}

// queryAll runs query on q and appends every row, scanned, to items.
func queryAll[T any](ctx context.Context, q querier, query string, args []any, items []T, scan func(rowScanner) (T, error)) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		item, err := scan(rows)
		if err != nil {
			return nil, err
		}
		items = append(items, item)
	}
	return items, rows.Err()
}

// getOne runs query, which reads at most one row, and scans it with scan;
// no row is an error matching store.ErrNotFound.
func getOne[T any](ctx context.Context, s *Store, op string, query string, args []any, scan func(rowScanner) (T, error)) (T, error) {
	var item T
	err := s.read(ctx, op, func(q querier) error {
		var err error
		item, err = scan(q.QueryRowContext(ctx, query, args...))
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return item, nil
}

// execOne runs query, a statement that writes at most one row, and returns
// an error matching store.ErrNotFound when it matched none (the
// connections report matched rows, not changed ones: clientFoundRows).
func (s *Store) execOne(ctx context.Context, op string, query string, args ...any) error {
	n, err := s.execCount(ctx, op, query, args...)
	if err == nil && n == 0 {
		return notFound(op)
	}
	return err
}

// execCount runs query, a statement that writes, and returns how many rows
// it matched.
func (s *Store) execCount(ctx context.Context, op string, query string, args ...any) (int, error) {
	var n int64
	err := s.write(ctx, op, func(q querier) error {
		res, err := q.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// affected returns the rows a statement matched.
func affected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// existsOrNotFound runs query, a SELECT EXISTS, and returns an error
// matching store.ErrNotFound when it is false.
func existsOrNotFound(ctx context.Context, q querier, op, query string, args ...any) error {
	var ok bool
	if err := q.QueryRowContext(ctx, query, args...).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return notFound(op)
	}
	return nil
}

// sprintf is fmt.Sprintf, for the LIMIT constants of list queries.
func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
