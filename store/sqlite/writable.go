package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

var _ store.WritableChecker = (*Store)(nil)

// CheckWritable implements [store.WritableChecker]: on the writer
// connection it begins a write transaction with BEGIN IMMEDIATE, which takes
// the database's write lock and fails on a database that cannot be written
// (a read-only file or file system), and rolls it back at once. It writes
// nothing. It waits for a write in progress in this process to end, as any
// write would, and for another process's writer at most
// Options.BusyTimeout; ctx's deadline, when sooner, bounds both waits (a
// health check answers in its own time).
func (s *Store) CheckWritable(ctx context.Context) error {
	const op = "check writable"
	conn, err := s.writer.take(ctx)
	if err != nil {
		return notWritable(op, err)
	}
	defer s.writer.put(conn)
	if deadline, ok := ctx.Deadline(); ok {
		if d := time.Until(deadline); d < s.busy {
			conn.SetBusyTimeout(max(time.Millisecond, d))
			defer conn.SetBusyTimeout(s.busy) // before put, which was deferred first
		}
	}
	_, err = execSQL(conn, beginSQL)
	endTx(conn)
	if err != nil {
		return notWritable(op, err)
	}
	return nil
}

// notWritable returns err, wrapped for op, as an error matching
// store.ErrUnavailable: whatever kept a write from starting, the database
// cannot take one now.
func notWritable(op string, err error) error {
	err = wrap(op, err)
	if !errors.Is(err, store.ErrUnavailable) {
		err = fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return err
}
