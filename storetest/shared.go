package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

func sharedCases() []sharedCase {
	return []sharedCase{
		{"Projects/VisibleToOther", testSharedProjects},
		{"Users/VisibleAndUnique", testSharedUsers},
		{"Users/SameEmailRace", testSharedUsersRace},
		{"Contacts/CreateListDelete", testSharedContacts},
		{"APIKeys/RevocationVisible", testSharedAPIKeyRevocation},
		{"APIKeys/TouchMonotonic", testSharedAPIKeyTouch},
		{"SigningKeys/RotateRetire", testSharedSigningKeys},
		{"Refresh/ReuseAndReplay", testSharedRefresh},
		{"Refresh/RevokeVisible", testSharedRefreshRevoke},
		{"Refresh/SplitRace", testSharedRefreshRace},
		{"Throttle/CountsShared", testSharedThrottle},
		{"Throttle/SplitRace", testSharedThrottleRace},
	}
}

// A project created through one handle is visible through the other at
// once, and its id is taken for both.
func testSharedProjects(t *testing.T, a, b store.Store) {
	mustProject(t, a, projA)
	got, err := b.GetProject(t.Context(), projA)
	noErr(t, err, "b.GetProject(%q) after a.CreateProject", projA)
	require.Equal(t, projA, got.ID)
	wantTime(t, base, got.CreatedAt, "b.GetProject(%q).CreatedAt", projA)
	ps, err := b.ListProjects(t.Context())
	noErr(t, err, "b.ListProjects()")
	require.Len(t, ps, 1)
	wantErr(t, b.CreateProject(t.Context(), store.Project{ID: projA, CreatedAt: base}), store.ErrConflict, "b.CreateProject(%q) after a.CreateProject", projA)
	// And a write in the new project through b works at once.
	mustUser(t, b, projA, "first@example.com")
}

// A user created through one handle is found through the other, its email
// is taken for both, and a password change is seen at once.
func testSharedUsers(t *testing.T, a, b store.Store) {
	mustProject(t, a, projA)
	u := mustUser(t, a, projA, "Shared@Example.com")
	got, err := b.GetUserByEmail(t.Context(), projA, "shared@example.COM")
	noErr(t, err, "b.GetUserByEmail after a.CreateUser")
	wantUser(t, u, got, "b.GetUserByEmail")
	wantErr(t, b.CreateUser(t.Context(), newUser(projA, "SHARED@example.com")), store.ErrConflict, "b.CreateUser of an email a created")

	// Read through a first, then change through b, then read through a.
	_, err = a.GetUser(t.Context(), projA, u.ID)
	noErr(t, err, "a.GetUser")
	noErr(t, b.SetPasswordHash(t.Context(), projA, u.ID, "$2a$10$changedchangedchangedchangedchangedchangedchangedchang"), "b.SetPasswordHash")
	got, err = a.GetUser(t.Context(), projA, u.ID)
	noErr(t, err, "a.GetUser after b.SetPasswordHash")
	require.Equal(t, "$2a$10$changedchangedchangedchangedchangedchangedchangedchang", got.PasswordHash, "a sees b's password change")
}

// Concurrent creates of one email split across the handles: one wins.
func testSharedUsersRace(t *testing.T, a, b store.Store) {
	mustProject(t, a, projA)
	handles := []store.Store{a, b}
	users := make([]store.User, 20)
	errs := make([]error, len(users))
	for i := range users {
		users[i] = newUser(projA, "split@example.com")
	}
	race(len(users), func(i int) { errs[i] = handles[i%2].CreateUser(t.Context(), users[i]) })
	ok := 0
	for i, err := range errs {
		if err == nil {
			ok++
			continue
		}
		wantErr(t, err, store.ErrConflict, "CreateUser through handle %d", i%2)
	}
	require.Equal(t, 1, ok, "creates that succeeded across two handles")
}

// Contacts created through either handle list in one order through both;
// the CreatedAt rule counts contacts created through the other handle; a
// cursor from one handle continues through the other; deletes are seen.
func testSharedContacts(t *testing.T, a, b store.Store) {
	mustProject(t, a, projA)
	trA := newTracker(a, projA)
	for i := range 5 {
		trA.create(t, fmt.Sprintf("ct_a%d", i), base.Add(time.Duration(i)*time.Hour))
	}
	// b's contact given an earlier time sorts after a's newest.
	trB := newTracker(b, projA)
	trB.note(trA.top)
	x := trB.create(t, "ct_b0", base)
	want := append(append([]store.Contact(nil), trA.created...), x)
	wantContacts(t, want, listAll(t, a, projA), "a.ListContacts")
	wantContacts(t, want, listAll(t, b, projA), "b.ListContacts")

	page := listPage(t, a, projA, paginate.Request{Limit: 3})
	noErr(t, b.DeleteContact(t.Context(), projA, "ct_a3"), "b.DeleteContact(ct_a3)")
	page = listPage(t, b, projA, paginate.Request{Limit: 3, After: cursorOf(t, page.Items[2])})
	wantContacts(t, []store.Contact{want[4], want[5]}, page.Items, "b's page after a's cursor, once b deleted ct_a3")
	_, err := a.CreateContact(t.Context(), newContact(projA, "ct_b0", base))
	wantErr(t, err, store.ErrConflict, "a.CreateContact of an id b created")
}

// A revocation made through one handle is seen by the other's next
// GetAPIKey, even when that handle read the key just before.
func testSharedAPIKeyRevocation(t *testing.T, a, b store.Store) {
	mustProject(t, a, projA)
	k := mustAPIKey(t, a, projA, "key_shared", base)
	for range 3 {
		got := mustGetAPIKey(t, b, projA, k.ID) // a handle that caches would keep this
		require.False(t, got.Revoked(), "b.GetAPIKey before revocation")
	}
	at := base.Add(time.Hour)
	noErr(t, a.RevokeAPIKey(t.Context(), projA, k.ID, at), "a.RevokeAPIKey")
	got := mustGetAPIKey(t, b, projA, k.ID)
	require.True(t, got.Revoked(), "b.GetAPIKey right after a.RevokeAPIKey: not revoked")
	wantTime(t, at, got.RevokedAt, "b.GetAPIKey().RevokedAt")

	// The other way round, and listing.
	k2 := mustAPIKey(t, b, projA, "key_shared2", base)
	mustGetAPIKey(t, a, projA, k2.ID)
	noErr(t, b.RevokeAPIKey(t.Context(), projA, k2.ID, at), "b.RevokeAPIKey")
	require.True(t, mustGetAPIKey(t, a, projA, k2.ID).Revoked(), "a.GetAPIKey right after b.RevokeAPIKey")
	keys, err := a.ListAPIKeys(t.Context(), projA)
	noErr(t, err, "a.ListAPIKeys")
	require.Len(t, keys, 2)
	for _, k := range keys {
		require.Truef(t, k.Revoked(), "a.ListAPIKeys: %q not revoked", k.ID)
	}
	// A second revocation through the other handle keeps the first time.
	noErr(t, b.RevokeAPIKey(t.Context(), projA, k.ID, at.Add(time.Hour)), "b.RevokeAPIKey again")
	wantTime(t, at, mustGetAPIKey(t, a, projA, k.ID).RevokedAt, "RevokedAt after revoking through both handles")
}

// LastUsedAt never goes back, whichever handle touches.
func testSharedAPIKeyTouch(t *testing.T, a, b store.Store) {
	mustProject(t, a, projA)
	k := mustAPIKey(t, a, projA, "key_touch", base)
	noErr(t, a.TouchAPIKey(t.Context(), projA, k.ID, base.Add(time.Minute)), "a.TouchAPIKey")
	noErr(t, b.TouchAPIKey(t.Context(), projA, k.ID, base.Add(time.Second)), "b.TouchAPIKey, earlier")
	wantTime(t, base.Add(time.Minute), mustGetAPIKey(t, b, projA, k.ID).LastUsedAt, "LastUsedAt")
	noErr(t, b.TouchAPIKey(t.Context(), projA, k.ID, base.Add(time.Hour)), "b.TouchAPIKey, later")
	wantTime(t, base.Add(time.Hour), mustGetAPIKey(t, a, projA, k.ID).LastUsedAt, "LastUsedAt")
}

// Rotating or retiring a signing key through one handle is seen through the
// other at once.
func testSharedSigningKeys(t *testing.T, a, b store.Store) {
	mustProject(t, a, projA)
	k1 := mustSigningKey(t, a, projA, "sk_1", base)
	wantSigningKey(t, k1, mustActive(t, b, projA), "b.ActiveSigningKey")
	k2 := mustSigningKey(t, b, projA, "sk_2", base.Add(time.Hour))
	wantSigningKey(t, k2, mustActive(t, a, projA), "a.ActiveSigningKey after b rotated")
	noErr(t, b.RetireSigningKey(t.Context(), projA, k1.ID, base.Add(2*time.Hour)), "b.RetireSigningKey(sk_1)")
	got := mustGetSigningKey(t, a, projA, k1.ID)
	wantTime(t, base.Add(2*time.Hour), got.RetiredAt, "a.GetSigningKey(sk_1).RetiredAt after b retired it")
	wantErr(t, a.RetireSigningKey(t.Context(), projA, k2.ID, base.Add(2*time.Hour)), store.ErrConflict, "a.RetireSigningKey of the key b made active")
	ks, err := a.ListSigningKeys(t.Context(), projA)
	noErr(t, err, "a.ListSigningKeys")
	require.Equal(t, []string{"sk_1", "sk_2"}, signingKeyIDs(ks))
}

// A rotation through one handle is seen by the other: the predecessor
// presented there within the window gets the same successor; presented
// after the window it is a replay that revokes the family for both.
func testSharedRefresh(t *testing.T, a, b store.Store) {
	f := mustFamily(t, a, projA)
	first := rotateParams(base.Add(time.Minute))
	r := rotate(t, a, f, 0, first)
	require.False(t, r.Reused)

	got := mustGetFamily(t, b, projA, f.ID)
	wantFamily(t, r.Family, got, "b.GetRefreshFamily after a rotated")
	rb := rotate(t, b, f, 0, rotateParams(first.Now.Add(3*time.Second)))
	require.True(t, rb.Reused, "b.RotateRefresh(gen 0) within the window after a rotated: Reused")
	wantFamily(t, r.Family, rb.Family, "b's reuse returns a's successor")

	// b rotates the current generation; a's reuse of gen 1 is answered.
	second := rotateParams(first.Now.Add(time.Minute))
	r2 := rotate(t, b, f, 1, second)
	require.False(t, r2.Reused)
	ra := rotate(t, a, f, 1, rotateParams(second.Now.Add(time.Second)))
	require.True(t, ra.Reused, "a.RotateRefresh(gen 1) within the window after b rotated: Reused")
	wantFamily(t, r2.Family, ra.Family, "a's reuse returns b's successor")

	// Replay of gen 1 through b after the window revokes the family for a.
	late := second.Now.Add(time.Minute)
	_, err := b.RotateRefresh(t.Context(), projA, f.ID, 1, rotateParams(late))
	wantErr(t, err, store.ErrReplayed, "b.RotateRefresh(gen 1) after the window")
	_, err = a.RotateRefresh(t.Context(), projA, f.ID, 2, rotateParams(late.Add(time.Second)))
	wantErr(t, err, store.ErrRevoked, "a.RotateRefresh(gen 2) after b saw a replay")
	wantTime(t, late, mustGetFamily(t, a, projA, f.ID).RevokedAt, "a.GetRefreshFamily().RevokedAt")
}

// RevokeRefreshFamily through one handle stops rotation through the other.
func testSharedRefreshRevoke(t *testing.T, a, b store.Store) {
	f := mustFamily(t, a, projA)
	mustGetFamily(t, b, projA, f.ID)
	noErr(t, a.RevokeRefreshFamily(t.Context(), projA, f.ID, base.Add(time.Minute)), "a.RevokeRefreshFamily")
	_, err := b.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(base.Add(2*time.Minute)))
	wantErr(t, err, store.ErrRevoked, "b.RotateRefresh after a.RevokeRefreshFamily")
}

// Concurrent presentations of one token split across the handles get one
// successor.
func testSharedRefreshRace(t *testing.T, a, b store.Store) {
	f := mustFamily(t, a, projA)
	handles := []store.Store{a, b}
	for gen := int64(0); gen < 3; gen++ {
		now := base.Add(time.Minute + time.Duration(gen)*time.Second)
		rs := raceRotate(t.Context(), 20, func(i int) store.RefreshStore { return handles[i%2] }, f, gen,
			func(int) store.RotateParams { return rotateParams(now) })
		win := checkOneSuccessor(t, rs, gen)
		wantFamily(t, win, mustGetFamily(t, b, projA, f.ID), "b.GetRefreshFamily after the race")
	}
}

// Throttle counts are one count for both handles.
func testSharedThrottle(t *testing.T, a, b store.Store) {
	const key = "login:proj-a:shared@example.com"
	w := time.Hour
	n, _ := addFailure(t, a, key, base, w)
	require.Equal(t, 1, n)
	n, _ = addFailure(t, b, key, base.Add(time.Second), w)
	require.Equal(t, 2, n, "b.AddFailure after a.AddFailure")
	n, reset := addFailure(t, a, key, base.Add(2*time.Second), w)
	require.Equal(t, 3, n)
	wantTime(t, base.Add(w), reset, "resetAt of the shared window")
	n, _ = failures(t, b, key, base.Add(3*time.Second), w)
	require.Equal(t, 3, n, "b.Failures")
	noErr(t, b.ClearFailures(t.Context(), key), "b.ClearFailures")
	n, _ = failures(t, a, key, base.Add(4*time.Second), w)
	require.Equal(t, 0, n, "a.Failures after b.ClearFailures")
}

// Concurrent failures split across the handles are each counted once.
func testSharedThrottleRace(t *testing.T, a, b store.Store) {
	handles := []store.Store{a, b}
	const n = 40
	counts := make([]int, n)
	errs := make([]error, n)
	race(n, func(i int) {
		counts[i], _, errs[i] = handles[i%2].AddFailure(t.Context(), "addr:198.51.100.7", base, time.Hour)
	})
	seen := map[int]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("AddFailure through handle %d = %v", i%2, errs[i])
		}
		if counts[i] < 1 || counts[i] > n || seen[counts[i]] {
			t.Fatalf("AddFailure counts across two handles = %v, want each of 1..%d once", counts, n)
		}
		seen[counts[i]] = true
	}
}
