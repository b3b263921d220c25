package sqlite

import (
	"context"
	"time"
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
	// pruneThrottleSQL deletes a bounded number of ended windows.
	pruneThrottleSQL = `DELETE FROM throttle_windows WHERE key IN
(SELECT key FROM throttle_windows WHERE reset_at <= ? LIMIT 512)`
)

// pruneEvery is how many AddFailure calls pass between two prunes of ended
// windows. Each prune deletes up to 512 rows, far more than were added
// since the last, so the table holds little beyond the open windows.
const pruneEvery = 64

// AddFailure counts one failure for key at now. If the key's window has
// ended (it started window or more before now) a new window starts at now.
// It returns the count in the current window and when that window ends. It
// returns an error matching store.ErrInvalid for an empty key or a
// non-positive window. The count is one atomic statement, so instances
// sharing the database count as one. Every so often it also deletes windows
// that have ended, keeping the table bounded.
func (s *Store) AddFailure(ctx context.Context, key string, now time.Time, window time.Duration) (int, time.Time, error) {
	const op = "add failure"
	if err := checkThrottle(op, key, window); err != nil {
		return 0, time.Time{}, err
	}
	var count int
	var reset int64
	err := s.writeTx(ctx, func(t *wtx) error {
		row, err := t.queryRow(addFailureSQL, key, micros(now), window.Microseconds())
		if err != nil {
			return err
		}
		return row.Scan(&count, &reset)
	})
	if err != nil {
		return 0, time.Time{}, wrap(op, err)
	}
	if s.adds.Add(1)%pruneEvery == 1 {
		if _, err := s.exec(ctx, pruneThrottleSQL, micros(now)); err != nil {
			s.logger.WarnContext(ctx, "sqlite: prune throttle windows", "err", err)
		}
	}
	return count, fromMicros(reset), nil
}

// Failures returns the count of key's current window and when it ends; a
// key with no window open at now has count 0 and a zero reset time.
func (s *Store) Failures(ctx context.Context, key string, now time.Time, window time.Duration) (int, time.Time, error) {
	const op = "failures"
	if err := checkThrottle(op, key, window); err != nil {
		return 0, time.Time{}, err
	}
	row, err := s.queryRow(ctx, failuresSQL, key)
	if err != nil {
		return 0, time.Time{}, wrap(op, err)
	}
	var count int
	var started int64
	switch err := row.Scan(&count, &started); {
	case isNoRows(err):
		return 0, time.Time{}, nil
	case err != nil:
		return 0, time.Time{}, wrap(op, err)
	}
	w := window.Microseconds()
	if started <= micros(now)-w {
		return 0, time.Time{}, nil
	}
	return count, fromMicros(started + w), nil
}

// ClearFailures forgets key's window. Clearing an unknown key succeeds.
func (s *Store) ClearFailures(ctx context.Context, key string) error {
	const op = "clear failures"
	if key == "" {
		return invalid(op, "empty key")
	}
	_, err := s.exec(ctx, clearFailuresSQL, key)
	return wrap(op, err)
}

func checkThrottle(op, key string, window time.Duration) error {
	if key == "" {
		return invalid(op, "empty key")
	}
	if window.Microseconds() <= 0 {
		return invalid(op, "window not positive")
	}
	return nil
}
