package storetest

import (
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
		{"Clear", testThrottleClear},
		{"KeysIndependent", testThrottleKeysIndependent},
		{"Invalid", testThrottleInvalid},
	}
}

func addFailure(t *testing.T, s store.ThrottleStore, key string, now time.Time, window time.Duration) (int, time.Time) {
	t.Helper()
	n, reset, err := s.AddFailure(t.Context(), key, now, window)
	noErr(t, err, "AddFailure(%q, %s, %s)", key, now.Format(time.RFC3339Nano), window)
	return n, reset
}

func failures(t *testing.T, s store.ThrottleStore, key string, now time.Time, window time.Duration) (int, time.Time) {
	t.Helper()
	n, reset, err := s.Failures(t.Context(), key, now, window)
	noErr(t, err, "Failures(%q, %s, %s)", key, now.Format(time.RFC3339Nano), window)
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

// ClearFailures forgets the key's window; clearing an unknown key succeeds.
func testThrottleClear(t *testing.T, s store.Store) {
	const key = "login:proj-a:carol@example.com"
	window := time.Hour
	for range 3 {
		addFailure(t, s, key, base, window)
	}
	noErr(t, s.ClearFailures(t.Context(), key), "ClearFailures(%q)", key)
	n, _ := failures(t, s, key, base.Add(time.Second), window)
	require.Equal(t, 0, n, "Failures after ClearFailures")
	n, reset := addFailure(t, s, key, base.Add(2*time.Second), window)
	require.Equal(t, 1, n, "AddFailure after ClearFailures")
	wantTime(t, base.Add(2*time.Second+window), reset, "a window started after ClearFailures")
	noErr(t, s.ClearFailures(t.Context(), "never-seen"), "ClearFailures of an unknown key")
	noErr(t, s.ClearFailures(t.Context(), key), "ClearFailures(%q)", key)
	noErr(t, s.ClearFailures(t.Context(), key), "ClearFailures(%q) twice", key)
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
	noErr(t, s.ClearFailures(t.Context(), "k"), "ClearFailures(k)")
	n, _ := failures(t, s, "K", base.Add(time.Minute), window)
	require.Equal(t, 2, n, "clearing %q leaves %q", "k", "K")
	n, _ = failures(t, s, "k", base.Add(time.Minute), window)
	require.Equal(t, 0, n)
}

// An empty key or a window that is not positive is ErrInvalid and counts
// nothing.
func testThrottleInvalid(t *testing.T, s store.Store) {
	_, _, err := s.AddFailure(t.Context(), "", base, time.Minute)
	wantErr(t, err, store.ErrInvalid, "AddFailure(\"\")")
	_, _, err = s.Failures(t.Context(), "", base, time.Minute)
	wantErr(t, err, store.ErrInvalid, "Failures(\"\")")
	wantErr(t, s.ClearFailures(t.Context(), ""), store.ErrInvalid, "ClearFailures(\"\")")
	for _, w := range []time.Duration{0, -time.Minute} {
		_, _, err = s.AddFailure(t.Context(), "k", base, w)
		wantErr(t, err, store.ErrInvalid, "AddFailure(k, window %s)", w)
		_, _, err = s.Failures(t.Context(), "k", base, w)
		wantErr(t, err, store.ErrInvalid, "Failures(k, window %s)", w)
	}
	n, _ := failures(t, s, "k", base, time.Minute)
	require.Equal(t, 0, n, "rejected AddFailure calls counted nothing")
}
