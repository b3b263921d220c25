package main

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// The server's soft memory limit has room for twice the hashes' memory
// while any hash runs, and none when none does; with GOMEMLIMIT set the
// server leaves the limit to it.
func TestTuneGC_RoomWhileHashing(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))

	ho := tuneGC(&env{getenv: func(string) string { return "" }})
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	require.EqualValues(t, serverMemoryLimit, limit())
	require.EqualValues(t, serverGCPercent, debug.SetGCPercent(serverGCPercent))
	require.NotNil(t, ho.Running)
	room := 2 * ho.Memory()
	require.Positive(t, room)
	for _, step := range []struct{ n, want int64 }{{1, serverMemoryLimit + room}, {2, serverMemoryLimit + room}, {1, serverMemoryLimit + room}, {0, serverMemoryLimit}} {
		ho.Running(int(step.n))
		require.Equalf(t, step.want, limit(), "%d hashes running", step.n)
	}

	debug.SetMemoryLimit(1 << 40)
	ho = tuneGC(&env{getenv: func(k string) string {
		if k == "GOMEMLIMIT" {
			return "1TiB"
		}
		return ""
	}})
	require.Nil(t, ho.Running, "GOMEMLIMIT is the host's")
	require.EqualValues(t, 1<<40, limit())
}
