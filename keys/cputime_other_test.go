//go:build !unix

package keys_test

import "time"

// processCPU is unknown here: the benchmarks report no cpu-ns/op.
func processCPU() time.Duration { return 0 }
