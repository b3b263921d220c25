// Package store defines Latchkey's storage contract: the domain types, the
// small role interfaces handlers depend on, and the sentinel errors every
// implementation returns.
//
// It imports no database driver. Backends live in subpackages
// (store/sqlite, store/postgres) and prove they keep the contract by running
// the conformance suite in package storetest from their own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openFresh(t) })
//	}
//
// # Contract shared by every method
//
//   - ctx is the first parameter; a cancelled ctx may abort the call.
//   - Every row belongs to a project. A method given a project id never
//     reads or changes a row of another project, and a row of another
//     project is reported exactly as a missing row is.
//   - Empty ids, empty emails, invalid project ids and other malformed
//     arguments return an error matching [ErrInvalid] and change nothing.
//   - A write to an unknown project returns an error matching [ErrNotFound].
//   - Times are returned in UTC, truncated to microseconds; a time written
//     is read back Equal to its microsecond truncation.
//   - Errors are checked with errors.Is against the sentinels below, never
//     with ==; backends wrap them with context.
//   - A write that returned nil is durable: it survives a crash of the
//     process or the machine, and every other handle on the same database
//     (another process, another instance) sees it on its next read.
package store
