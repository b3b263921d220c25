package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	// addFailureSQL counts one failure in one statement: the row is
	// created, or locked and updated, atomically, so instances sharing the
	// database count every failure exactly once. A window that started at
	// or before $3 ($4 minus the window) has ended, and a new one starts at
	// $4.
	addFailureSQL = `INSERT INTO throttles AS t (key, count, started_at, reset_at)
	VALUES ($1, 1, $4, $2)
	ON CONFLICT (key) DO UPDATE SET
	  count      = CASE WHEN t.started_at <= $3 THEN 1 ELSE t.count + 1 END,
	  started_at = CASE WHEN t.started_at <= $3 THEN $4 ELSE t.started_at END,
	  reset_at   = CASE WHEN t.started_at <= $3 THEN $2 ELSE t.started_at + ($2 - $4) END
	RETURNING count, started_at`
	failuresSQL      = `SELECT count, started_at FROM throttles WHERE key = $1`
	failuresOfSQL    = `SELECT key, count, started_at FROM throttles WHERE key = ANY($1)`
	clearFailuresSQL = `DELETE FROM throttles WHERE key = $1`
	// pruneThrottlesSQL deletes the rows whose last recorded window ended.
	// A row a concurrent AddFailure updated is re-checked on its new
	// version, so a window reopened meanwhile is kept.
	pruneThrottlesSQL = `DELETE FROM throttles WHERE reset_at <= $1`
	// pruneThrottlesBatchSQL is pruneThrottlesSQL bounded to 1000 rows, for
	// AddFailure's own pruning, which must not make a request slow.
	pruneThrottlesBatchSQL = `DELETE FROM throttles
	WHERE reset_at <= $1 AND key IN (
	  SELECT key FROM throttles WHERE reset_at <= $1 LIMIT 1000)`
)

// AddFailure counts one failure for key at now, with one
// INSERT ... ON CONFLICT DO UPDATE. If the key's window has ended (it
// started window or more before now) a new window starts at now. It returns
// the count in the current window and when that window ends. It returns an
// error matching store.ErrInvalid when store.CheckThrottle refuses key and
// window, or for a zero now.
//
// At most once per Options.ThrottlePruneInterval (by now) it also deletes
// rows whose window has ended.
func (s *Store) AddFailure(ctx context.Context, key string, now time.Time, window time.Duration) (int, time.Time, error) {
	const op = "add failure"
	now = dbTime(now)
	var count int
	var started time.Time
	err := s.write(ctx, op, func(q querier) error {
		return q.QueryRow(ctx, addFailureSQL, key, dbTime(now.Add(window)), dbTime(now.Add(-window)), now).
			Scan(&count, &started)
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
		err := q.QueryRow(ctx, failuresSQL, key).Scan(&count, &started)
		if errors.Is(err, pgx.ErrNoRows) {
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

// FailuresOf returns the windows of keys, as Failures would one by one,
// with one statement.
func (s *Store) FailuresOf(ctx context.Context, keys []string, now time.Time, window time.Duration) ([]store.ThrottleWindow, error) {
	const op = "failures of"
	now = dbTime(now)
	ws := make([]store.ThrottleWindow, len(keys))
	err := s.read(ctx, op, func(q querier) error {
		clear(ws)
		rows, err := q.Query(ctx, failuresOfSQL, keys)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var key string
			var count int
			var started time.Time
			if err := rows.Scan(&key, &count, &started); err != nil {
				return err
			}
			w := store.WindowAt(count, started, now, window)
			for i, k := range keys {
				if k == key {
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
	_, err := s.execCount(ctx, op, clearFailuresSQL, key)
	return err
}

// PruneThrottle deletes every window that ended at or before now, in one
// statement, and returns how many it deleted.
func (s *Store) PruneThrottle(ctx context.Context, now time.Time) (int, error) {
	const op = "prune throttle"
	return s.execCount(ctx, op, pruneThrottlesSQL, dbTime(now))
}

// maybePrune deletes up to 1000 ended throttle windows if the last prune by this Store
// was at least prunePeriod before now. A failure is logged, not returned:
// the failure itself was counted.
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
		s.log.WarnContext(ctx, "postgres: prune throttles", "err", err)
	}
}
