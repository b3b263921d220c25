package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

// EndUserSessions revokes every session of the user that is not revoked at
// at, expired ones and ones past their EndsAt included (a session revoked
// before keeps its time), deletes the user's console sessions, adds
// one item of kind RevokedSession for each session it revoked and no other,
// and leaves the user enabled, other users' sessions live, and later
// sessions of the user possible. A user with no live session gets no
// item. An unknown user is ErrNotFound and a zero at ErrInvalid, and
// neither adds anything.
func testFeedUserEndSessions(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "reset@example.com")
	other := mustUser(t, s, projA, "other@example.com")
	// Every session that is not revoked ends, expired ones and ones past
	// their EndsAt included.
	pastEnd := newFamily(projA, u.ID, base, 24*time.Hour)
	pastEnd.EndsAt = base.Add(10 * time.Minute)
	require.NoError(t, s.CreateRefreshFamily(t.Context(), pastEnd, userHash), "CreateRefreshFamily with an EndsAt")
	live := []store.RefreshFamily{
		mustFamilyOf(t, s, u, base, 24*time.Hour),
		mustFamilyOf(t, s, u, base.Add(time.Minute), 24*time.Hour),
		mustFamilyOf(t, s, u, base, time.Minute), // expired
		pastEnd,
	}
	ended := mustFamilyOf(t, s, u, base.Add(2*time.Minute), 24*time.Hour)
	endedAt := base.Add(3 * time.Minute)
	require.NoError(t, s.RevokeRefreshFamily(t.Context(), projA, ended.ID, endedAt), "RevokeRefreshFamily")
	others := mustFamilyOf(t, s, other, base, 24*time.Hour)
	cs := mustConsoleSession(t, s, projA, "console of reset", u.ID, base)
	otherCS := mustConsoleSession(t, s, projA, "console of other", other.ID, base)
	feed := newFeedTracker(t, s, projA)

	at := base.Add(time.Hour).In(elsewhere)
	require.NoErrorf(t, s.EndUserSessions(t.Context(), projA, u.ID, at), "EndUserSessions(%q)", u.ID)
	var ends []wantItem
	for _, f := range live {
		ends = append(ends, wantItem{store.RevokedSession, f.ID})
	}
	feed.addedAll(t, ends, at, "EndUserSessions of a user with four sessions not revoked")
	for _, f := range live {
		wantTime(t, at, mustGetFamily(t, s, projA, f.ID).RevokedAt, "RevokedAt of a session EndUserSessions ended")
	}
	wantTime(t, endedAt, mustGetFamily(t, s, projA, ended.ID).RevokedAt, "RevokedAt of a session revoked before EndUserSessions")
	wantZeroTime(t, mustGetFamily(t, s, projA, others.ID).RevokedAt, "RevokedAt of another user's session")
	_, err := s.GetConsoleSession(t.Context(), projA, cs.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "GetConsoleSession of the user's console session after EndUserSessions")
	mustGetConsoleSession(t, s, projA, otherCS.ID)
	got, err := s.GetUser(t.Context(), projA, u.ID)
	require.NoError(t, err, "GetUser")
	wantZeroTime(t, got.DisabledAt, "DisabledAt after EndUserSessions")

	later := mustFamilyOf(t, s, u, at.Add(time.Minute), 24*time.Hour)
	_, err = s.RotateRefresh(t.Context(), projA, later.ID, 0, rotateParams(at.Add(2*time.Minute)))
	require.NoError(t, err, "RotateRefresh of a session started after EndUserSessions")

	require.NoError(t, s.EndUserSessions(t.Context(), projA, other.ID, at.Add(time.Minute)), "EndUserSessions of another user")
	feed.addedAll(t, []wantItem{{store.RevokedSession, others.ID}}, at.Add(time.Minute), "EndUserSessions of a user with one live session")
	require.NoError(t, s.EndUserSessions(t.Context(), projA, other.ID, at.Add(2*time.Minute)), "EndUserSessions again")
	feed.unchanged(t, "EndUserSessions of a user with no live session")

	err = s.EndUserSessions(t.Context(), projA, store.NewID(store.PrefixUser), at)
	require.ErrorIs(t, err, store.ErrNotFound, "EndUserSessions of an unknown user")
	err = s.EndUserSessions(t.Context(), projA, u.ID, time.Time{})
	require.ErrorIs(t, err, store.ErrInvalid, "EndUserSessions at the zero time")
	feed.unchanged(t, "failed EndUserSessions calls")
}
