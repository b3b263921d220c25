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
package storetest
