package mysql

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey-dev/latchkey/store"
)

var _ store.WritableChecker = (*Store)(nil)

// The statements of CheckWritable: whether the server is read-only
// (read_only, which a replica usually has, and on MySQL super_read_only;
// the store counts a read-only server as unwritable even for an account
// whose privileges would let it write past read_only), InnoDB was started
// read-only, or the session's transactions are read-only (tx_read_only on
// MariaDB before 11.1, transaction_read_only on MySQL).
const (
	writableMariaDBSQL = `SELECT NOT (@@global.read_only OR @@global.innodb_read_only OR @@session.tx_read_only)`
	writableMySQLSQL   = `SELECT NOT (@@global.read_only OR @@global.super_read_only OR @@global.innodb_read_only
	OR @@session.transaction_read_only)`
)

// errNotWritable is the cause of CheckWritable's error on a server that
// answers but cannot take writes.
var errNotWritable = errors.New("the server or the session is read-only")

// CheckWritable implements [store.WritableChecker] with one statement on a
// connection of the pool (one round trip; it reads server variables and no
// table): nil when neither the server nor the store's sessions are
// read-only, else an error matching store.ErrUnavailable, also when no
// connection can be had within Options.AcquireTimeout. A lost connection is
// tried again once, on another.
func (s *Store) CheckWritable(ctx context.Context) error {
	const op = "check writable"
	query := writableMySQLSQL
	if s.mariaDB {
		query = writableMariaDBSQL
	}
	var ok bool
	err := s.read(ctx, op, func(q querier) error {
		return q.QueryRowContext(ctx, query).Scan(&ok)
	})
	switch {
	case err != nil && !errors.Is(err, store.ErrUnavailable):
		return fmt.Errorf("mysql: %s: %w: %w", op, store.ErrUnavailable, err)
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("mysql: %s: %w: %w", op, store.ErrUnavailable, errNotWritable)
	}
	return nil
}
