package mysql

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	// addFailureSQL counts one failure in one statement: the row is
	// created, or locked and updated, atomically, so instances sharing the
	// database count every failure exactly once. A window that started at
	// or before the third argument (now minus the window) has ended, and
	// a new one starts at now. The assignments of ON DUPLICATE KEY UPDATE
	// run left to right, each seeing the columns the ones before it set:
	// started_at, which the others test, is set last.
	addFailureSQL = `INSERT INTO throttles (throttle_key, count, started_at, reset_at)
	VALUES (?, 1, ?, ?)
	ON DUPLICATE KEY UPDATE
	  count      = IF(started_at <= ?, 1, count + 1),
	  reset_at   = IF(started_at <= ?, ?, started_at + INTERVAL ? MICROSECOND),
	  started_at = IF(started_at <= ?, ?, started_at)`
	failuresSQL      = `SELECT count, started_at FROM throttles WHERE throttle_key = ?`
	clearFailuresSQL = `DELETE FROM throttles WHERE throttle_key = ?`
	// pruneThrottlesSQL deletes the rows whose last recorded window ended.
	pruneThrottlesSQL = `DELETE FROM throttles WHERE reset_at <= ?`
	// pruneThrottlesBatchSQL is pruneThrottlesSQL bounded to 1000 rows, for
	// AddFailure's own pruning, which must not make a request slow.
	pruneThrottlesBatchSQL = `DELETE FROM throttles WHERE reset_at <= ? LIMIT 1000`
)

// AddFailure counts one failure for key at now: one
// INSERT ... ON DUPLICATE KEY UPDATE and a read of the row, in one
// transaction (the row stays locked between them). If the key's window has
// ended (it started window or more before now) a new window starts at now.
// It returns the count in the current window and when that window ends. It
// returns an error matching store.ErrInvalid when store.CheckThrottle
// refuses key and window, or for a zero now.
//
// At most once per Options.ThrottlePruneInterval (by now) it also deletes
// rows whose window has ended.
func (s *Store) AddFailure(ctx context.Context, key string, now time.Time, window time.Duration) (int, time.Time, error) {
	const op = "add failure"
	now = dbTime(now)
	ended := dbTime(now.Add(-window))
	reset := dbTime(now.Add(window))
	var count int
	var started time.Time
	err := s.inTx(ctx, op, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, addFailureSQL, []byte(key), now, reset,
			ended, ended, reset, window.Microseconds(), ended, now); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, failuresSQL, []byte(key)).Scan(&count, &started)
	})
	if err != nil {
		return 0, time.Time{}, err
	}
	s.maybePrune(ctx, now)
	return count, dbTime(started.Add(window)), nil
}

// Failures returns the count of key's current window and when it ends; a key
// with no window open at now has count 0 and a zero reset time.
func (s *Store) Failures(ctx context.Context, key string, now time.Time, window time.Duration) (int, time.Time, error) {
	const op = "failures"
	now = dbTime(now)
	var count int
	var started time.Time
	err := s.read(ctx, op, func(q querier) error {
		err := q.QueryRowContext(ctx, failuresSQL, []byte(key)).Scan(&count, &started)
		if errors.Is(err, sql.ErrNoRows) {
			count = 0
			return nil
		}
		return err
	})
	if err != nil {
		return 0, time.Time{}, err
	}
	w := store.WindowAt(count, started, now, window)
	return w.Count, w.ResetAt, nil
}

// failuresOfSQL reads the windows of several keys in one statement; it is
// completed by one placeholder per key and a closing parenthesis.
const failuresOfSQL = `SELECT throttle_key, count, started_at FROM throttles WHERE throttle_key IN (?`

// FailuresOf returns the windows of keys, as Failures returns them one by
// one, read in one statement (one round trip).
func (s *Store) FailuresOf(ctx context.Context, keys []string, now time.Time, window time.Duration) ([]store.ThrottleWindow, error) {
	const op = "failures of"
	now = dbTime(now)
	query := failuresOfSQL + strings.Repeat(", ?", len(keys)-1) + ")"
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = []byte(k)
	}
	ws := make([]store.ThrottleWindow, len(keys))
	err := s.read(ctx, op, func(q querier) error {
		clear(ws)
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var key []byte
			var count int
			var started time.Time
			if err := rows.Scan(&key, &count, &started); err != nil {
				return err
			}
			w := store.WindowAt(count, started, now, window)
			for i, k := range keys {
				if k == string(key) {
					ws[i] = w
				}
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return ws, nil
}

// ClearFailures forgets key's window. Clearing an unknown key succeeds.
func (s *Store) ClearFailures(ctx context.Context, key string) error {
	const op = "clear failures"
	_, err := s.execCount(ctx, op, clearFailuresSQL, []byte(key))
	return err
}

// PruneThrottle deletes every window that ended at or before now, in one
// statement, and returns how many it deleted.
func (s *Store) PruneThrottle(ctx context.Context, now time.Time) (int, error) {
	const op = "prune throttle"
	return s.execCount(ctx, op, pruneThrottlesSQL, dbTime(now))
}

// maybePrune deletes up to 1000 ended throttle windows if the last prune by
// this Store was at least prunePeriod before now. A failure is logged, not
// returned: the failure itself was counted.
func (s *Store) maybePrune(ctx context.Context, now time.Time) {
	if s.prunePeriod < 0 {
		return
	}
	s.pruneMu.Lock()
	due := now.Sub(s.lastPrune) >= s.prunePeriod
	if due {
		s.lastPrune = now
	}
	s.pruneMu.Unlock()
	if !due {
		return
	}
	if _, err := s.execCount(ctx, "prune throttles", pruneThrottlesBatchSQL, now); err != nil {
		s.log.WarnContext(ctx, "mysql: prune throttles", "err", err)
	}
}
