package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey-dev/latchkey/store"
)

var _ store.WritableChecker = (*Store)(nil)

// writableSQL tells whether the session can write: the server is not in
// recovery (a standby) and the transaction is not read-only
// (default_transaction_read_only, on the database, the role or the
// server).
const writableSQL = `SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off'`

// errNotWritable is the cause of CheckWritable's error on a database that
// answers but cannot take writes.
var errNotWritable = errors.New("the database is a standby in recovery or read-only")

// CheckWritable implements [store.WritableChecker] with one statement on a
// connection of the pool (one round trip; writableSQL): nil when the server
// is a primary and the session's transactions are not read-only, else an
// error matching store.ErrUnavailable, also when no connection can be had
// within Options.AcquireTimeout. A lost connection is tried again once, on
// another.
func (s *Store) CheckWritable(ctx context.Context) error {
	const op = "check writable"
	var ok bool
	err := s.read(ctx, op, func(q querier) error {
		return q.QueryRow(ctx, writableSQL).Scan(&ok)
	})
	switch {
	case err != nil && !errors.Is(err, store.ErrUnavailable):
		return fmt.Errorf("postgres: %s: %w: %w", op, store.ErrUnavailable, err)
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("postgres: %s: %w: %w", op, store.ErrUnavailable, errNotWritable)
	}
	return nil
}
