// Package storetest is the conformance suite for implementations of
// [store.Store]. Every sentence of package store's doc comments that states
// behaviour has a case here; a backend proves it keeps the contract by
// running the suite from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s, err := sqlite.Open(t.Context(), ":memory:", nil)
//			if err != nil {
//				t.Fatal(err)
//			}
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
// ignore the error of a second Close.
//
// # Suites
//
//   - [Run] checks the contract of every method on one handle, grouped by
//     area: Projects/..., Users/..., Contacts/..., APIKeys/...,
//     SigningKeys/..., Refresh/..., Throttle/..., Store/... .
//   - [RunConcurrency] checks the atomicity promises under contention: one
//     successor per refresh generation, one winner per unique value, the
//     contact ordering rule, monotonic updates.
//   - [RunShared] checks that two handles on one database (two processes or
//     two server instances in production) see each other's writes at once
//     and enforce every rule as one.
//
// # Conventions the suite pins
//
// Times go in with nanoseconds and in zones other than UTC, and must come
// back in UTC, Equal to [store.Truncate] of what went in. Ids compare byte by
// byte ("ct_B" sorts before "ct_a"); emails compare in [store.NormalizeEmail]
// form; throttle keys compare exactly. Cases use only the public interface.
//
// Where package store's comments leave room, the suite takes the stricter
// reading that SPEC.md supports:
//
//   - The shared rule "empty ids, empty emails, invalid project ids ...
//     return ErrInvalid" holds for reads too (GetUser(ctx, "", id),
//     GetProject(ctx, "Bad"), ListContacts with an invalid project id), and
//     an email that [store.NormalizeEmail] makes empty is empty.
//   - A ListContacts limit below 1 is a malformed argument: ErrInvalid.
//   - CreateContact raises CreatedAt only if needed, and then no further
//     than one microsecond past the position it must follow. That position
//     is the newest the project has ever had, deleted contacts included, so
//     that a client holding the cursor of a deleted contact still sees
//     contacts added later ("never before its cursor").
//   - A page with HasMore true is full (limit+1 look-ahead).
//   - RotateRefresh: the reuse window is inclusive (exactly ReuseWindow
//     after the rotation is still a reuse); a p.Now slightly before the
//     rotation (clock skew between instances) is within it; ReuseWindow 0
//     refuses even a reuse at the same instant; the current generation is
//     expired from ExpiresAt on; a negative gen, a TTL that is not positive
//     and a negative window are ErrInvalid; a family's Generation must be 0
//     at create, else ErrInvalid. A replay never moves an earlier RevokedAt.
//   - (CreatedAt, ID) orders compare ids byte by byte for API keys and
//     signing keys too.
//
// It leaves open what the comments do not decide: whether a row id may be
// reused in another project (cases never do it), which CreatedAt a contact
// of a batch gets relative to its batch-mates (only that the batch sorts
// after what existed), whether an earlier generation presented to an
// already revoked family answers ErrRevoked or ErrReplayed, whether
// ListAPIKeys of an unknown project is empty or ErrNotFound, whether
// touching a revoked API key succeeds or is ErrConflict (it must not change
// RevokedAt), what a second revocation given an earlier time does, and what
// CreateContacts does with a contact whose ProjectID differs from the one
// given.
package storetest
