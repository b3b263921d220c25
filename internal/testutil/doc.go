// Package testutil holds helpers for Latchkey's own tests only: a buffer
// that goroutines may write to at once, a settable clock, and a build of
// an example program that takes turns with those of other test processes.
// It is not part of Latchkey's API, and no production code imports it.
package testutil
