package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
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
	clearFailuresSQL = `DELETE FROM throttles WHERE key = $1`
	// pruneThrottlesSQL deletes, in bounded batches, rows whose last
	// recorded window ended. The outer reset_at test is re-checked on the
	// current row version if a concurrent AddFailure updated it, so a window
	// reopened meanwhile is kept.
	pruneThrottlesSQL = `DELETE FROM throttles
	WHERE reset_at <= $1 AND key IN (
	  SELECT key FROM throttles WHERE reset_at <= $1 LIMIT 1000)`
)

// maxThrottleKey is the longest key stored as it is; longer keys are stored
// as their SHA-256, so that no key exceeds what a B-tree index entry holds.
const maxThrottleKey = 256

func throttleKey(key string) string {
	if len(key) <= maxThrottleKey {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func checkThrottle(op, key string, window time.Duration) error {
	if key == "" {
		return invalid(op, "empty key")
	}
	if window <= 0 {
		return invalid(op, "non-positive window")
	}
	return nil
}

// AddFailure counts one failure for key at now, with one
// INSERT ... ON CONFLICT DO UPDATE. If the key's window has ended (it
// started window or more before now) a new window starts at now. It returns
// the count in the current window and when that window ends. It returns an
// error matching store.ErrInvalid for an empty key or a non-positive window.
//
// At most once per Options.ThrottlePruneInterval (by now) it also deletes
// rows whose window has ended.
func (s *Store) AddFailure(ctx context.Context, key string, now time.Time, window time.Duration) (int, time.Time, error) {
	const op = "add failure"
	if err := checkThrottle(op, key, window); err != nil {
		return 0, time.Time{}, err
	}
	now = ts(now)
	var count int
	var started time.Time
	err := s.pool.QueryRow(ctx, addFailureSQL, throttleKey(key), ts(now.Add(window)), ts(now.Add(-window)), now).
		Scan(&count, &started)
	if err != nil {
		return 0, time.Time{}, translate(op, err)
	}
	s.maybePrune(ctx, now)
	return count, ts(started.Add(window)), nil
}

// Failures returns the count of key's current window and when it ends; a key
// with no window open at now has count 0 and a zero reset time.
func (s *Store) Failures(ctx context.Context, key string, now time.Time, window time.Duration) (int, time.Time, error) {
	const op = "failures"
	if err := checkThrottle(op, key, window); err != nil {
		return 0, time.Time{}, err
	}
	now = ts(now)
	var count int
	var started time.Time
	err := s.pool.QueryRow(ctx, failuresSQL, throttleKey(key)).Scan(&count, &started)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, time.Time{}, nil
	}
	if err != nil {
		return 0, time.Time{}, translate(op, err)
	}
	if !started.After(now.Add(-window)) {
		return 0, time.Time{}, nil
	}
	return count, ts(started.Add(window)), nil
}

// ClearFailures forgets key's window. Clearing an unknown key succeeds.
func (s *Store) ClearFailures(ctx context.Context, key string) error {
	const op = "clear failures"
	if key == "" {
		return invalid(op, "empty key")
	}
	_, err := s.pool.Exec(ctx, clearFailuresSQL, throttleKey(key))
	return translate(op, err)
}

// maybePrune deletes ended throttle windows if the last prune by this Store
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
	if _, err := s.pool.Exec(ctx, pruneThrottlesSQL, now); err != nil {
		s.log.WarnContext(ctx, "postgres: prune throttles", "err", translate("prune throttles", err))
	}
}
