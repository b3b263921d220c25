package main

import (
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// While hashes run the server collects at GOGC=100 and its soft memory
// limit has room for twice the hashes' memory; once none has run for the
// grace period it is back at the list load's settings. A variable set in
// the environment (GOGC, GOMEMLIMIT) leaves its setting to it.
func TestTuneGC_WhileHashing(t *testing.T) {
	// Not parallel: it sets the process's garbage collector settings.
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	percent := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	environ := func(set ...string) *env {
		return &env{getenv: func(k string) string {
			for _, s := range set {
				if s == k {
					return "set"
				}
			}
			return ""
		}}
	}
	listSettings := func() bool { return limit() == serverMemoryLimit && percent() == serverGCPercent }

	ho := tuneGC(environ(), time.Hour)
	require.EqualValues(t, serverMemoryLimit, limit())
	require.EqualValues(t, serverGCPercent, percent())
	require.NotNil(t, ho.Running)
	room := 2 * ho.Memory()
	require.Positive(t, room)
	for _, n := range []int{1, 2, 1, 0} {
		ho.Running(n)
		require.Equalf(t, serverMemoryLimit+room, limit(), "limit, %d hashes running, within the grace period", n)
		require.Equalf(t, hashingGCPercent, percent(), "GOGC, %d hashes running, within the grace period", n)
	}

	// A hash that starts within the grace period keeps the hashing
	// settings, even if the period's timer has fired meanwhile; the list
	// load's come back once the period has passed with none running.
	const grace = time.Millisecond
	ho = tuneGC(environ(), grace)
	require.True(t, listSettings())
	ho.Running(1)
	ho.Running(0)
	ho.Running(1)
	time.Sleep(20 * grace)
	require.False(t, listSettings(), "a hash is running")
	require.Equal(t, hashingGCPercent, percent())
	ho.Running(0)
	require.Eventually(t, listSettings, 10*time.Second, grace, "no hash has run for the grace period")

	debug.SetMemoryLimit(1 << 40)
	ho = tuneGC(environ("GOMEMLIMIT"), grace)
	require.NotNil(t, ho.Running)
	ho.Running(1)
	require.EqualValues(t, 1<<40, limit(), "GOMEMLIMIT is the host's")
	require.Equal(t, hashingGCPercent, percent())
	ho.Running(0)
	require.Eventually(t, func() bool { return percent() == serverGCPercent }, 10*time.Second, grace)
	require.EqualValues(t, 1<<40, limit())

	debug.SetGCPercent(250)
	ho = tuneGC(environ("GOGC"), grace)
	ho.Running(1)
	require.Equal(t, 250, percent(), "GOGC is the host's")
	require.EqualValues(t, serverMemoryLimit+room, limit())

	require.Nil(t, tuneGC(environ("GOGC", "GOMEMLIMIT"), grace).Running, "both are the host's")
	require.Equal(t, 250, percent())
}
