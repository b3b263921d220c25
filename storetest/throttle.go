package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

func throttleCases() []testCase {
	return []testCase{
		{"AddFailureCounts", testThrottleAddFailureCounts},
		{"WindowReset", testThrottleWindowReset},
		{"Failures", testThrottleFailures},
		{"FailuresOf", testThrottleFailuresOf},
		{"Clear", testThrottleClear},
		{"KeysIndependent", testThrottleKeysIndependent},
		{"Invalid", testThrottleInvalid},
		{"LongestKey", testThrottleLongestKey},
		{"Prune", testThrottlePrune},
	}
}

func addFailure(t *testing.T, s store.ThrottleStore, key string, now time.Time, window time.Duration) (int, time.Time) {
	t.Helper()
	n, reset, err := s.AddFailure(t.Context(), key, now, window)
	require.NoErrorf(t, err, "AddFailure(%q, %s, %s)", key, now.Format(time.RFC3339Nano), window)
	return n, reset
}

func failures(t *testing.T, s store.ThrottleStore, key string, now time.Time, window time.Duration) (int, time.Time) {
	t.Helper()
	n, reset, err := s.Failures(t.Context(), key, now, window)
	require.NoErrorf(t, err, "Failures(%q, %s, %s)", key, now.Format(time.RFC3339Nano), window)
	return n, reset
}

// AddFailure counts failures in the window that started at the first one,
// and returns when that window ends.
func testThrottleAddFailureCounts(t *testing.T, s store.Store) {
	const key = "login:proj-a:alice@example.com"
	window := 15 * time.Minute
	start := base.In(elsewhere)
	for i := 1; i <= 5; i++ {
		now := start.Add(time.Duration(i-1) * time.Minute)
		n, reset := addFailure(t, s, key, now, window)
		require.Equalf(t, i, n, "AddFailure #%d: count", i)
		wantTime(t, base.Add(window), reset, "AddFailure #%d: resetAt (window start + window)", i)
	}
	// Failures at one instant count one by one.
	for i := 6; i <= 8; i++ {
		n, _ := addFailure(t, s, key, start.Add(10*time.Minute), window)
		require.Equal(t, i, n)
	}
}

// A window ends window after it started: a failure then starts a new
// window at its own time, counting 1.
func testThrottleWindowReset(t *testing.T, s store.Store) {
	const key = "addr:192.0.2.1"
	window := time.Minute
	start := aligned
	addFailure(t, s, key, start, window)
	n, reset := addFailure(t, s, key, start.Add(window-time.Microsecond), window)
	require.Equal(t, 2, n, "count one microsecond before the window ends")
	wantTime(t, start.Add(window), reset, "resetAt within the first window")

	next := start.Add(window) // the window started exactly window before now: it has ended
	n, reset = addFailure(t, s, key, next, window)
	require.Equal(t, 1, n, "count of the first failure once the window has ended")
	wantTime(t, next.Add(window), reset, "resetAt of the new window")
	n, _ = addFailure(t, s, key, next.Add(time.Second), window)
	require.Equal(t, 2, n)

	// Long after: a new window again.
	later := next.Add(24 * time.Hour).Add(789 * time.Nanosecond)
	n, reset = addFailure(t, s, key, later, window)
	require.Equal(t, 1, n)
	wantTime(t, later.Add(window), reset, "resetAt of a window started with nanoseconds")
}

// Failures reports the current window's count and end without adding; a
// key without an open window counts 0.
func testThrottleFailures(t *testing.T, s store.Store) {
	const key = "login:proj-a:bob@example.com"
	window := time.Minute
	n, _ := failures(t, s, key, aligned, window)
	require.Equal(t, 0, n, "Failures of a key never seen")

	addFailure(t, s, key, aligned, window)
	addFailure(t, s, key, aligned.Add(time.Second), window)
	for range 3 {
		n, reset := failures(t, s, key, aligned.Add(2*time.Second), window)
		require.Equal(t, 2, n, "Failures does not add")
		wantTime(t, aligned.Add(window), reset, "Failures resetAt")
	}
	n, _ = failures(t, s, key, aligned.Add(window-time.Microsecond), window)
	require.Equal(t, 2, n, "Failures a microsecond before the window ends")
	n, _ = failures(t, s, key, aligned.Add(window), window)
	require.Equal(t, 0, n, "Failures once the window has ended")
	n, _ = addFailure(t, s, key, aligned.Add(window+time.Second), window)
	require.Equal(t, 1, n, "AddFailure after Failures saw the window end")
}

// FailuresOf returns, in the order of its keys, what Failures returns for
// each: a key given twice twice, a key never seen or whose window ended
// count 0 with a zero time. Its arguments are checked as Failures' are.
func testThrottleFailuresOf(t *testing.T, s store.Store) {
	const a, b, ended, unseen = "login:proj-a:of-a", "login:proj-a:of-b", "login:proj-a:of-ended", "login:proj-a:of-unseen"
	window := time.Minute
	addFailure(t, s, ended, aligned.Add(-window), window)
	addFailure(t, s, a, aligned, window)
	addFailure(t, s, a, aligned.Add(time.Second), window)
	addFailure(t, s, b, aligned.Add(2*time.Second), window)
	now := aligned.Add(3 * time.Second)
	keys := []string{a, unseen, b, ended, a}
	ws, err := s.FailuresOf(t.Context(), keys, now, window)
	require.NoError(t, err)
	require.Len(t, ws, len(keys))
	for i, k := range keys {
		n, reset := failures(t, s, k, now, window)
		require.Equalf(t, n, ws[i].Count, "FailuresOf count of %q", k)
		if n == 0 {
			require.Truef(t, ws[i].ResetAt.IsZero(), "FailuresOf resetAt of %q, with no window open", k)
		} else {
			wantTime(t, reset, ws[i].ResetAt, "FailuresOf resetAt of %q", k)
		}
	}
	require.Equal(t, 2, ws[0].Count)
	require.Equal(t, 1, ws[2].Count)

	for _, c := range []struct {
		name   string
		keys   []string
		now    time.Time
		window time.Duration
	}{
		{"no keys", nil, now, window},
		{"too many keys", make([]string, store.MaxThrottleKeys+1), now, window},
		{"an empty key", []string{a, ""}, now, window},
		{"a key too long", []string{strings.Repeat("k", 513)}, now, window},
		{"no window", []string{a}, now, 0},
		{"no now", []string{a}, time.Time{}, window},
	} {
		_, err := s.FailuresOf(t.Context(), c.keys, c.now, c.window)
		require.ErrorIsf(t, err, store.ErrInvalid, "FailuresOf with %s", c.name)
	}
}

// ClearFailures forgets the key's window; clearing an unknown key succeeds.
func testThrottleClear(t *testing.T, s store.Store) {
	const key = "login:proj-a:carol@example.com"
	window := time.Hour
	for range 3 {
		addFailure(t, s, key, base, window)
	}
	require.NoErrorf(t, s.ClearFailures(t.Context(), key), "ClearFailures(%q)", key)
	n, _ := failures(t, s, key, base.Add(time.Second), window)
	require.Equal(t, 0, n, "Failures after ClearFailures")
	n, reset := addFailure(t, s, key, base.Add(2*time.Second), window)
	require.Equal(t, 1, n, "AddFailure after ClearFailures")
	wantTime(t, base.Add(2*time.Second+window), reset, "a window started after ClearFailures")
	require.NoErrorf(t, s.ClearFailures(t.Context(), "never-seen"), "ClearFailures of an unknown key")
	require.NoErrorf(t, s.ClearFailures(t.Context(), key), "ClearFailures(%q)", key)
	require.NoErrorf(t, s.ClearFailures(t.Context(), key), "ClearFailures(%q) twice", key)
}

// Keys count independently and compare exactly (case and bytes matter).
func testThrottleKeysIndependent(t *testing.T, s store.Store) {
	window := time.Hour
	keys := []string{"k", "K", "k ", "user:alice", "user:alice2", "addr:2001:db8::1", "ключ"}
	for i, k := range keys {
		for range i + 1 {
			addFailure(t, s, k, base, window)
		}
	}
	for i, k := range keys {
		n, _ := failures(t, s, k, base.Add(time.Minute), window)
		require.Equalf(t, i+1, n, "Failures(%q)", k)
	}
	require.NoErrorf(t, s.ClearFailures(t.Context(), "k"), "ClearFailures(k)")
	n, _ := failures(t, s, "K", base.Add(time.Minute), window)
	require.Equal(t, 2, n, "clearing %q leaves %q", "k", "K")
	n, _ = failures(t, s, "k", base.Add(time.Minute), window)
	require.Equal(t, 0, n)
}

// An empty key or a window that is not positive is ErrInvalid and counts
// nothing.
func testThrottleInvalid(t *testing.T, s store.Store) {
	_, _, err := s.AddFailure(t.Context(), "", base, time.Minute)
	require.ErrorIsf(t, err, store.ErrInvalid, "AddFailure(\"\")")
	_, _, err = s.Failures(t.Context(), "", base, time.Minute)
	require.ErrorIsf(t, err, store.ErrInvalid, "Failures(\"\")")
	require.ErrorIsf(t, s.ClearFailures(t.Context(), ""), store.ErrInvalid, "ClearFailures(\"\")")
	for _, w := range []time.Duration{0, -time.Minute} {
		_, _, err = s.AddFailure(t.Context(), "k", base, w)
		require.ErrorIsf(t, err, store.ErrInvalid, "AddFailure(k, window %s)", w)
		_, _, err = s.Failures(t.Context(), "k", base, w)
		require.ErrorIsf(t, err, store.ErrInvalid, "Failures(k, window %s)", w)
	}
	long := strings.Repeat("k", 513)
	_, _, err = s.AddFailure(t.Context(), long, base, time.Minute)
	require.ErrorIs(t, err, store.ErrInvalid, "AddFailure with a 513-byte key")
	_, _, err = s.Failures(t.Context(), long, base, time.Minute)
	require.ErrorIs(t, err, store.ErrInvalid, "Failures with a 513-byte key")
	// A zero time is a malformed argument (package store's shared rule).
	_, _, err = s.AddFailure(t.Context(), "k", time.Time{}, time.Minute)
	require.ErrorIs(t, err, store.ErrInvalid, "AddFailure(k) at the zero time")
	_, _, err = s.Failures(t.Context(), "k", time.Time{}, time.Minute)
	require.ErrorIs(t, err, store.ErrInvalid, "Failures(k) at the zero time")
	_, err = s.PruneThrottle(t.Context(), time.Time{})
	require.ErrorIs(t, err, store.ErrInvalid, "PruneThrottle(zero time)")
	n, _ := failures(t, s, "k", base, time.Minute)
	require.Equal(t, 0, n, "rejected AddFailure calls counted nothing")
}

// A key of 512 bytes, the longest CheckThrottle accepts, counts; one
// differing only in its last byte counts apart.
func testThrottleLongestKey(t *testing.T, s store.Store) {
	key := strings.Repeat("é", 255) + "ab"
	require.Len(t, key, 512, "precondition: key length")
	other := key[:511] + "c"
	for i := 1; i <= 3; i++ {
		n, _ := addFailure(t, s, key, base, time.Hour)
		require.Equal(t, i, n, "AddFailure with a 512-byte key")
	}
	n, _ := addFailure(t, s, other, base, time.Hour)
	require.Equal(t, 1, n, "AddFailure with another 512-byte key sharing 511 bytes")
}

// PruneThrottle deletes the windows that ended at or before now and
// returns how many; open windows keep their counts.
func testThrottlePrune(t *testing.T, s store.Store) {
	start := aligned
	addFailure(t, s, "short", start, time.Minute)                     // ends at start+1m
	addFailure(t, s, "later", start.Add(30*time.Second), time.Minute) // ends at start+1m30s
	for range 3 {
		addFailure(t, s, "long", start, time.Hour) // ends at start+1h
	}
	prune := func(now time.Time, want int) {
		t.Helper()
		n, err := s.PruneThrottle(t.Context(), now)
		require.NoErrorf(t, err, "PruneThrottle(%s)", now.Format(time.RFC3339Nano))
		require.Equalf(t, want, n, "PruneThrottle(%s): windows deleted", now.Format(time.RFC3339Nano))
	}
	prune(start.Add(time.Minute-time.Microsecond), 0)
	prune(start.Add(time.Minute).In(elsewhere), 1) // "short" ended exactly then
	prune(start.Add(time.Minute), 0)
	n, _ := failures(t, s, "long", start.Add(2*time.Minute), time.Hour)
	require.Equal(t, 3, n, "an open window after PruneThrottle keeps its count")
	n, _ = failures(t, s, "later", start.Add(time.Minute), time.Minute)
	require.Equal(t, 1, n, "a window ending later keeps its count")
	prune(start.Add(2*time.Hour), 2)
	n, reset := addFailure(t, s, "long", start.Add(2*time.Hour), time.Hour)
	require.Equal(t, 1, n, "AddFailure after the key's window was pruned")
	wantTime(t, start.Add(3*time.Hour), reset, "resetAt of a window started after a prune")
}
