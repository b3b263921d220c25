package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

func revocationCases() []testCase {
	return []testCase{
		{"APIKeyRevoke", testFeedAPIKeyRevoke},
		{"SigningKeyRetire", testFeedSigningKeyRetire},
		{"SessionRevoke", testFeedSessionRevoke},
		{"SessionReplay", testFeedSessionReplay},
		{"UserDisable", testFeedUserDisable},
		{"UserEndSessions", testFeedUserEndSessions},
		{"FailedCallsAddNothing", testFeedFailedCallsAddNothing},
		{"Order", testFeedOrder},
		{"Pages", testFeedPages},
		{"LookAhead", testFeedLookAhead},
		{"CursorNamesNoItem", testFeedCursorNamesNoItem},
		{"Floor", testFeedFloor},
		{"FloorPerProject", testFeedFloorPerProject},
		{"FloorAfterPrune", testFeedFloorAfterPrune},
		{"OtherProject", testFeedOtherProject},
		{"UnknownProject", testFeedUnknownProject},
		{"Invalid", testFeedInvalid},
		{"PruneSessions", testFeedPruneSessions},
	}
}

// feedTracker follows one project's revocation feed through a case: it
// knows the items the feed holds and the newest position it has ever held
// (pruned items included), and checks that each revoking call adds exactly
// the item the contract says, where the floor rule puts it.
type feedTracker struct {
	s       store.RevocationStore
	project string
	items   []store.Revocation // the feed as last checked
	top     paginate.Cursor    // the newest position the feed has held
	hasTop  bool
}

// newFeedTracker reads the project's feed as it is now.
func newFeedTracker(t *testing.T, s store.RevocationStore, project string) *feedTracker {
	t.Helper()
	f := &feedTracker{s: s, project: project}
	f.items = feedList(s, project).all(t)
	for _, r := range f.items {
		f.note(r)
	}
	return f
}

func (f *feedTracker) note(r store.Revocation) {
	if p := revocationPos(r); !f.hasTop || posLess(f.top, p) {
		f.top, f.hasTop = p, true
	}
}

// added checks that the feed is what it was plus exactly one item, last, of
// the given kind and subject, revoked at at, raised only as the floor rule
// needs; and returns the item.
func (f *feedTracker) added(t *testing.T, kind store.RevocationKind, subject string, at time.Time, what string) store.Revocation {
	t.Helper()
	return f.addedAll(t, []wantItem{{kind, subject}}, at, what)[0]
}

// wantItem is the kind and subject of an item a write adds to the feed.
type wantItem struct {
	kind    store.RevocationKind
	subject string
}

// addedAll checks that the feed is what it was plus exactly the items of
// want, last, in any order among themselves, each revoked at at, raised
// only as the floor rule needs; and returns the items added, in feed
// order.
func (f *feedTracker) addedAll(t *testing.T, want []wantItem, at time.Time, what string) []store.Revocation {
	t.Helper()
	now := feedList(f.s, f.project).all(t)
	require.Lenf(t, now, len(f.items)+len(want), "%s: ListRevocations(%q) items, want exactly %d added", what, f.project, len(want))
	wantRevocations(t, f.items, now[:len(f.items)], what+": the items already in the feed")
	added := now[len(f.items):]
	got := make([]wantItem, len(added))
	for i, r := range added {
		got[i] = wantItem{r.Kind, r.Subject}
		require.Equalf(t, f.project, r.ProjectID, "%s: ProjectID of an item added", what)
		require.Truef(t, strings.HasPrefix(r.ID, store.PrefixRevocation+"_"), "%s: ID of an item added = %q, want the prefix %q", what, r.ID, store.PrefixRevocation+"_")
		checkFloor(t, what, at, r, f.top, f.hasTop)
		f.note(r)
	}
	require.ElementsMatchf(t, want, got, "%s: the kinds and subjects of the items added", what)
	f.items = now
	return added
}

// unchanged checks that the feed holds exactly what it held.
func (f *feedTracker) unchanged(t *testing.T, what string) {
	t.Helper()
	wantRevocations(t, f.items, feedList(f.s, f.project).all(t), what+": ListRevocations("+f.project+"), want no item added")
}

// reload reads the feed again, after a prune.
func (f *feedTracker) reload(t *testing.T) {
	t.Helper()
	f.items = feedList(f.s, f.project).all(t)
}

// checkFloor checks an item's RevokedAt given the revocation time at and
// the newest position the feed held before it: RevokedAt is at truncated
// to microseconds when that already sorts after top; otherwise it is raised
// to sort after top, and no further than one microsecond past top's time.
func checkFloor(t *testing.T, what string, at time.Time, got store.Revocation, top paginate.Cursor, hasTop bool) {
	t.Helper()
	want := store.Truncate(at)
	p := revocationPos(got)
	require.Falsef(t, got.RevokedAt.Before(want), "%s: RevokedAt of the item = %s, earlier than the revocation time %s; it may only be raised",
		what, got.RevokedAt.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	if !hasTop || want.After(top.CreatedAt) {
		wantTime(t, at, got.RevokedAt, "%s: RevokedAt of the item (after every item of the feed, so not raised)", what)
		return
	}
	require.Truef(t, posLess(top, p), "%s: item at %s does not sort after the feed's newest position %s", what, fmtPos(p), fmtPos(top))
	limit := top.CreatedAt.Add(time.Microsecond)
	require.Falsef(t, got.RevokedAt.After(limit), "%s: RevokedAt raised to %s, want at most %s (raised only as far as needed to sort after %s)",
		what, got.RevokedAt.Format(time.RFC3339Nano), limit.Format(time.RFC3339Nano), fmtPos(top))
}

// wantRevocations fails unless got holds exactly the items of want, in
// order, with equal fields.
func wantRevocations(t *testing.T, want, got []store.Revocation, what string) {
	t.Helper()
	require.Equalf(t, revocationIDs(want), revocationIDs(got), "%s: ids in order", what)
	for i := range want {
		require.Equalf(t, want[i].ProjectID, got[i].ProjectID, "%s: ProjectID of %q", what, want[i].ID)
		require.Equalf(t, want[i].Kind, got[i].Kind, "%s: Kind of %q", what, want[i].ID)
		require.Equalf(t, want[i].Subject, got[i].Subject, "%s: Subject of %q", what, want[i].ID)
		wantTime(t, want[i].RevokedAt, got[i].RevokedAt, "%s: RevokedAt of %q", what, want[i].ID)
	}
}

func revocationIDs(rs []store.Revocation) []string {
	return idsOf(rs, func(r store.Revocation) string { return r.ID })
}

// RevokeAPIKey adds one item of kind RevokedAPIKey naming the key, at the
// revocation time; revoking it again adds nothing.
func testFeedAPIKeyRevoke(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := mustAPIKey(t, s, projA, "key_feed", base)
	feed := newFeedTracker(t, s, projA)
	require.Empty(t, feed.items, "the feed of a project where nothing was revoked")
	at := base.Add(time.Hour).In(elsewhere)
	require.NoErrorf(t, s.RevokeAPIKey(t.Context(), projA, k.ID, at), "RevokeAPIKey(%q)", k.ID)
	feed.added(t, store.RevokedAPIKey, k.ID, at, "RevokeAPIKey")
	require.NoErrorf(t, s.RevokeAPIKey(t.Context(), projA, k.ID, at.Add(time.Hour)), "RevokeAPIKey(%q) again, later", k.ID)
	require.NoErrorf(t, s.RevokeAPIKey(t.Context(), projA, k.ID, at), "RevokeAPIKey(%q) again, same time", k.ID)
	require.NoErrorf(t, s.RevokeAPIKey(t.Context(), projA, k.ID, at.Add(-time.Hour)), "RevokeAPIKey(%q) again, earlier", k.ID)
	feed.unchanged(t, "RevokeAPIKey of a revoked key")
	wantTime(t, at, mustGetAPIKey(t, s, projA, k.ID).RevokedAt, "RevokedAt after revoking again")
}

// RetireSigningKey adds one item of kind RevokedSigningKey naming the key;
// retiring it again adds nothing, nor does a refused retire.
func testFeedSigningKeyRetire(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	old := mustSigningKey(t, s, projA, "sk_old", base)
	active := mustSigningKey(t, s, projA, "sk_new", base.Add(time.Hour))
	feed := newFeedTracker(t, s, projA)
	require.ErrorIsf(t, s.RetireSigningKey(t.Context(), projA, active.ID, base.Add(2*time.Hour)), store.ErrConflict, "RetireSigningKey(%q) of the active key", active.ID)
	feed.unchanged(t, "a refused RetireSigningKey of the active key")
	at := base.Add(2 * time.Hour).In(elsewhere)
	require.NoErrorf(t, s.RetireSigningKey(t.Context(), projA, old.ID, at), "RetireSigningKey(%q)", old.ID)
	feed.added(t, store.RevokedSigningKey, old.ID, at, "RetireSigningKey")
	require.NoErrorf(t, s.RetireSigningKey(t.Context(), projA, old.ID, at.Add(time.Hour)), "RetireSigningKey(%q) again", old.ID)
	feed.unchanged(t, "RetireSigningKey of a retired key")
}

// RevokeRefreshFamily adds one item of kind RevokedSession naming the
// family (the sid); revoking it again adds nothing.
func testFeedSessionRevoke(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	feed := newFeedTracker(t, s, projA)
	at := base.Add(time.Hour).In(elsewhere)
	require.NoErrorf(t, s.RevokeRefreshFamily(t.Context(), projA, f.ID, at), "RevokeRefreshFamily(%q)", f.ID)
	feed.added(t, store.RevokedSession, f.ID, at, "RevokeRefreshFamily")
	require.NoErrorf(t, s.RevokeRefreshFamily(t.Context(), projA, f.ID, at.Add(time.Hour)), "RevokeRefreshFamily(%q) again", f.ID)
	feed.unchanged(t, "RevokeRefreshFamily of a revoked family")
	// A replay presented to the revoked family adds nothing either.
	_, err := s.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(at.Add(2*time.Hour)))
	require.ErrorIs(t, err, store.ErrRevoked, "RotateRefresh of a revoked family")
	feed.unchanged(t, "RotateRefresh of a revoked family")
}

// A replay revokes the family and adds one item of kind RevokedSession at
// p.Now; further replays add nothing; a reuse within the window adds
// nothing.
func testFeedSessionReplay(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	feed := newFeedTracker(t, s, projA)
	first := rotateParams(base.Add(time.Minute))
	rotate(t, s, f, 0, first)
	rotate(t, s, f, 0, rotateParams(first.Now.Add(time.Second))) // a reuse
	feed.unchanged(t, "a rotation and a reuse")
	late := first.Now.Add(time.Hour)
	_, err := s.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(late))
	require.ErrorIsf(t, err, store.ErrReplayed, "RotateRefresh(gen 0) after the window")
	feed.added(t, store.RevokedSession, f.ID, late, "a replay")
	_, err = s.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(late.Add(time.Minute)))
	wantErrAny(t, err, []error{store.ErrRevoked, store.ErrReplayed}, "RotateRefresh(gen 0) replayed again")
	_, err = s.RotateRefresh(t.Context(), projA, f.ID, 1, rotateParams(late.Add(time.Minute)))
	require.ErrorIsf(t, err, store.ErrRevoked, "RotateRefresh(gen 1) after the replay")
	require.NoErrorf(t, s.RevokeRefreshFamily(t.Context(), projA, f.ID, late.Add(time.Hour)), "RevokeRefreshFamily after the replay")
	feed.unchanged(t, "calls on a family a replay revoked")
}

// DisableUser adds one item of kind RevokedUser naming the user, and none
// for the sessions it ends; disabling again adds nothing, nor does
// EnableUser.
func testFeedUserDisable(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "feed@example.com")
	for i := range 3 {
		mustFamilyOf(t, s, u, base.Add(time.Duration(i)*time.Minute), 24*time.Hour)
	}
	feed := newFeedTracker(t, s, projA)
	at := base.Add(time.Hour).In(elsewhere)
	require.NoErrorf(t, s.DisableUser(t.Context(), projA, u.ID, at), "DisableUser(%q)", u.ID)
	feed.added(t, store.RevokedUser, u.ID, at, "DisableUser of a user with three sessions")
	require.NoErrorf(t, s.DisableUser(t.Context(), projA, u.ID, at.Add(time.Hour)), "DisableUser(%q) again", u.ID)
	feed.unchanged(t, "DisableUser of a disabled user")
	require.NoErrorf(t, s.EnableUser(t.Context(), projA, u.ID), "EnableUser(%q)", u.ID)
	feed.unchanged(t, "EnableUser")
	// Disabled again after enabling: a new revocation, a new item.
	again := at.Add(2 * time.Hour)
	require.NoErrorf(t, s.DisableUser(t.Context(), projA, u.ID, again), "DisableUser(%q) after EnableUser", u.ID)
	feed.added(t, store.RevokedUser, u.ID, again, "DisableUser after EnableUser")
}

// Calls that fail (unknown rows, another project's rows, invalid
// arguments, a refused retire) add nothing to any feed.
func testFeedFailedCallsAddNothing(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	u := mustUser(t, s, projA, "owner@example.com")
	f := mustFamilyOf(t, s, u, base, time.Hour)
	k := mustAPIKey(t, s, projA, "key_a", base)
	sk := mustSigningKey(t, s, projA, "sk_a", base)
	feedA, feedB := newFeedTracker(t, s, projA), newFeedTracker(t, s, projB)
	at := base.Add(time.Minute)

	require.ErrorIs(t, s.RevokeAPIKey(t.Context(), projB, k.ID, at), store.ErrNotFound, "RevokeAPIKey through another project")
	require.ErrorIs(t, s.RevokeAPIKey(t.Context(), projA, "key_none", at), store.ErrNotFound, "RevokeAPIKey of an unknown key")
	require.ErrorIs(t, s.RevokeAPIKey(t.Context(), projA, k.ID, time.Time{}), store.ErrInvalid, "RevokeAPIKey with a zero time")
	require.ErrorIs(t, s.RetireSigningKey(t.Context(), projA, sk.ID, at), store.ErrConflict, "RetireSigningKey of the active key")
	require.ErrorIs(t, s.RetireSigningKey(t.Context(), projB, sk.ID, at), store.ErrNotFound, "RetireSigningKey through another project")
	require.ErrorIs(t, s.RevokeRefreshFamily(t.Context(), projB, f.ID, at), store.ErrNotFound, "RevokeRefreshFamily through another project")
	require.ErrorIs(t, s.RevokeRefreshFamily(t.Context(), projA, f.ID, time.Time{}), store.ErrInvalid, "RevokeRefreshFamily with a zero time")
	require.ErrorIs(t, s.DisableUser(t.Context(), projB, u.ID, at), store.ErrNotFound, "DisableUser through another project")
	require.ErrorIs(t, s.DisableUser(t.Context(), projA, store.NewID(store.PrefixUser), at), store.ErrNotFound, "DisableUser of an unknown user")
	require.ErrorIs(t, s.DisableUser(t.Context(), projA, u.ID, time.Time{}), store.ErrInvalid, "DisableUser with a zero time")
	rotate(t, s, f, 0, rotateParams(at))
	_, err := s.RotateRefresh(t.Context(), projB, f.ID, 0, rotateParams(at.Add(time.Hour)))
	require.ErrorIs(t, err, store.ErrNotFound, "a replay through another project")
	_, err = s.RotateRefresh(t.Context(), projA, f.ID, 0, store.RotateParams{Now: at.Add(time.Hour)})
	require.ErrorIs(t, err, store.ErrInvalid, "a replay with a zero TTL")
	_, err = s.RotateRefresh(t.Context(), projA, f.ID, 5, rotateParams(at.Add(time.Hour)))
	require.ErrorIs(t, err, store.ErrNotFound, "a future generation")
	feedA.unchanged(t, "failed revocations in project A")
	feedB.unchanged(t, "failed revocations through project B")
	require.True(t, mustGetFamily(t, s, projA, f.ID).RevokedAt.IsZero(), "the family after failed revocations")
	require.False(t, mustGetUser(t, s, projA, u.ID).Disabled(), "the user after failed disables")
}

// revokeKeys creates and revokes API keys in project at the times given,
// one key each, and returns the items the feed gained, checked one by one.
func revokeKeys(t *testing.T, s store.Store, feed *feedTracker, times []time.Time) []store.Revocation {
	t.Helper()
	var items []store.Revocation
	for _, at := range times {
		k := mustAPIKey(t, s, feed.project, store.NewID(store.PrefixAPIKey), base.Add(-time.Hour))
		require.NoErrorf(t, s.RevokeAPIKey(t.Context(), feed.project, k.ID, at), "RevokeAPIKey(%q)", k.ID)
		items = append(items, feed.added(t, store.RevokedAPIKey, k.ID, at, fmt.Sprintf("RevokeAPIKey(%q, %s)", k.ID, at.Format(time.RFC3339Nano))))
	}
	return items
}

// ListRevocations lists in ascending (RevokedAt, ID) order, each kind of
// item among the others.
func testFeedOrder(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	feed := newFeedTracker(t, s, projA)
	u := mustUser(t, s, projA, "order@example.com")
	f := mustFamilyOf(t, s, u, base, time.Hour)
	v := mustUser(t, s, projA, "order2@example.com")
	g := mustFamilyOf(t, s, v, base, time.Hour)
	mustSigningKey(t, s, projA, "sk_old", base)
	mustSigningKey(t, s, projA, "sk_new", base.Add(time.Second))
	revokeKeys(t, s, feed, []time.Time{base.Add(time.Minute)})
	require.NoError(t, s.RevokeRefreshFamily(t.Context(), projA, f.ID, base.Add(2*time.Minute)), "RevokeRefreshFamily")
	feed.added(t, store.RevokedSession, f.ID, base.Add(2*time.Minute), "RevokeRefreshFamily")
	require.NoError(t, s.RetireSigningKey(t.Context(), projA, "sk_old", base.Add(3*time.Minute)), "RetireSigningKey")
	feed.added(t, store.RevokedSigningKey, "sk_old", base.Add(3*time.Minute), "RetireSigningKey")
	require.NoError(t, s.DisableUser(t.Context(), projA, u.ID, base.Add(4*time.Minute)), "DisableUser")
	feed.added(t, store.RevokedUser, u.ID, base.Add(4*time.Minute), "DisableUser")
	rotate(t, s, g, 0, rotateParams(base.Add(5*time.Minute)))
	_, err := s.RotateRefresh(t.Context(), projA, g.ID, 0, rotateParams(base.Add(6*time.Minute)))
	require.ErrorIs(t, err, store.ErrReplayed, "a replay")
	feed.added(t, store.RevokedSession, g.ID, base.Add(6*time.Minute), "a replay")
	revokeKeys(t, s, feed, []time.Time{base.Add(7 * time.Minute)})

	kinds := make([]store.RevocationKind, len(feed.items))
	for i, r := range feed.items {
		kinds[i] = r.Kind
	}
	require.Equal(t, []store.RevocationKind{store.RevokedAPIKey, store.RevokedSession, store.RevokedSigningKey, store.RevokedUser, store.RevokedSession, store.RevokedAPIKey},
		kinds, "kinds of the feed's items, in order")
	ids := map[string]bool{}
	for _, r := range feed.items {
		require.Falsef(t, ids[r.ID], "item id %q repeated", r.ID)
		ids[r.ID] = true
	}
}

// Paging through the feed with any page size returns every item exactly
// once, in order, also when items share a microsecond.
func testFeedPages(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	feed := newFeedTracker(t, s, projA)
	var times []time.Time
	for i := range 31 {
		// Groups of three given one microsecond.
		times = append(times, base.Add(time.Duration(i/3)*time.Millisecond).Add(time.Duration(i%3)*100*time.Nanosecond))
	}
	revokeKeys(t, s, feed, times)
	want := feed.items
	for _, limit := range []int{1, 2, 3, 4, 7, 30, 31, 32, paginate.MaxLimit} {
		wantRevocations(t, want, feedList(s, projA).walk(t, limit, nil), fmt.Sprintf("walk of the feed with limit %d", limit))
	}
}

// ListRevocations reads one item ahead: with exactly limit items left
// HasMore is false, with one more it is true.
func testFeedLookAhead(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	feed := newFeedTracker(t, s, projA)
	all := revokeKeys(t, s, feed, []time.Time{base, base.Add(time.Second), base.Add(2 * time.Second), base.Add(3 * time.Second), base.Add(4 * time.Second)})
	l := feedList(s, projA)
	cases := []struct {
		after, limit, want int
		hasMore            bool
	}{
		{-1, 5, 5, false}, {-1, 6, 5, false}, {-1, 4, 4, true}, {-1, 1, 1, true},
		{1, 3, 3, false}, {1, 2, 2, true}, {3, 1, 1, false}, {4, 1, 0, false}, {4, 100, 0, false},
	}
	for _, c := range cases {
		req := paginate.Request{Limit: c.limit}
		start := 0
		if c.after >= 0 {
			req.After = textCursor(t, revocationPos(all[c.after]))
			start = c.after + 1
		}
		page := l.page(t, req)
		what := fmt.Sprintf("ListRevocations(limit %d, after %q)", c.limit, req.After.String())
		wantRevocations(t, all[start:start+c.want], page.Items, what)
		require.Equalf(t, c.hasMore, page.HasMore, "%s.HasMore", what)
	}
}

// A cursor is a position: the page holds the items strictly after it,
// whether or not it names an item.
func testFeedCursorNamesNoItem(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	feed := newFeedTracker(t, s, projA)
	at := store.Truncate(base.Add(time.Hour))
	all := revokeKeys(t, s, feed, []time.Time{at.Add(-time.Second), at, at.Add(time.Second)})
	list := func(id string, at time.Time) []store.Revocation {
		return feedList(s, projA).page(t, paginate.Request{Limit: 100, After: paginate.Cursor{ID: id, CreatedAt: at}}).Items
	}
	wantRevocations(t, all[1:], list("rev_", all[1].RevokedAt), "after (the second item's time, rev_)")
	wantRevocations(t, all[1:], list("rev_~", all[0].RevokedAt), "after (the first item's time, rev_~)")
	wantRevocations(t, all[2:], list("rev_~", all[1].RevokedAt), "after (the second item's time, rev_~)")
	wantRevocations(t, all, list("rev_", at.Add(-time.Hour)), "after a position before the start")
	wantRevocations(t, nil, list("rev_", at.Add(time.Hour)), "after a position past the end")
}

// An item given a time earlier than the newest item of the feed sorts after
// it: its RevokedAt is raised, by whole microseconds and only as far as
// needed, while the revoked key keeps the time given. An item given a later
// time keeps it.
func testFeedFloor(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	feed := newFeedTracker(t, s, projA)
	late := base.Add(time.Hour)
	revokeKeys(t, s, feed, []time.Time{late})
	// Earlier: raised. The key's own RevokedAt is the time given.
	k := mustAPIKey(t, s, projA, "key_early", base)
	require.NoError(t, s.RevokeAPIKey(t.Context(), projA, k.ID, base), "RevokeAPIKey with an earlier time")
	item := feed.added(t, store.RevokedAPIKey, k.ID, base, "RevokeAPIKey with a time an hour before the feed's newest item")
	require.Truef(t, item.RevokedAt.After(base), "the item was raised: RevokedAt %s", item.RevokedAt.Format(time.RFC3339Nano))
	wantTime(t, base, mustGetAPIKey(t, s, projA, k.ID).RevokedAt, "the key's RevokedAt (the time given, not the item's)")
	// The same microsecond as the newest item, and nanoseconds earlier.
	revokeKeys(t, s, feed, []time.Time{feed.top.CreatedAt, feed.top.CreatedAt.Add(-time.Nanosecond), feed.top.CreatedAt.Add(-time.Minute)})
	// Other kinds follow the same floor.
	u := mustUser(t, s, projA, "floor@example.com")
	f := mustFamilyOf(t, s, u, base, 24*time.Hour)
	require.NoError(t, s.RevokeRefreshFamily(t.Context(), projA, f.ID, base), "RevokeRefreshFamily with an earlier time")
	feed.added(t, store.RevokedSession, f.ID, base, "RevokeRefreshFamily with an earlier time")
	wantTime(t, base, mustGetFamily(t, s, projA, f.ID).RevokedAt, "the family's RevokedAt (the time given)")
	require.NoError(t, s.DisableUser(t.Context(), projA, u.ID, base), "DisableUser with an earlier time")
	feed.added(t, store.RevokedUser, u.ID, base, "DisableUser with an earlier time")
	wantTime(t, base, mustGetUser(t, s, projA, u.ID).DisabledAt, "the user's DisabledAt (the time given)")
	mustSigningKey(t, s, projA, "sk_old", base)
	mustSigningKey(t, s, projA, "sk_new", base.Add(time.Second))
	require.NoError(t, s.RetireSigningKey(t.Context(), projA, "sk_old", base), "RetireSigningKey with an earlier time")
	feed.added(t, store.RevokedSigningKey, "sk_old", base, "RetireSigningKey with an earlier time")
	wantTime(t, base, mustGetSigningKey(t, s, projA, "sk_old").RetiredAt, "the signing key's RetiredAt (the time given)")
	// Later than everything: kept.
	revokeKeys(t, s, feed, []time.Time{late.Add(time.Hour)})
	wantRevocations(t, feed.items, feedList(s, projA).walk(t, 2, nil), "walk of the feed with limit 2")
}

// The floor is the project's own: a newer item in another project does
// not raise an item.
func testFeedFloorPerProject(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	feedA, feedB := newFeedTracker(t, s, projA), newFeedTracker(t, s, projB)
	revokeKeys(t, s, feedB, []time.Time{base.Add(24 * time.Hour)})
	revokeKeys(t, s, feedA, []time.Time{base, base.Add(time.Second)})
	feedB.unchanged(t, "project B after revocations in project A")
}

// The floor counts items pruned since: a reader that saw an item keeps
// seeing every later item after it, even once the item it saw is gone.
func testFeedFloorAfterPrune(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	feed := newFeedTracker(t, s, projA)
	u := mustUser(t, s, projA, "prune@example.com")
	f := mustFamilyOf(t, s, u, base, 24*time.Hour)
	at := base.Add(time.Hour)
	require.NoError(t, s.RevokeRefreshFamily(t.Context(), projA, f.ID, at), "RevokeRefreshFamily")
	seen := feed.added(t, store.RevokedSession, f.ID, at, "RevokeRefreshFamily")
	n, err := s.PruneSessionRevocations(t.Context(), at.Add(time.Hour))
	require.NoError(t, err, "PruneSessionRevocations")
	require.Equal(t, 1, n, "PruneSessionRevocations: items deleted")
	feed.reload(t)
	require.Empty(t, feed.items, "the feed after pruning its only item")
	// A revocation given a time before the pruned item's still sorts
	// after it, so the reader holding its cursor sees it.
	revokeKeys(t, s, feed, []time.Time{base})
	page := feedList(s, projA).page(t, paginate.Request{Limit: 10, After: textCursor(t, revocationPos(seen))})
	wantRevocations(t, feed.items, page.Items, "the page after the pruned item's cursor")
}

// Another project's items never appear, and a cursor taken in one project
// is only a position in another.
func testFeedOtherProject(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	feedA, feedB := newFeedTracker(t, s, projA), newFeedTracker(t, s, projB)
	var timesA, timesB []time.Time
	for i := range 5 {
		timesA = append(timesA, base.Add(time.Duration(2*i)*time.Second))
		timesB = append(timesB, base.Add(time.Duration(2*i+1)*time.Second))
	}
	itemsA := revokeKeys(t, s, feedA, timesA)
	itemsB := revokeKeys(t, s, feedB, timesB)
	wantRevocations(t, itemsA, feedList(s, projA).walk(t, 2, nil), "walk of project A's feed")
	wantRevocations(t, itemsB, feedList(s, projB).walk(t, 2, nil), "walk of project B's feed")
	page := feedList(s, projB).page(t, paginate.Request{Limit: 100, After: textCursor(t, revocationPos(itemsA[2]))})
	wantRevocations(t, itemsB[2:], page.Items, "project B's feed after a cursor of project A")
}

// An unknown project's feed is empty.
func testFeedUnknownProject(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	revokeKeys(t, s, newFeedTracker(t, s, projA), []time.Time{base})
	for _, req := range []paginate.Request{{Limit: 1}, {Limit: 100, After: paginate.Cursor{ID: "rev_x", CreatedAt: store.Truncate(base.Add(-time.Hour))}}} {
		page := feedList(s, "no-such-project").page(t, req)
		require.Empty(t, page.Items, "ListRevocations of an unknown project")
		require.False(t, page.HasMore, "ListRevocations of an unknown project: HasMore")
	}
}

// A limit below 1 or an invalid project id is ErrInvalid.
func testFeedInvalid(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	revokeKeys(t, s, newFeedTracker(t, s, projA), []time.Time{base})
	for _, limit := range []int{0, -1} {
		_, err := s.ListRevocations(t.Context(), projA, paginate.Request{Limit: limit})
		require.ErrorIsf(t, err, store.ErrInvalid, "ListRevocations(%q, limit %d)", projA, limit)
	}
	for _, p := range []string{"", "Proj A", "-x"} {
		_, err := s.ListRevocations(t.Context(), p, paginate.Request{Limit: 10})
		require.ErrorIsf(t, err, store.ErrInvalid, "ListRevocations(%q)", p)
	}
	_, err := s.PruneSessionRevocations(t.Context(), time.Time{})
	require.ErrorIs(t, err, store.ErrInvalid, "PruneSessionRevocations(zero time)")
}

// PruneSessionRevocations deletes the session items, of every project,
// revoked before the time given, and keeps every other item.
func testFeedPruneSessions(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	feedA, feedB := newFeedTracker(t, s, projA), newFeedTracker(t, s, projB)
	u := mustUser(t, s, projA, "pruned@example.com")
	v := mustUser(t, s, projB, "pruned@example.com")
	cut := aligned.Add(time.Hour)
	session := func(feed *feedTracker, u store.User, at time.Time) store.Revocation {
		t.Helper()
		f := mustFamilyOf(t, s, u, aligned.Add(-time.Hour), 48*time.Hour)
		require.NoError(t, s.RevokeRefreshFamily(t.Context(), u.ProjectID, f.ID, at), "RevokeRefreshFamily")
		return feed.added(t, store.RevokedSession, f.ID, at, "RevokeRefreshFamily")
	}
	// In time order, so that the floor raises nothing.
	oldKey := revokeKeys(t, s, feedA, []time.Time{aligned})[0]
	session(feedA, u, aligned.Add(time.Minute))
	session(feedB, v, aligned.Add(time.Minute))
	mustSigningKey(t, s, projA, "sk_old", aligned)
	mustSigningKey(t, s, projA, "sk_new", aligned.Add(time.Second))
	require.NoError(t, s.RetireSigningKey(t.Context(), projA, "sk_old", aligned.Add(2*time.Minute)), "RetireSigningKey")
	oldRetire := feedA.added(t, store.RevokedSigningKey, "sk_old", aligned.Add(2*time.Minute), "RetireSigningKey")
	w := mustUser(t, s, projA, "disabled@example.com")
	require.NoError(t, s.DisableUser(t.Context(), projA, w.ID, aligned.Add(3*time.Minute)), "DisableUser")
	oldUser := feedA.added(t, store.RevokedUser, w.ID, aligned.Add(3*time.Minute), "DisableUser")
	atCut := session(feedA, u, cut) // exactly at the cut: kept
	newA := session(feedA, u, cut.Add(time.Minute))

	n, err := s.PruneSessionRevocations(t.Context(), cut.In(elsewhere))
	require.NoError(t, err, "PruneSessionRevocations")
	require.Equal(t, 2, n, "PruneSessionRevocations: items deleted (a session item of each project)")
	wantRevocations(t, []store.Revocation{oldKey, oldRetire, oldUser, atCut, newA}, feedList(s, projA).all(t), "project A's feed after the prune")
	wantRevocations(t, []store.Revocation{}, feedList(s, projB).all(t), "project B's feed after the prune")
	n, err = s.PruneSessionRevocations(t.Context(), cut)
	require.NoError(t, err, "PruneSessionRevocations again")
	require.Equal(t, 0, n, "PruneSessionRevocations again: items deleted")
	n, err = s.PruneSessionRevocations(t.Context(), cut.Add(24*time.Hour))
	require.NoError(t, err, "PruneSessionRevocations later")
	require.Equal(t, 2, n, "PruneSessionRevocations later: the remaining session items")
	wantRevocations(t, []store.Revocation{oldKey, oldRetire, oldUser}, feedList(s, projA).all(t), "project A's feed: the other kinds are kept")
}
