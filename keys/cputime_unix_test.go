//go:build unix

package keys_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the test process has
// used so far: unlike wall time, it does not grow when other processes
// share the machine's cores.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
