// Package storetest is the conformance suite for implementations of
// [store.Store]. Every sentence of package store's doc comments that states
// behaviour has a case here; a backend proves it keeps the contract by
// running the suite from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s, err := sqlite.Open(t.Context(), ":memory:", nil)
//			require.NoError(t, err)
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
//	func TestConcurrency(t *testing.T) { storetest.RunConcurrency(t, newStore) }
//
//	func TestShared(t *testing.T) {
//		storetest.RunShared(t, func(t *testing.T) (a, b store.Store) {
//			path := filepath.Join(t.TempDir(), "latchkey.db")
//			return open(t, path), open(t, path)
//		})
//	}
//
// # Factories
//
// Each case calls the factory once, for a fresh and empty store (no
// projects, not even [store.DefaultProject]), and uses nothing else. The
// factory registers its own t.Cleanup to close the store. One case closes
// the store itself to check that calls after Close fail, so the cleanup must
// ignore the error of a second Close. The cases of an area run as parallel
// subtests, so the factory is called from several goroutines at once.
//
// # Suites
//
//   - [Run] checks the contract of every method on one handle, grouped by
//     area: Projects/..., Users/... (users, tags, ListUsers, DisableUser and
//     EnableUser), Contacts/..., APIKeys/..., SigningKeys/..., Refresh/...
//     (rotation, sessions' EndsAt, disabled users, pruning),
//     Revocations/... (one feed item per revocation, the feed's order,
//     paging and floor, pruning of session items), Audit/...,
//     ConsoleSessions/..., Throttle/... (PruneThrottle included),
//     Settings/... (SetSetting and GetSetting),
//     Checks/... (every method refuses what a store.Check function refuses
//     with ErrInvalid and changes nothing; a row of another project is a
//     missing row; values at the checks' edges round-trip), Store/..., ChangeVersion/... for a store that offers
//     [store.ChangeVersioner], VersionedContacts/... for one that offers
//     [store.VersionedContactLister] (the page is ListContacts' page; the
//     version follows ChangeVersion's contract), CheckedContacts/...
//     for one that offers [store.CheckedContactLister], Writable/...
//     for one that offers [store.WritableChecker], and
//     RevocationWatcher/... for one that offers [store.RevocationWatcher]
//     (each write that revokes or schedules a revocation wakes a channel
//     watched before it, and then the feed, or NextScheduledRevocation,
//     holds it; an ended context closes the channel).
//   - [RunConcurrency] checks the atomicity promises under contention: one
//     successor per refresh generation, a logout racing rotations leaves no
//     usable successor, DisableUser racing session creates and rotations
//     leaves no live session, concurrent revocations are each in the feed
//     once and a reader paging the feed meanwhile misses none, a revoked
//     record and its feed item are never seen apart, one winner
//     per unique value, the contact ordering rule, monotonic updates.
//   - [RunShared] checks that two handles on one database (two processes or
//     two server instances in production) see each other's writes at once
//     and enforce every rule as one: the feed and its floor, revocations
//     seen by the other handle's reads, console sessions, the other
//     handle's watchers woken by each revoking write, and the races above
//     split across the two handles.
//   - [RunUnwritable] checks a store on a database that cannot take
//     writes now (a standby, a read-only database): every write answers
//     store.ErrUnavailable and changes nothing, reads still answer.
//
// # One assertion style
//
// Every check is a call of testify's require package, the project's test
// library, because a case is a sequence of steps that build on each other:
// the first step that fails ends the case, and one style reads the same in
// every file. Messages name the call and its arguments in the house form,
// `GetUser(%q, %q)`, and testify adds what was got and what was wanted (for
// require.ErrorIsf, the error and the sentinel it should match). The
// helpers that compare domain values (wantUser, wantFamily, wantTime,
// feedTracker.added, keysetList.page, ...) are compositions of require
// calls, not a second style. Goroutines never call require (FailNow must
// run on the test's goroutine): racing cases collect what each goroutine
// got and check it after the race.
//
// # Conventions the suite pins
//
// Times go in with nanoseconds and in zones other than UTC, and must come
// back in UTC, Equal to [store.Truncate] of what went in. Ids compare byte by
// byte ("ct_B" sorts before "ct_a"); emails compare in [store.NormalizeEmail]
// form; throttle keys, tags, audit actions and targets compare exactly.
// Cases use only the public interface.
//
// Where package store's comments leave room, the suite takes the stricter
// reading that the wire contract (docs/contract.md) supports:
//
//   - The shared rule "empty ids, empty emails, invalid project ids, zero
//     times ... return ErrInvalid" holds for reads too (GetUser(ctx, "", id),
//     GetProject(ctx, "Bad"), ListContacts with an invalid project id), for
//     every lookup's row id (store.CheckKey, also for console sessions), and
//     for every time a write is given: prunes, AddFailure and Failures' now,
//     CreateProject's CreatedAt. An email that [store.NormalizeEmail] makes
//     empty is empty. A page limit below 1 is ErrInvalid on every list.
//   - CreateContact raises CreatedAt only if needed, and then no further
//     than one microsecond past the position it must follow. That position
//     is the newest the project has ever had, deleted contacts included, so
//     that a client holding the cursor of a deleted contact still sees
//     contacts added later ("never before its cursor").
//   - The revocation feed follows the same rule: an item's RevokedAt is the
//     revocation time, raised only if needed and then no further than one
//     microsecond past the newest position the project's feed has ever had,
//     pruned items included ("once a reader has seen an item, every later
//     item sorts after it"). The revoked record keeps the time given
//     (APIKey.RevokedAt, SigningKey.RetiredAt, RefreshFamily.RevokedAt,
//     User.DisabledAt); only the feed item is raised.
//   - A page with HasMore true is full (limit+1 look-ahead), on every list.
//   - RotateRefresh: the reuse window is inclusive (exactly ReuseWindow
//     after the rotation is still a reuse); a p.Now slightly before the
//     rotation (clock skew between instances) is within it; ReuseWindow 0
//     refuses even a reuse at the same instant; the current generation is
//     expired from ExpiresAt on; a negative gen, a TTL that is not positive
//     and a negative window are ErrInvalid; a family's Generation must be 0
//     at create, else ErrInvalid. A replay never moves an earlier RevokedAt,
//     and a replay presented to a revoked family adds no feed item. At or
//     past EndsAt nothing is answered with a token: the current generation
//     and its predecessor within the reuse window are both ErrExpired.
//   - DisableUser revokes every session of the user that is not revoked,
//     expired and ended ones included, at the time given, and adds only the
//     RevokedUser item (none for the sessions). EnableUser adds nothing.
//   - EndUserSessions revokes the same sessions and adds one
//     RevokedSession item for each (none when it revoked none), no
//     RevokedUser item. CreateRefreshFamily given a password hash that is
//     not the user's (changed since the sign-in checked it) is ErrConflict
//     and stores nothing; an empty hash is ErrInvalid.
//   - The prunes' "before" is strict: a record at exactly the time given is
//     kept. PruneThrottle deletes a window that ended exactly at now.
//   - ListUsers' email prefix is literal ("%", "_", "\" match themselves)
//     and compared in NormalizeEmail form (so a prefix of white space lists
//     every user).
//   - The audit log keeps each entry's At as given: an entry appended after
//     a newer one lists after it (older), unraised.
//   - Deleting another project's console session succeeds, as deleting a
//     missing one does, and leaves the session.
//   - SetUserTags keeps a copy of the caller's tags.
//   - (CreatedAt, ID) orders compare ids byte by byte for API keys and
//     signing keys too.
//   - The change version does not move without a write: two calls of
//     ChangeVersion (or ListContactsVersioned) with only reads between them
//     agree, though store.ChangeVersioner allows a spurious change, since a
//     verifier that keeps records would otherwise read them again for
//     nothing.
//   - A RevocationWatcher's channel, which the interface allows to close
//     without a revocation, does not close every time: a case retries a
//     channel that closed with nothing committed, up to ten times.
//
// It leaves open what the comments do not decide: whether a row id may be
// reused in another project (cases never do it), which CreatedAt a contact
// of a batch gets relative to its batch-mates (only that the batch sorts
// after what existed), whether an earlier generation presented to an
// already revoked family answers ErrRevoked or ErrReplayed, whether
// ListAPIKeys of an unknown project is empty or ErrNotFound, whether
// touching a revoked API key succeeds or is ErrConflict (it must not change
// RevokedAt), whether ListUsers shows a user created with a CreatedAt
// before a client's cursor (users have no raising rule; cases add later
// users only), and whether CreateConsoleSession checks that its user
// exists.
package storetest
