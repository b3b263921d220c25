package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

// testCase is one conformance case run against a fresh store.
type testCase struct {
	name string
	fn   func(t *testing.T, s store.Store)
}

// group is the cases of one area, run as subtests named area/case.
type group struct {
	name  string
	cases []testCase
}

// sharedCase is one case run against two handles on one database.
type sharedCase struct {
	name string
	fn   func(t *testing.T, a, b store.Store)
}

// Run runs the conformance suite against the store implementation that
// newStore opens. newStore is called once per subtest and must return a
// fresh, empty store (no projects at all) and register its own t.Cleanup
// that closes it, ignoring an error from closing twice.
//
// The cases of an area run as parallel subtests (t.Parallel, as many at
// once as go test's -parallel flag allows), each on its own store, so
// newStore must be safe to call from several goroutines at once: a case
// waiting for its database leaves the CPU to another.
//
// Each store is run behind store.Check, as hosts use it: the argument
// checks are package store's, and a backend only reads and writes. Its
// optional capabilities are found through Unwrap (store.As).
//
// Subtests are named by area and case, for example "Users/DuplicateEmail",
// so one case runs with go test -run 'TestConformance/Users/DuplicateEmail'.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	newStore = checked(newStore)
	groups := []group{
		{"Projects", projectCases()},
		{"Users", userCases()},
		{"Contacts", contactCases()},
		{"APIKeys", apiKeyCases()},
		{"APIKeyControls", keyControlCases()},
		{"SigningKeys", signingKeyCases()},
		{"Refresh", refreshCases()},
		{"Revocations", revocationCases()},
		{"Audit", auditCases()},
		{"ConsoleSessions", consoleSessionCases()},
		{"Throttle", throttleCases()},
		{"Settings", settingCases()},
		{"Checks", checkCases()},
		{"Store", lifecycleCases()},
	}
	// The optional capabilities a store offers, probed once on a store of
	// its own: a store without one promises nothing there, so its cases
	// are not run (rather than run and skipped).
	if implements[store.ChangeVersioner](newStore(t)) {
		groups = append(groups, group{"ChangeVersion", changeVersionCases()})
	}
	if implements[store.WritableChecker](newStore(t)) {
		groups = append(groups, group{"Writable", writableCases()})
	}
	if implements[store.VersionedContactLister](newStore(t)) {
		groups = append(groups, group{"VersionedContacts", versionedListCases()})
	}
	if implements[store.CheckedContactLister](newStore(t)) {
		groups = append(groups, group{"CheckedContacts", checkedListCases()})
	}
	if implements[store.RevocationWatcher](newStore(t)) {
		groups = append(groups, group{"RevocationWatcher", watchCases()})
	}
	runGroups(t, newStore, groups)
}

// RunConcurrency runs the contention cases against the store implementation
// that newStore opens, with the same factory contract as [Run]: many
// goroutines racing on one refresh token, one email, one project id, one
// throttle key, and contacts created while others are listed. Run it under
// the race detector.
func RunConcurrency(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	newStore = checked(newStore)
	runGroups(t, newStore, concurrencyGroups())
}

// RunShared runs the cases that need two handles on one database, the
// situation of two processes (a server and the CLI) or two server instances
// in production. open is called once per subtest and returns two separately
// opened handles (separate connections or pools) on one fresh, empty
// database; it registers its own t.Cleanup that closes both. Its cases run
// as parallel subtests, as Run's do.
//
// The cases check that every write made through one handle is seen by the
// next read through the other (a revoked API key, a rotated refresh family,
// a new project, throttle counts) and that the compare-and-swap and
// uniqueness rules hold across handles.
func RunShared(t *testing.T, open func(t *testing.T) (a, b store.Store)) {
	t.Helper()
	open = checkedPair(open)
	cases := append(sharedCases(), sharedCase{"Settings/OtherHandleWrite", testSharedSetting})
	if a, _ := open(t); implements[store.ChangeVersioner](a) {
		cases = append(cases, sharedCase{"ChangeVersion/OtherHandleWrite", testSharedChangeVersion})
	}
	if a, _ := open(t); implements[store.VersionedContactLister](a) {
		cases = append(cases, sharedCase{"VersionedContacts/OtherHandleWrite", testSharedVersioned})
	}
	if a, _ := open(t); implements[store.CheckedContactLister](a) {
		cases = append(cases, sharedCase{"CheckedContacts/OtherHandleWrite", testSharedChecked})
	}
	if a, _ := open(t); implements[store.RevocationWatcher](a) {
		cases = append(cases, sharedWatchCases()...)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a, b := open(t)
			require.Truef(t, a != nil && b != nil, "open returned a nil store (a=%v, b=%v)", a, b)
			c.fn(t, a, b)
		})
	}
}

func runGroups(t *testing.T, newStore func(t *testing.T) store.Store, groups []group) {
	t.Helper()
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					s := newStore(t)
					require.NotNil(t, s, "newStore returned a nil store")
					c.fn(t, s)
				})
			}
		})
	}
}

// checked returns newStore with each store it opens behind the checking
// layer, store.Check, as a host gets it: the suite checks a backend as
// hosts use it, as gocloud's drivertest checks a driver through its
// portable type.
func checked(newStore func(t *testing.T) store.Store) func(t *testing.T) store.Store {
	return func(t *testing.T) store.Store {
		s := newStore(t)
		if s == nil {
			return nil
		}
		return store.Check(s)
	}
}

// checkedPair is checked for a factory of two handles.
func checkedPair(open func(t *testing.T) (a, b store.Store)) func(t *testing.T) (a, b store.Store) {
	return func(t *testing.T) (a, b store.Store) {
		a, b = open(t)
		if a == nil || b == nil {
			return a, b
		}
		return store.Check(a), store.Check(b)
	}
}

// implements reports whether s offers the optional capability C (an
// interface of package store beyond store.Store).
func implements[C any](s any) bool {
	_, ok := store.As[C](s)
	return ok
}

// capability returns s as the optional capability C; a case of C runs only
// for stores that have it.
func capability[C any](t *testing.T, s any) C {
	t.Helper()
	c, ok := store.As[C](s)
	require.Truef(t, ok, "%T does not implement %T", s, (*C)(nil))
	return c
}
