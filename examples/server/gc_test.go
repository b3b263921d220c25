package main

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// While any hash runs the server collects at GOGC=100 and its soft memory
// limit has room for twice the hashes' memory; with none it is back at the
// list load's settings. A variable set in the environment (GOGC,
// GOMEMLIMIT) leaves its setting to it.
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

	ho := tuneGC(environ())
	require.EqualValues(t, serverMemoryLimit, limit())
	require.EqualValues(t, serverGCPercent, percent())
	require.NotNil(t, ho.Running)
	room := 2 * ho.Memory()
	require.Positive(t, room)
	for _, step := range []struct {
		n       int
		limit   int64
		percent int
	}{
		{1, serverMemoryLimit + room, hashingGCPercent},
		{2, serverMemoryLimit + room, hashingGCPercent},
		{1, serverMemoryLimit + room, hashingGCPercent},
		{0, serverMemoryLimit, serverGCPercent},
	} {
		ho.Running(step.n)
		require.Equalf(t, step.limit, limit(), "limit, %d hashes running", step.n)
		require.Equalf(t, step.percent, percent(), "GOGC, %d hashes running", step.n)
	}

	debug.SetMemoryLimit(1 << 40)
	ho = tuneGC(environ("GOMEMLIMIT"))
	require.NotNil(t, ho.Running)
	ho.Running(1)
	require.EqualValues(t, 1<<40, limit(), "GOMEMLIMIT is the host's")
	require.Equal(t, hashingGCPercent, percent())
	ho.Running(0)
	require.Equal(t, serverGCPercent, percent())

	debug.SetGCPercent(250)
	ho = tuneGC(environ("GOGC"))
	ho.Running(1)
	require.Equal(t, 250, percent(), "GOGC is the host's")
	require.EqualValues(t, serverMemoryLimit+room, limit())

	require.Nil(t, tuneGC(environ("GOGC", "GOMEMLIMIT")).Running, "both are the host's")
	require.Equal(t, 250, percent())
}
