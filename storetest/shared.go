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
		{"Revocations/VisibleToOther", testSharedRevocationsVisible},
		{"Revocations/FloorAcrossHandles", testSharedFeedFloor},
		{"Revocations/SplitRaceReaderMissesNone", func(t *testing.T, a, b store.Store) { raceFeed(t, []store.Store{a, b}) }},
		{"Revocations/AtomicWithRecord", func(t *testing.T, a, b store.Store) { raceFeedAtomic(t, []store.Store{a, b}) }},
		{"Users/DisableRacesSessions", func(t *testing.T, a, b store.Store) { raceDisableSessions(t, []store.Store{a, b}) }},
		{"Users/ResetRacesSessions", func(t *testing.T, a, b store.Store) { raceResetSessions(t, []store.Store{a, b}) }},
		{"Users/ReplaceHashOneWinner", func(t *testing.T, a, b store.Store) { raceReplaceHash(t, []store.Store{a, b}) }},
		{"Users/TagsVisible", testSharedUserTags},
		{"Refresh/RevokeRacesRotate", func(t *testing.T, a, b store.Store) { raceRevokeRotate(t, []store.Store{a, b}) }},
		{"Audit/VisibleToOther", testSharedAudit},
		{"ConsoleSessions/VisibleToOther", testSharedConsoleSessions},
		{"APIKeyControls/RollRaceOneSuccessor", func(t *testing.T, a, b store.Store) { raceRoll(t, []store.Store{a, b}) }},
		{"APIKeyControls/RollVisibleToOther", testSharedRoll},
	}
}

// A project created through one handle is visible through the other at
// once, and its id is taken for both.
func testSharedProjects(t *testing.T, a, b store.Store) {
	mustProject(t, a, projA)
	got, err := b.GetProject(t.Context(), projA)
	require.NoErrorf(t, err, "b.GetProject(%q) after a.CreateProject", projA)
	require.Equal(t, projA, got.ID)
	wantTime(t, base, got.CreatedAt, "b.GetProject(%q).CreatedAt", projA)
	ps, err := b.ListProjects(t.Context())
	require.NoErrorf(t, err, "b.ListProjects()")
	require.Len(t, ps, 1)
	require.ErrorIsf(t, b.CreateProject(t.Context(), store.Project{ID: projA, CreatedAt: base}), store.ErrConflict, "b.CreateProject(%q) after a.CreateProject", projA)
	// And a write in the new project through b works at once.
	mustUser(t, b, projA, "first@example.com")
}

// A user created through one handle is found through the other, its email
// is taken for both, and a password change is seen at once.
func testSharedUsers(t *testing.T, a, b store.Store) {
	mustProject(t, a, projA)
	u := mustUser(t, a, projA, "Shared@Example.com")
	got, err := b.GetUserByEmail(t.Context(), projA, "shared@example.COM")
	require.NoErrorf(t, err, "b.GetUserByEmail after a.CreateUser")
	wantUser(t, u, got, "b.GetUserByEmail")
	require.ErrorIsf(t, b.CreateUser(t.Context(), newUser(projA, "SHARED@example.com")), store.ErrConflict, "b.CreateUser of an email a created")

	// Read through a first, then change through b, then read through a.
	_, err = a.GetUser(t.Context(), projA, u.ID)
	require.NoErrorf(t, err, "a.GetUser")
	require.NoErrorf(t, b.SetPasswordHash(t.Context(), projA, u.ID, "$2a$10$changedchangedchangedchangedchangedchangedchangedchang"), "b.SetPasswordHash")
	got, err = a.GetUser(t.Context(), projA, u.ID)
	require.NoErrorf(t, err, "a.GetUser after b.SetPasswordHash")
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
		require.ErrorIsf(t, err, store.ErrConflict, "CreateUser through handle %d", i%2)
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
	require.NoErrorf(t, b.DeleteContact(t.Context(), projA, "ct_a3"), "b.DeleteContact(ct_a3)")
	page = listPage(t, b, projA, paginate.Request{Limit: 3, After: cursorOf(t, page.Items[2])})
	wantContacts(t, []store.Contact{want[4], want[5]}, page.Items, "b's page after a's cursor, once b deleted ct_a3")
	_, err := a.CreateContact(t.Context(), newContact(projA, "ct_b0", base))
	require.ErrorIsf(t, err, store.ErrConflict, "a.CreateContact of an id b created")
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
	require.NoErrorf(t, a.RevokeAPIKey(t.Context(), projA, k.ID, at), "a.RevokeAPIKey")
	got := mustGetAPIKey(t, b, projA, k.ID)
	require.True(t, got.Revoked(), "b.GetAPIKey right after a.RevokeAPIKey: not revoked")
	wantTime(t, at, got.RevokedAt, "b.GetAPIKey().RevokedAt")

	// The other way round, and listing.
	k2 := mustAPIKey(t, b, projA, "key_shared2", base)
	mustGetAPIKey(t, a, projA, k2.ID)
	require.NoErrorf(t, b.RevokeAPIKey(t.Context(), projA, k2.ID, at), "b.RevokeAPIKey")
	require.True(t, mustGetAPIKey(t, a, projA, k2.ID).Revoked(), "a.GetAPIKey right after b.RevokeAPIKey")
	keys, err := a.ListAPIKeys(t.Context(), projA)
	require.NoErrorf(t, err, "a.ListAPIKeys")
	require.Len(t, keys, 2)
	for _, k := range keys {
		require.Truef(t, k.Revoked(), "a.ListAPIKeys: %q not revoked", k.ID)
	}
	// A second revocation through the other handle keeps the first time.
	require.NoErrorf(t, b.RevokeAPIKey(t.Context(), projA, k.ID, at.Add(time.Hour)), "b.RevokeAPIKey again")
	wantTime(t, at, mustGetAPIKey(t, a, projA, k.ID).RevokedAt, "RevokedAt after revoking through both handles")
}

// LastUsedAt never goes back, whichever handle touches.
func testSharedAPIKeyTouch(t *testing.T, a, b store.Store) {
	mustProject(t, a, projA)
	k := mustAPIKey(t, a, projA, "key_touch", base)
	require.NoErrorf(t, a.TouchAPIKey(t.Context(), projA, k.ID, base.Add(time.Minute)), "a.TouchAPIKey")
	require.NoErrorf(t, b.TouchAPIKey(t.Context(), projA, k.ID, base.Add(time.Second)), "b.TouchAPIKey, earlier")
	wantTime(t, base.Add(time.Minute), mustGetAPIKey(t, b, projA, k.ID).LastUsedAt, "LastUsedAt")
	require.NoErrorf(t, b.TouchAPIKey(t.Context(), projA, k.ID, base.Add(time.Hour)), "b.TouchAPIKey, later")
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
	require.NoErrorf(t, b.RetireSigningKey(t.Context(), projA, k1.ID, base.Add(2*time.Hour)), "b.RetireSigningKey(sk_1)")
	got := mustGetSigningKey(t, a, projA, k1.ID)
	wantTime(t, base.Add(2*time.Hour), got.RetiredAt, "a.GetSigningKey(sk_1).RetiredAt after b retired it")
	require.ErrorIsf(t, a.RetireSigningKey(t.Context(), projA, k2.ID, base.Add(2*time.Hour)), store.ErrConflict, "a.RetireSigningKey of the key b made active")
	ks, err := a.ListSigningKeys(t.Context(), projA)
	require.NoErrorf(t, err, "a.ListSigningKeys")
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
	require.ErrorIsf(t, err, store.ErrReplayed, "b.RotateRefresh(gen 1) after the window")
	_, err = a.RotateRefresh(t.Context(), projA, f.ID, 2, rotateParams(late.Add(time.Second)))
	require.ErrorIsf(t, err, store.ErrRevoked, "a.RotateRefresh(gen 2) after b saw a replay")
	wantTime(t, late, mustGetFamily(t, a, projA, f.ID).RevokedAt, "a.GetRefreshFamily().RevokedAt")
}

// RevokeRefreshFamily through one handle stops rotation through the other.
func testSharedRefreshRevoke(t *testing.T, a, b store.Store) {
	f := mustFamily(t, a, projA)
	mustGetFamily(t, b, projA, f.ID)
	require.NoErrorf(t, a.RevokeRefreshFamily(t.Context(), projA, f.ID, base.Add(time.Minute)), "a.RevokeRefreshFamily")
	_, err := b.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(base.Add(2*time.Minute)))
	require.ErrorIsf(t, err, store.ErrRevoked, "b.RotateRefresh after a.RevokeRefreshFamily")
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
	require.NoErrorf(t, b.ClearFailures(t.Context(), key), "b.ClearFailures")
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
		require.NoErrorf(t, errs[i], "AddFailure through handle %d", i%2)
		require.Truef(t, counts[i] >= 1 && counts[i] <= n && !seen[counts[i]], "AddFailure counts across two handles = %v, want each of 1..%d once", counts, n)
		seen[counts[i]] = true
	}
}

// A revocation through one handle is in the other's feed, and in its
// GetRefreshFamily, GetAPIKey and GetUser, at once; a user disabled
// through one handle cannot start or go on with a session through the
// other.
func testSharedRevocationsVisible(t *testing.T, a, b store.Store) {
	mustProject(t, a, projA)
	u := mustUser(t, a, projA, "shared@example.com")
	f := mustFamilyOf(t, a, u, base, 24*time.Hour)
	g := mustFamilyOf(t, a, u, base, 24*time.Hour)
	k := mustAPIKey(t, a, projA, "key_shared", base)
	// b reads everything first, as a handle that caches would.
	mustGetFamily(t, b, projA, f.ID)
	mustGetAPIKey(t, b, projA, k.ID)
	require.Empty(t, feedList(b, projA).all(t), "b's feed before any revocation")
	feedB := newFeedTracker(t, b, projA)

	at := base.Add(time.Minute)
	require.NoError(t, a.RevokeRefreshFamily(t.Context(), projA, f.ID, at), "a.RevokeRefreshFamily")
	feedB.added(t, store.RevokedSession, f.ID, at, "b's feed after a.RevokeRefreshFamily")
	wantTime(t, at, mustGetFamily(t, b, projA, f.ID).RevokedAt, "b.GetRefreshFamily().RevokedAt after a.RevokeRefreshFamily")

	require.NoError(t, b.RevokeAPIKey(t.Context(), projA, k.ID, at.Add(time.Minute)), "b.RevokeAPIKey")
	feedB.added(t, store.RevokedAPIKey, k.ID, at.Add(time.Minute), "b's feed after b.RevokeAPIKey")
	wantRevocations(t, feedB.items, feedList(a, projA).all(t), "a's feed after b.RevokeAPIKey")
	require.True(t, mustGetAPIKey(t, a, projA, k.ID).Revoked(), "a.GetAPIKey after b.RevokeAPIKey")

	require.NoError(t, a.DisableUser(t.Context(), projA, u.ID, at.Add(2*time.Minute)), "a.DisableUser")
	feedB.added(t, store.RevokedUser, u.ID, at.Add(2*time.Minute), "b's feed after a.DisableUser")
	require.True(t, mustGetUser(t, b, projA, u.ID).Disabled(), "b.GetUser after a.DisableUser")
	wantTime(t, at.Add(2*time.Minute), mustGetFamily(t, b, projA, g.ID).RevokedAt, "b.GetRefreshFamily of a session a.DisableUser ended")
	_, err := b.RotateRefresh(t.Context(), projA, g.ID, 0, rotateParams(at.Add(3*time.Minute)))
	require.ErrorIs(t, err, store.ErrDisabled, "b.RotateRefresh of a session a.DisableUser ended")
	require.ErrorIs(t, b.CreateRefreshFamily(t.Context(), newFamily(projA, u.ID, at.Add(3*time.Minute), time.Hour), userHash), store.ErrDisabled,
		"b.CreateRefreshFamily of a user a disabled")
}

// The feed's floor holds across handles: an item added through one handle
// with an earlier time than the newest item added through the other sorts
// after it, and both handles list one feed.
func testSharedFeedFloor(t *testing.T, a, b store.Store) {
	mustProject(t, a, projA)
	feed := newFeedTracker(t, a, projA)
	handles := []store.Store{a, b}
	for i := range 8 {
		h := handles[i%2]
		k := mustAPIKey(t, h, projA, fmt.Sprintf("key_%d", i), base)
		at := base.Add(time.Hour).Add(-time.Duration(i) * time.Minute) // each earlier than the last
		require.NoErrorf(t, h.RevokeAPIKey(t.Context(), projA, k.ID, at), "RevokeAPIKey through handle %d", i%2)
		feed.added(t, store.RevokedAPIKey, k.ID, at, fmt.Sprintf("RevokeAPIKey(%q) through handle %d, earlier than the feed's newest item", k.ID, i%2))
	}
	wantRevocations(t, feed.items, feedList(b, projA).walk(t, 3, nil), "b's feed")
}

// Tags set through one handle are seen through the other by GetUser and
// ListUsers.
func testSharedUserTags(t *testing.T, a, b store.Store) {
	mustProject(t, a, projA)
	u := mustUser(t, a, projA, "tags@example.com")
	mustGetUser(t, b, projA, u.ID)
	require.NoError(t, b.SetUserTags(t.Context(), projA, u.ID, []string{"admin"}), "b.SetUserTags")
	require.Equal(t, []string{"admin"}, mustGetUser(t, a, projA, u.ID).Tags, "a.GetUser().Tags after b.SetUserTags")
	listed := userList(a, projA, "").all(t)
	require.Len(t, listed, 1, "a.ListUsers")
	require.Equal(t, []string{"admin"}, listed[0].Tags, "a.ListUsers()[0].Tags after b.SetUserTags")
}

// An entry appended through one handle is listed through the other.
func testSharedAudit(t *testing.T, a, b store.Store) {
	mustProject(t, a, projA)
	e := newAudit(projA, "aud_shared", base, store.ActionAPIKeyRevoke, "key_1")
	want := mustAudit(t, a, e)
	wantAuditEntries(t, want, auditList(b, projA, store.AuditFilter{Action: store.ActionAPIKeyRevoke}).all(t), "b.ListAudit after a.AppendAudit")
	require.ErrorIs(t, b.AppendAudit(t.Context(), e), store.ErrConflict, "b.AppendAudit of an id a appended")
}

// A console session created through one handle is found through the
// other; a touch and a delete through either are seen by the other at
// once, as every instance serving the console must.
func testSharedConsoleSessions(t *testing.T, a, b store.Store) {
	mustProject(t, a, projA)
	cs := mustConsoleSession(t, a, projA, "shared", "usr_1", base)
	wantConsoleSession(t, cs, mustGetConsoleSession(t, b, projA, cs.ID), "b.GetConsoleSession after a.CreateConsoleSession")
	require.ErrorIs(t, b.CreateConsoleSession(t.Context(), cs), store.ErrConflict, "b.CreateConsoleSession of an id a created")
	require.NoError(t, b.TouchConsoleSession(t.Context(), projA, cs.ID, base.Add(time.Minute)), "b.TouchConsoleSession")
	cs.LastSeenAt = base.Add(time.Minute)
	wantConsoleSession(t, cs, mustGetConsoleSession(t, a, projA, cs.ID), "a.GetConsoleSession after b.TouchConsoleSession")
	require.NoError(t, a.DeleteConsoleSession(t.Context(), projA, cs.ID), "a.DeleteConsoleSession")
	wantConsoleGone(t, b, projA, cs.ID, "a deleted, read through b")
}

// A roll through one handle is seen by the other at once: the successor,
// the scheduled revocation (NextScheduledRevocation too, as is a session
// end scheduled there), and, once due, the feed items.
func testSharedRoll(t *testing.T, a, b store.Store) {
	mustProject(t, a, projA)
	k := mustAPIKey(t, a, projA, "key_shared", base)
	now, due := base.Add(time.Hour), base.Add(2*time.Hour)
	_, err := a.RollAPIKey(t.Context(), projA, k.ID, successorOf(k, "key_shared_next", now), due)
	require.NoError(t, err)
	got := mustGetAPIKey(t, b, projA, k.ID)
	require.Equal(t, "key_shared_next", got.RolledTo, "b.GetAPIKey().RolledTo after a.RollAPIKey")
	wantTime(t, due, got.RevokesAt, "b.GetAPIKey().RevokesAt after a.RollAPIKey")
	require.Equal(t, k.ID, mustGetAPIKey(t, b, projA, "key_shared_next").RolledFrom)
	_, err = b.RollAPIKey(t.Context(), projA, k.ID, successorOf(k, "key_other", now), due)
	require.ErrorIs(t, err, store.ErrConflict, "b.RollAPIKey of a key a rolled")
	next, err := b.NextScheduledRevocation(t.Context(), projA)
	require.NoError(t, err)
	wantTime(t, due, next, "b.NextScheduledRevocation after a.RollAPIKey")
	// A session end a schedules is seen by b's next call too.
	u := mustUser(t, a, projA, "shared-end@example.com")
	f := newFamily(projA, u.ID, base, time.Hour)
	f.EndsAt = base.Add(90 * time.Minute)
	require.NoError(t, a.CreateRefreshFamily(t.Context(), f, userHash))
	require.NoError(t, a.ScheduleSessionEnd(t.Context(), projA, f.ID))
	next, err = b.NextScheduledRevocation(t.Context(), projA)
	require.NoError(t, err)
	wantTime(t, f.EndsAt, next, "b.NextScheduledRevocation after a.ScheduleSessionEnd of an earlier end")
	// The real clock is past both: the first listing, through b, places them.
	items := feedList(b, projA).all(t)
	require.Len(t, items, 2)
	wantTime(t, f.EndsAt, items[0].RevokedAt, "the scheduled session end's RevokedAt, listed through b")
	wantTime(t, due, items[1].RevokedAt, "the scheduled key revocation's RevokedAt, listed through b")
	wantRevocations(t, items, feedList(a, projA).all(t), "the feed through a")
	next, err = a.NextScheduledRevocation(t.Context(), projA)
	require.NoError(t, err)
	wantZeroTime(t, next, "a.NextScheduledRevocation once b's listing placed them")
}
