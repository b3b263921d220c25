package sqlite

import (
	"context"
	"errors"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	// addFailureSQL counts one failure: a new row, a new window when the
	// old one has ended (it started ?3 or more before ?2), or one more in
	// the open window. SET expressions read the row as it was.
	addFailureSQL = `INSERT INTO throttle_windows (key, count, started_at, reset_at) VALUES (?1, 1, ?2, ?2 + ?3)
ON CONFLICT (key) DO UPDATE SET
	count      = CASE WHEN started_at <= ?2 - ?3 THEN 1 ELSE count + 1 END,
	started_at = CASE WHEN started_at <= ?2 - ?3 THEN ?2 ELSE started_at END,
	reset_at   = CASE WHEN started_at <= ?2 - ?3 THEN ?2 + ?3 ELSE started_at + ?3 END
RETURNING count, reset_at`
	failuresSQL      = `SELECT count, started_at FROM throttle_windows WHERE key = ?`
	clearFailuresSQL = `DELETE FROM throttle_windows WHERE key = ?`
	// pruneThrottleSomeSQL deletes a bounded number of ended windows;
	// pruneThrottleSQL deletes them all.
	pruneThrottleSomeSQL = `DELETE FROM throttle_windows WHERE key IN
(SELECT key FROM throttle_windows WHERE reset_at <= ? LIMIT 512)`
	pruneThrottleSQL = `DELETE FROM throttle_windows WHERE reset_at <= ?`
)

// pruneEvery is how many AddFailure calls pass between two prunes of ended
// windows. Each prune deletes up to 512 rows, far more than were added
// since the last, so the table holds little beyond the open windows.
const pruneEvery = 64

// AddFailure counts one failure for key at now. If the key's window has
// ended (it started window or more before now) a new window starts at now.
// It returns the count in the current window and when that window ends. It
// returns an error matching store.ErrInvalid when store.CheckThrottle
// refuses key and window. The count is one atomic statement, so instances
// sharing the database count as one. Every so often it also deletes windows
// that have ended, keeping the table bounded.
func (s *Store) AddFailure(ctx context.Context, key string, now time.Time, window time.Duration) (int, time.Time, error) {
	const op = "add failure"
	var count int
	var reset int64
	err := s.writeTx(ctx, func(t *wtx) error {
		return t.queryRow(addFailureSQL, func(st *sqlite.Stmt) error {
			count, reset = st.ColumnInt(0), st.ColumnInt64(1)
			return nil
		}, key, dbTime(now), window.Microseconds())
	})
	if err != nil {
		return 0, time.Time{}, wrap(op, err)
	}
	if s.adds.Add(1)%pruneEvery == 1 {
		if _, err := s.exec(ctx, pruneThrottleSomeSQL, dbTime(now)); err != nil {
			s.logger.WarnContext(ctx, "sqlite: prune throttle windows", "err", err)
		}
	}
	return count, fromDBTime(reset), nil
}

// Failures returns the count of key's current window and when it ends; a
// key with no window open at now has count 0 and a zero reset time.
func (s *Store) Failures(ctx context.Context, key string, now time.Time, window time.Duration) (int, time.Time, error) {
	const op = "failures"
	var count int
	var started int64
	err := s.readRow(ctx, failuresSQL, func(st *sqlite.Stmt) error {
		count, started = st.ColumnInt(0), st.ColumnInt64(1)
		return nil
	}, key)
	switch {
	case errors.Is(err, errNoRows):
		return 0, time.Time{}, nil
	case err != nil:
		return 0, time.Time{}, wrap(op, err)
	}
	w := store.WindowAt(count, fromDBTime(started), now, window)
	return w.Count, w.ResetAt, nil
}

// FailuresOf returns the windows of keys, as Failures returns them one by
// one (the database is in the process: there is no round trip to save).
func (s *Store) FailuresOf(ctx context.Context, keys []string, now time.Time, window time.Duration) ([]store.ThrottleWindow, error) {
	ws := make([]store.ThrottleWindow, len(keys))
	for i, k := range keys {
		n, reset, err := s.Failures(ctx, k, now, window)
		if err != nil {
			return nil, err
		}
		ws[i] = store.ThrottleWindow{Count: n, ResetAt: reset}
	}
	return ws, nil
}

// ClearFailures forgets key's window. Clearing an unknown key succeeds.
func (s *Store) ClearFailures(ctx context.Context, key string) error {
	const op = "clear failures"
	_, err := s.exec(ctx, clearFailuresSQL, key)
	return wrap(op, err)
}

// PruneThrottle deletes every window that ended at or before now, and
// returns how many it deleted.
func (s *Store) PruneThrottle(ctx context.Context, now time.Time) (int, error) {
	const op = "prune throttle"
	return s.prune(ctx, op, pruneThrottleSQL, dbTime(now))
}
