// Package testutil holds helpers for Latchkey's own tests only: a buffer
// that goroutines may write to at once and a settable clock. It is not part
// of Latchkey's API, and no production code imports it.
package testutil
