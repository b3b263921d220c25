package postgres

import (
	"context"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/latchkey-dev/latchkey/paginate"
)

// pageSize returns the number of items a page holds and the number of rows
// its query reads: one more, whose presence is HasMore. A limit beyond any
// real list is capped so that the count cannot overflow.
func pageSize(req paginate.Request) (limit, fetch int) {
	limit = min(req.Limit, math.MaxInt32-1)
	return limit, limit + 1
}

// listPage runs sql, a keyset query reading at most limit+1 rows, scans its
// rows with scan and returns them as a page of at most limit items.
func listPage[T any](ctx context.Context, s *Store, op string, limit int, sql string, args []any, scan func(pgx.Rows) (T, error)) (paginate.Page[T], error) {
	var items []T
	err := s.read(ctx, op, func(q querier) error {
		items = make([]T, 0, min(limit+1, paginate.MaxLimit+1))
		rows, err := q.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			item, err := scan(rows)
			if err != nil {
				return err
			}
			items = append(items, item)
		}
		return rows.Err()
	})
	if err != nil {
		return paginate.Page[T]{}, err
	}
	return paginate.PageOf(items, limit), nil
}

// listAll runs sql and returns every row, scanned with scan; an empty result
// is an empty, non-nil slice.
func listAll[T any](ctx context.Context, s *Store, op string, sql string, args []any, scan func(pgx.Rows) (T, error)) ([]T, error) {
	var items []T
	err := s.read(ctx, op, func(q querier) error {
		items = []T{}
		rows, err := q.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			item, err := scan(rows)
			if err != nil {
				return err
			}
			items = append(items, item)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return items, nil
}

// getOne runs sql, which reads at most one row, and scans it with scan; no
// row is an error matching store.ErrNotFound.
func getOne[T any](ctx context.Context, s *Store, op string, sql string, args []any, scan func(rowScanner) (T, error)) (T, error) {
	var item T
	err := s.read(ctx, op, func(q querier) error {
		var err error
		item, err = scan(q.QueryRow(ctx, sql, args...))
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return item, nil
}

// execOne runs sql, a statement that writes at most one row, and returns an
// error matching store.ErrNotFound when it wrote none.
func (s *Store) execOne(ctx context.Context, op string, sql string, args ...any) error {
	n, err := s.execCount(ctx, op, sql, args...)
	if err == nil && n == 0 {
		return notFound(op)
	}
	return err
}

// execCount runs sql, a statement that writes, and returns how many rows it
// wrote.
func (s *Store) execCount(ctx context.Context, op string, sql string, args ...any) (int, error) {
	var n int64
	err := s.write(ctx, op, func(q querier) error {
		tag, err := q.Exec(ctx, sql, args...)
		n = tag.RowsAffected()
		return err
	})
	return int(n), err
}
