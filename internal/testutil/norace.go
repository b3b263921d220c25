//go:build !race

package testutil

// race reports whether this program was built with the race detector.
const race = false
