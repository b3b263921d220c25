// Package store defines Latchkey's storage contract: the domain types, the
// small role interfaces handlers depend on, and the sentinel errors every
// implementation returns.
//
// It imports no database driver. Backends live in subpackages
// (store/sqlite, store/postgres, store/mysql) and prove they keep the
// contract by running the conformance suite in package storetest from their
// own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openFresh(t) })
//	}
//
// # The checking layer
//
// A backend only reads and writes. What is not SQL is this package's, written
// once: the argument checks, run by [Checked] ([Check] puts a backend behind
// it, as gocloud's portable types stand over a driver), the refresh rotation
// rule ([DecideRotation]) and the high-water position of an ordered list
// ([HighWater]). latchkey.New, the example server and storetest put every
// store behind Check; a host that calls a backend directly does the same:
//
//	st := store.Check(backend)
//
// Checked has the methods of [Store] and Unwrap. An optional capability of
// the backend ([ChangeVersioner], [CheckedContactLister], ...) is found
// through the Unwrap chain with [As], and checks its own arguments.
//
// # Contract shared by every method
//
//   - ctx is the first parameter; a cancelled ctx may abort the call.
//   - Every row belongs to a project. A method given a project id never
//     reads or changes a row of another project, and a row of another
//     project is reported exactly as a missing row is.
//   - Empty ids, empty emails, invalid project ids, zero times and other
//     malformed arguments return an error matching [ErrInvalid] and change
//     nothing. The checks are the Check functions of this package
//     ([CheckUser], [CheckKey], ...), run once by the checking layer
//     [Checked] before a backend is called (see below), so the rules cannot
//     drift between backends.
//   - A write to an unknown project returns an error matching [ErrNotFound].
//   - Times are returned in UTC, truncated to microseconds; a time written
//     is read back Equal to its microsecond truncation.
//   - Errors are checked with errors.Is against the sentinels below, never
//     with ==; backends wrap them with context.
//   - A write that returned nil is durable: it survives a crash of the
//     process or the machine, and every other handle on the same database
//     (another process, another instance) sees it on its next read.
//   - A database that cannot be used (unreachable, busy past the store's
//     timeout, out of space) gives an error matching [ErrUnavailable], and
//     a write that gives it changed nothing. When a write's outcome cannot
//     be known (the connection broke after the write was sent, or the
//     commit itself failed to reach the disk), the error does not match
//     ErrUnavailable: the write may be found done. Callers answer
//     ErrUnavailable with 503 and a Retry-After, anything else with 500.
//
// # Sessions and revocations
//
// A login starts a session, stored as a [RefreshFamily]; its id is the sid
// of the session's login tokens. A session ends when it is revoked (logout,
// a replayed refresh token, its user disabled), when its refresh token
// expires unused, or at its absolute end. Every revocation that a verifier
// elsewhere must learn of (an API key revoked, a signing key retired, a
// session ended by logout or replay, a user disabled) adds a [Revocation] to
// the project's feed in the same atomic write ([RevocationStore]); a roll's
// revocation and a session's absolute end that a login token outlives are
// scheduled, and join the feed at their time.
package store
