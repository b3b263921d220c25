package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

func refreshCases() []testCase {
	return []testCase{
		{"CreateGet", testRefreshCreateGet},
		{"CreateInvalid", testRefreshCreateInvalid},
		{"CreateUnknown", testRefreshCreateUnknown},
		{"CreateDuplicate", testRefreshCreateDuplicate},
		{"Rotate", testRefreshRotate},
		{"RotateReturnsUser", testRefreshRotateReturnsUser},
		{"ReuseWithinWindow", testRefreshReuseWithinWindow},
		{"ReuseWindowBoundary", testRefreshReuseWindowBoundary},
		{"ReplayAfterWindow", testRefreshReplayAfterWindow},
		{"WindowZero", testRefreshWindowZero},
		{"OlderGeneration", testRefreshOlderGeneration},
		{"Expired", testRefreshExpired},
		{"UnknownFamily", testRefreshUnknownFamily},
		{"OtherProject", testRefreshOtherProject},
		{"FutureGeneration", testRefreshFutureGeneration},
		{"InvalidParams", testRefreshInvalidParams},
		{"Revoke", testRefreshRevoke},
		{"RevokedPredecessor", testRefreshRevokedPredecessor},
		{"RevokeZeroTime", testRefreshRevokeZeroTime},
		{"CreateDisabledUser", testRefreshCreateDisabledUser},
		{"CreateAfterPasswordChange", testRefreshCreateAfterPasswordChange},
		{"RotateDisabledUser", testRefreshRotateDisabledUser},
		{"EndsAtRoundTrip", testRefreshEndsAtRoundTrip},
		{"EndsAtCapsExpiry", testRefreshEndsAtCapsExpiry},
		{"EndsAtEndsRotation", testRefreshEndsAtEndsRotation},
		{"ScheduleSessionEnd", testRefreshScheduleSessionEnd},
		{"ScheduleSessionEndUnknown", testRefreshScheduleSessionEndUnknown},
		{"PruneRevoked", testRefreshPruneRevoked},
		{"PruneExpired", testRefreshPruneExpired},
		{"PruneEnded", testRefreshPruneEnded},
		{"PrunedNeverValid", testRefreshPrunedNeverValid},
		{"PruneInvalid", testRefreshPruneInvalid},
	}
}

func rotate(t *testing.T, s store.RefreshStore, f store.RefreshFamily, gen int64, p store.RotateParams) store.Rotation {
	t.Helper()
	r, err := s.RotateRefresh(t.Context(), f.ProjectID, f.ID, gen, p)
	require.NoErrorf(t, err, "RotateRefresh(%q, gen %d, now %s)", f.ID, gen, p.Now.Format(time.RFC3339Nano))
	return r
}

// successor is f after a fresh rotation at p: issued at p.Now, expiring
// p.TTL later or at EndsAt if that is earlier.
func successor(f store.RefreshFamily, p store.RotateParams) store.RefreshFamily {
	f.Generation++
	f.IssuedAt = p.Now
	f.ExpiresAt = p.Now.Add(p.TTL)
	if !f.EndsAt.IsZero() && f.EndsAt.Before(f.ExpiresAt) {
		f.ExpiresAt = f.EndsAt
	}
	return f
}

// CreateRefreshFamily records generation 0; GetRefreshFamily returns it.
func testRefreshCreateGet(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "rt@example.com")
	f := newFamily(projA, u.ID, base.In(elsewhere), 30*24*time.Hour)
	require.NoErrorf(t, s.CreateRefreshFamily(t.Context(), f, userHash), "CreateRefreshFamily(%q)", f.ID)
	got := mustGetFamily(t, s, projA, f.ID)
	wantFamily(t, f, got, "GetRefreshFamily of a new family")
	require.EqualValues(t, 0, got.Generation)
	wantZeroTime(t, got.RevokedAt, "RevokedAt of a new family")

	// Several families of one user are independent.
	g := newFamily(projA, u.ID, base.Add(time.Minute), time.Hour)
	require.NoErrorf(t, s.CreateRefreshFamily(t.Context(), g, userHash), "CreateRefreshFamily(%q)", g.ID)
	rotate(t, s, g, 0, rotateParams(base.Add(2*time.Minute)))
	wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "a family after another family of its user rotated")
}

// Empty ids, a non-zero generation and invalid project ids are ErrInvalid
// and store nothing.
func testRefreshCreateInvalid(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "rt@example.com")
	noID := newFamily(projA, u.ID, base, time.Hour)
	noID.ID = ""
	require.ErrorIsf(t, s.CreateRefreshFamily(t.Context(), noID, userHash), store.ErrInvalid, "CreateRefreshFamily with an empty id")
	noUser := newFamily(projA, "", base, time.Hour)
	require.ErrorIsf(t, s.CreateRefreshFamily(t.Context(), noUser, userHash), store.ErrInvalid, "CreateRefreshFamily with an empty user id")
	_, err := s.GetRefreshFamily(t.Context(), projA, noUser.ID)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetRefreshFamily(%q) after a rejected create", noUser.ID)
	for _, gen := range []int64{1, -1, 7} {
		f := newFamily(projA, u.ID, base, time.Hour)
		f.Generation = gen
		require.ErrorIsf(t, s.CreateRefreshFamily(t.Context(), f, userHash), store.ErrInvalid, "CreateRefreshFamily with Generation %d", gen)
		_, err = s.GetRefreshFamily(t.Context(), projA, f.ID)
		require.ErrorIsf(t, err, store.ErrNotFound, "GetRefreshFamily(%q) after a rejected create", f.ID)
	}
	for _, p := range []string{"", "Proj A"} {
		f := newFamily(p, u.ID, base, time.Hour)
		require.ErrorIsf(t, s.CreateRefreshFamily(t.Context(), f, userHash), store.ErrInvalid, "CreateRefreshFamily in project %q", p)
		_, err = s.GetRefreshFamily(t.Context(), p, f.ID)
		require.ErrorIsf(t, err, store.ErrInvalid, "GetRefreshFamily(%q, ...)", p)
		_, err = s.RotateRefresh(t.Context(), p, f.ID, 0, rotateParams(base))
		require.ErrorIsf(t, err, store.ErrInvalid, "RotateRefresh(%q, ...)", p)
		require.ErrorIsf(t, s.RevokeRefreshFamily(t.Context(), p, f.ID, base), store.ErrInvalid, "RevokeRefreshFamily(%q, ...)", p)
	}
	_, err = s.GetRefreshFamily(t.Context(), projA, "")
	require.ErrorIsf(t, err, store.ErrInvalid, "GetRefreshFamily(%q, \"\")", projA)
	_, err = s.RotateRefresh(t.Context(), projA, "", 0, rotateParams(base))
	require.ErrorIsf(t, err, store.ErrInvalid, "RotateRefresh(%q, \"\")", projA)
	require.ErrorIsf(t, s.RevokeRefreshFamily(t.Context(), projA, "", base), store.ErrInvalid, "RevokeRefreshFamily(%q, \"\")", projA)
}

// CreateRefreshFamily returns ErrNotFound for an unknown project, an unknown
// user, or a user of another project.
func testRefreshCreateUnknown(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	u := mustUser(t, s, projA, "rt@example.com")
	f := newFamily("no-such-project", u.ID, base, time.Hour)
	require.ErrorIsf(t, s.CreateRefreshFamily(t.Context(), f, userHash), store.ErrNotFound, "CreateRefreshFamily in an unknown project")
	f = newFamily(projA, store.NewID(store.PrefixUser), base, time.Hour)
	require.ErrorIsf(t, s.CreateRefreshFamily(t.Context(), f, userHash), store.ErrNotFound, "CreateRefreshFamily for an unknown user")
	_, err := s.GetRefreshFamily(t.Context(), projA, f.ID)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetRefreshFamily(%q) after a rejected create", f.ID)
	f = newFamily(projB, u.ID, base, time.Hour)
	require.ErrorIsf(t, s.CreateRefreshFamily(t.Context(), f, userHash), store.ErrNotFound, "CreateRefreshFamily in %q for a user of %q", projB, projA)
	_, err = s.GetRefreshFamily(t.Context(), projB, f.ID)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetRefreshFamily(%q) after a rejected create", f.ID)
}

// CreateRefreshFamily returns ErrConflict for an existing id and keeps the
// first family.
func testRefreshCreateDuplicate(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	dup := f
	dup.ExpiresAt = f.ExpiresAt.Add(time.Hour)
	dup.IssuedAt = f.IssuedAt.Add(time.Hour)
	require.ErrorIsf(t, s.CreateRefreshFamily(t.Context(), dup, userHash), store.ErrConflict, "CreateRefreshFamily(%q) with an existing id", f.ID)
	wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily after a conflicting create")

	// Even after the family has rotated.
	r := rotate(t, s, f, 0, rotateParams(base.Add(time.Minute)))
	require.ErrorIsf(t, s.CreateRefreshFamily(t.Context(), f, userHash), store.ErrConflict, "CreateRefreshFamily(%q) of a rotated family", f.ID)
	wantFamily(t, r.Family, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily after a conflicting create of a rotated family")
}

// Rotating the current generation makes the next one, issued at p.Now and
// expiring at p.Now+p.TTL, with Reused false.
func testRefreshRotate(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	p := store.RotateParams{Now: base.Add(time.Hour).In(elsewhere), TTL: 7 * 24 * time.Hour, ReuseWindow: 10 * time.Second}
	r := rotate(t, s, f, 0, p)
	require.False(t, r.Reused, "Reused of a first rotation")
	want := successor(f, p)
	wantFamily(t, want, r.Family, "RotateRefresh(gen 0).Family")
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily after rotation")

	p2 := store.RotateParams{Now: base.Add(2 * time.Hour), TTL: time.Hour, ReuseWindow: 10 * time.Second}
	r = rotate(t, s, f, 1, p2)
	require.False(t, r.Reused, "Reused of the second rotation")
	want = successor(want, p2)
	wantFamily(t, want, r.Family, "RotateRefresh(gen 1).Family")
	require.EqualValues(t, 2, r.Family.Generation)
	for gen := int64(2); gen < 12; gen++ {
		p := rotateParams(base.Add(2*time.Hour + time.Duration(gen)*time.Second))
		r = rotate(t, s, f, gen, p)
		require.False(t, r.Reused)
		want = successor(want, p)
	}
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily after 12 rotations")
}

// A rotation, and a reuse within the window, return the family's user as
// GetUser returns it at that moment: its current tags, not those it had
// when the family was created.
func testRefreshRotateReturnsUser(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := newUser(projA, "rotating@example.com")
	u.Tags = []string{"member"}
	require.NoErrorf(t, s.CreateUser(t.Context(), u), "CreateUser(%q)", u.Email)
	f := mustFamilyOf(t, s, u, base, 30*24*time.Hour)
	mustUser(t, s, projA, "someone-else@example.com")

	first := rotateParams(base.Add(time.Minute))
	r := rotate(t, s, f, 0, first)
	wantUser(t, mustGetUser(t, s, projA, u.ID), r.User, "RotateRefresh(gen 0).User")

	require.NoErrorf(t, s.SetUserTags(t.Context(), projA, u.ID, []string{"admin", "member"}), "SetUserTags(%q)", u.ID)
	now := mustGetUser(t, s, projA, u.ID)
	require.Equal(t, []string{"admin", "member"}, now.Tags, "GetUser's tags after SetUserTags")
	reuse := rotateParams(first.Now.Add(time.Second))
	r = rotate(t, s, f, 0, reuse)
	require.True(t, r.Reused, "RotateRefresh(gen 0) again within the window: Reused")
	wantUser(t, now, r.User, "RotateRefresh(gen 0) within the window: User")
	r = rotate(t, s, f, 1, rotateParams(first.Now.Add(time.Minute)))
	require.False(t, r.Reused)
	wantUser(t, now, r.User, "RotateRefresh(gen 1) after SetUserTags: User")
}

// The generation just rotated, presented again within the window, gets the
// current family with Reused true and changes nothing, however often; a
// clock slightly behind the rotating one is within the window too.
func testRefreshReuseWithinWindow(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	first := rotateParams(base.Add(time.Minute))
	r := rotate(t, s, f, 0, first)
	require.False(t, r.Reused)
	want := successor(f, first)
	for _, d := range []time.Duration{0, time.Millisecond, 5 * time.Second, 9 * time.Second, -time.Second} {
		p := rotateParams(first.Now.Add(d))
		p.TTL = time.Hour // a reuse issues nothing, so its TTL does not matter
		r := rotate(t, s, f, 0, p)
		require.Truef(t, r.Reused, "RotateRefresh(gen 0) %s after its rotation: Reused = false, want true", d)
		wantFamily(t, want, r.Family, "RotateRefresh(gen 0) within the window: Family (the successor issued then)")
	}
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily after reuses")

	// The successor itself still rotates normally.
	next := rotateParams(first.Now.Add(20 * time.Second))
	r = rotate(t, s, f, 1, next)
	require.False(t, r.Reused)
	wantFamily(t, successor(want, next), r.Family, "RotateRefresh(gen 1) after reuses of gen 0")
}

// "No more than p.ReuseWindow before p.Now": exactly at the end of the
// window is still a reuse; a microsecond later is a replay.
func testRefreshReuseWindowBoundary(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	first := rotateParams(aligned.Add(time.Minute)) // no sub-microsecond part
	rotate(t, s, f, 0, first)
	r := rotate(t, s, f, 0, rotateParams(first.Now.Add(first.ReuseWindow)))
	require.True(t, r.Reused, "RotateRefresh(gen 0) exactly ReuseWindow after its rotation: Reused")
	require.EqualValues(t, 1, r.Family.Generation)
	late := first.Now.Add(first.ReuseWindow + time.Microsecond)
	_, err := s.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(late))
	require.ErrorIsf(t, err, store.ErrReplayed, "RotateRefresh(gen 0) ReuseWindow+1µs after its rotation")
	wantTime(t, late, mustGetFamily(t, s, projA, f.ID).RevokedAt, "RevokedAt after a replay")
}

// The predecessor presented after the window is a replay: ErrReplayed, and
// the whole family is revoked at p.Now, so the current generation is
// refused with ErrRevoked afterwards.
func testRefreshReplayAfterWindow(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	first := rotateParams(base.Add(time.Minute))
	r := rotate(t, s, f, 0, first)
	now := first.Now.Add(11 * time.Second)
	_, err := s.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(now))
	require.ErrorIsf(t, err, store.ErrReplayed, "RotateRefresh(gen 0) 11s after its rotation with a 10s window")

	want := r.Family
	want.RevokedAt = now
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily after a replay")

	later := now.Add(time.Second)
	_, err = s.RotateRefresh(t.Context(), projA, f.ID, 1, rotateParams(later))
	require.ErrorIsf(t, err, store.ErrRevoked, "RotateRefresh(gen 1), the current generation, after a replay revoked the family")
	_, err = s.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(later))
	wantErrAny(t, err, []error{store.ErrRevoked, store.ErrReplayed}, "RotateRefresh(gen 0) again on a revoked family")
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily after more attempts: the first revocation time is kept")
}

// A zero window makes every reuse a replay, even at the same instant.
func testRefreshWindowZero(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	p := store.RotateParams{Now: base.Add(time.Minute), TTL: time.Hour}
	r := rotate(t, s, f, 0, p)
	require.False(t, r.Reused)
	_, err := s.RotateRefresh(t.Context(), projA, f.ID, 0, p)
	require.ErrorIsf(t, err, store.ErrReplayed, "RotateRefresh(gen 0) again at the same instant with ReuseWindow 0")
	wantTime(t, p.Now, mustGetFamily(t, s, projA, f.ID).RevokedAt, "RevokedAt after a replay with ReuseWindow 0")
	_, err = s.RotateRefresh(t.Context(), projA, f.ID, 1, p)
	require.ErrorIsf(t, err, store.ErrRevoked, "RotateRefresh(gen 1) after the replay")

	g := mustFamily(t, s, projB)
	rotate(t, s, g, 0, p)
	p.Now = p.Now.Add(time.Microsecond)
	_, err = s.RotateRefresh(t.Context(), projB, g.ID, 0, p)
	require.ErrorIsf(t, err, store.ErrReplayed, "RotateRefresh(gen 0) 1µs later with ReuseWindow 0")
}

// A generation older than the predecessor is a replay even within the
// window, and revokes the family.
func testRefreshOlderGeneration(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	t0 := base.Add(time.Minute)
	rotate(t, s, f, 0, rotateParams(t0))
	r := rotate(t, s, f, 1, rotateParams(t0.Add(time.Second)))
	require.EqualValues(t, 2, r.Family.Generation)
	now := t0.Add(2 * time.Second)
	_, err := s.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(now))
	require.ErrorIsf(t, err, store.ErrReplayed, "RotateRefresh(gen 0) when the current generation is 2, within the window")
	got := mustGetFamily(t, s, projA, f.ID)
	wantTime(t, now, got.RevokedAt, "RevokedAt after replaying gen 0")
	require.EqualValues(t, 2, got.Generation)
	_, err = s.RotateRefresh(t.Context(), projA, f.ID, 2, rotateParams(now))
	require.ErrorIsf(t, err, store.ErrRevoked, "RotateRefresh(gen 2) after the replay of gen 0")

	// And deeper: gen 3 of 5.
	g := mustFamily(t, s, projB)
	for gen := int64(0); gen < 5; gen++ {
		rotate(t, s, g, gen, rotateParams(t0.Add(time.Duration(gen)*time.Minute)))
	}
	_, err = s.RotateRefresh(t.Context(), projB, g.ID, 3, rotateParams(t0.Add(5*time.Minute)))
	require.ErrorIsf(t, err, store.ErrReplayed, "RotateRefresh(gen 3) when the current generation is 5")
}

// The current generation presented at or after its ExpiresAt is
// ErrExpired; a microsecond before, it rotates.
func testRefreshExpired(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "rt@example.com")
	exp := aligned.Add(time.Hour)
	f := newFamily(projA, u.ID, aligned, time.Hour)
	require.NoErrorf(t, s.CreateRefreshFamily(t.Context(), f, userHash), "CreateRefreshFamily")
	for _, now := range []time.Time{exp, exp.Add(time.Microsecond), exp.Add(24 * time.Hour)} {
		_, err := s.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(now))
		require.ErrorIsf(t, err, store.ErrExpired, "RotateRefresh(gen 0) at %s, expiry %s", now.Format(time.RFC3339Nano), exp.Format(time.RFC3339Nano))
	}
	got := mustGetFamily(t, s, projA, f.ID)
	require.EqualValues(t, 0, got.Generation, "an expired token does not rotate")

	g := newFamily(projA, u.ID, aligned, time.Hour)
	require.NoErrorf(t, s.CreateRefreshFamily(t.Context(), g, userHash), "CreateRefreshFamily")
	r := rotate(t, s, g, 0, store.RotateParams{Now: exp.Add(-time.Microsecond), TTL: time.Minute, ReuseWindow: 10 * time.Second})
	require.False(t, r.Reused)
	// The successor lives p.TTL.
	_, err := s.RotateRefresh(t.Context(), projA, g.ID, 1, rotateParams(r.Family.ExpiresAt))
	require.ErrorIsf(t, err, store.ErrExpired, "RotateRefresh(gen 1) at the successor's expiry")
	rotate(t, s, g, 1, rotateParams(r.Family.ExpiresAt.Add(-time.Microsecond)))
}

// An unknown family is ErrNotFound.
func testRefreshUnknownFamily(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	id := store.NewID(store.PrefixFamily)
	_, err := s.RotateRefresh(t.Context(), projA, id, 0, rotateParams(base))
	require.ErrorIsf(t, err, store.ErrNotFound, "RotateRefresh of an unknown family")
	_, err = s.GetRefreshFamily(t.Context(), projA, id)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetRefreshFamily of an unknown family")
	require.ErrorIsf(t, s.RevokeRefreshFamily(t.Context(), projA, id, base), store.ErrNotFound, "RevokeRefreshFamily of an unknown family")
	_, err = s.RotateRefresh(t.Context(), "no-such-project", f.ID, 0, rotateParams(base))
	require.ErrorIsf(t, err, store.ErrNotFound, "RotateRefresh in an unknown project")
	wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "an existing family after calls on unknown ones")
}

// Another project's family is reported exactly as a missing one and is not
// changed: not rotated, not revoked.
func testRefreshOtherProject(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	mustProject(t, s, projB)
	now := base.Add(time.Minute)
	_, err := s.RotateRefresh(t.Context(), projB, f.ID, 0, rotateParams(now))
	require.ErrorIsf(t, err, store.ErrNotFound, "RotateRefresh(%q, %q) of project %q's family", projB, f.ID, projA)
	_, err = s.GetRefreshFamily(t.Context(), projB, f.ID)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetRefreshFamily(%q, %q) of project %q's family", projB, f.ID, projA)
	require.ErrorIsf(t, s.RevokeRefreshFamily(t.Context(), projB, f.ID, now), store.ErrNotFound, "RevokeRefreshFamily(%q, %q) of project %q's family", projB, f.ID, projA)
	wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "the family after another project's calls")

	// After a rotation, a replay through another project neither revokes
	// nor reuses.
	r := rotate(t, s, f, 0, rotateParams(now))
	_, err = s.RotateRefresh(t.Context(), projB, f.ID, 0, rotateParams(now.Add(time.Hour)))
	require.ErrorIsf(t, err, store.ErrNotFound, "RotateRefresh(%q, %q, gen 0) after the window, through another project", projB, f.ID)
	wantFamily(t, r.Family, mustGetFamily(t, s, projA, f.ID), "the family after another project's replay attempt")
}

// A generation above the current one is ErrNotFound and changes nothing.
func testRefreshFutureGeneration(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	for _, gen := range []int64{1, 2, 1 << 40} {
		_, err := s.RotateRefresh(t.Context(), projA, f.ID, gen, rotateParams(base.Add(time.Minute)))
		require.ErrorIsf(t, err, store.ErrNotFound, "RotateRefresh(gen %d) when the current generation is 0", gen)
	}
	wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "the family after future generations")
	r := rotate(t, s, f, 0, rotateParams(base.Add(time.Minute)))
	_, err := s.RotateRefresh(t.Context(), projA, f.ID, 2, rotateParams(base.Add(2*time.Minute)))
	require.ErrorIsf(t, err, store.ErrNotFound, "RotateRefresh(gen 2) when the current generation is 1")
	wantFamily(t, r.Family, mustGetFamily(t, s, projA, f.ID), "the family after a future generation")
}

// A negative generation, a TTL that is not positive or a negative window is
// ErrInvalid and changes nothing.
func testRefreshInvalidParams(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	now := base.Add(time.Minute)
	_, err := s.RotateRefresh(t.Context(), projA, f.ID, -1, rotateParams(now))
	require.ErrorIsf(t, err, store.ErrInvalid, "RotateRefresh(gen -1)")
	for _, ttl := range []time.Duration{0, -time.Hour} {
		p := rotateParams(now)
		p.TTL = ttl
		_, err = s.RotateRefresh(t.Context(), projA, f.ID, 0, p)
		require.ErrorIsf(t, err, store.ErrInvalid, "RotateRefresh with TTL %s", ttl)
	}
	p := rotateParams(now)
	p.ReuseWindow = -time.Second
	_, err = s.RotateRefresh(t.Context(), projA, f.ID, 0, p)
	require.ErrorIsf(t, err, store.ErrInvalid, "RotateRefresh with ReuseWindow -1s")
	wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "the family after rejected rotations")
}

// RevokeRefreshFamily revokes at the time given; revoking again, at a later
// or an earlier time, keeps the first; a revoked family refuses rotation
// with ErrRevoked.
func testRefreshRevoke(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	other := mustFamily(t, s, projB)
	at := base.Add(time.Hour).In(elsewhere)
	require.NoErrorf(t, s.RevokeRefreshFamily(t.Context(), projA, f.ID, at), "RevokeRefreshFamily(%q)", f.ID)
	want := f
	want.RevokedAt = at
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily after RevokeRefreshFamily")
	require.NoErrorf(t, s.RevokeRefreshFamily(t.Context(), projA, f.ID, at.Add(time.Hour)), "RevokeRefreshFamily(%q) again, later", f.ID)
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily after a second, later revocation")
	require.NoErrorf(t, s.RevokeRefreshFamily(t.Context(), projA, f.ID, at.Add(-time.Hour)), "RevokeRefreshFamily(%q) again, earlier", f.ID)
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily after a third, earlier revocation: the first time")
	_, err := s.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(at.Add(time.Minute)))
	require.ErrorIsf(t, err, store.ErrRevoked, "RotateRefresh(gen 0) of a revoked family")
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily after rotating a revoked family")
	wantFamily(t, other, mustGetFamily(t, s, projB, other.ID), "another family after a revocation")
}

// The predecessor presented within the window of a family revoked since is
// refused: revocation ends the whole family, successors included.
func testRefreshRevokedPredecessor(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	t0 := base.Add(time.Minute)
	r := rotate(t, s, f, 0, rotateParams(t0))
	require.NoErrorf(t, s.RevokeRefreshFamily(t.Context(), projA, f.ID, t0.Add(time.Second)), "RevokeRefreshFamily(%q)", f.ID)
	_, err := s.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(t0.Add(2*time.Second)))
	wantErrAny(t, err, []error{store.ErrRevoked, store.ErrReplayed}, "RotateRefresh(gen 0) within the window after the family was revoked")
	want := r.Family
	want.RevokedAt = t0.Add(time.Second)
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "the family after a refused reuse")
}

// RevokeRefreshFamily with a zero time is ErrInvalid and revokes nothing.
func testRefreshRevokeZeroTime(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	require.ErrorIs(t, s.RevokeRefreshFamily(t.Context(), projA, f.ID, time.Time{}), store.ErrInvalid, "RevokeRefreshFamily with a zero time")
	wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "the family after a refused revocation")
	rotate(t, s, f, 0, rotateParams(base.Add(time.Minute)))
}

// CreateRefreshFamily of a disabled user is ErrDisabled and stores
// nothing; once the user is enabled, a session starts.
func testRefreshCreateDisabledUser(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "disabled@example.com")
	require.NoError(t, s.DisableUser(t.Context(), projA, u.ID, base), "DisableUser")
	f := newFamily(projA, u.ID, base.Add(time.Minute), time.Hour)
	require.ErrorIsf(t, s.CreateRefreshFamily(t.Context(), f, userHash), store.ErrDisabled, "CreateRefreshFamily(%q) of a disabled user", f.ID)
	_, err := s.GetRefreshFamily(t.Context(), projA, f.ID)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetRefreshFamily(%q) of a family whose create was refused", f.ID)
	require.NoError(t, s.EnableUser(t.Context(), projA, u.ID), "EnableUser")
	require.NoErrorf(t, s.CreateRefreshFamily(t.Context(), f, userHash), "CreateRefreshFamily(%q) after EnableUser", f.ID)
	wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily of a family created after EnableUser")
}

// CreateRefreshFamily given a hash that is no longer the user's (the
// password was set after the sign-in checked it) is ErrConflict and stores
// nothing; given the user's hash, a session starts.
func testRefreshCreateAfterPasswordChange(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "reset@example.com")
	const newHash = "$argon2id$v=19$m=19456,t=2,p=1$bmV3c2FsdG5ld3NhbHQ$bmV3aGFzaG5ld2hhc2huZXdoYXNobmV3aGFzaA"
	require.NoError(t, s.SetPasswordHash(t.Context(), projA, u.ID, newHash), "SetPasswordHash")
	f := newFamily(projA, u.ID, base.Add(time.Minute), time.Hour)
	require.ErrorIsf(t, s.CreateRefreshFamily(t.Context(), f, userHash), store.ErrConflict,
		"CreateRefreshFamily(%q) with the hash the password had before it was set", f.ID)
	_, err := s.GetRefreshFamily(t.Context(), projA, f.ID)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetRefreshFamily(%q) of a family whose create was refused", f.ID)
	require.ErrorIsf(t, s.CreateRefreshFamily(t.Context(), f, newHash+"x"), store.ErrConflict,
		"CreateRefreshFamily(%q) with a hash the user never had", f.ID)

	require.NoErrorf(t, s.CreateRefreshFamily(t.Context(), f, newHash), "CreateRefreshFamily(%q) with the user's hash", f.ID)
	wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily of a family created with the user's hash")
}

// No session of a disabled user rotates: neither its current generation
// nor its predecessor within the reuse window gets a token, and the
// attempts change nothing, also after the user is enabled again.
func testRefreshRotateDisabledUser(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "disabled@example.com")
	f := mustFamilyOf(t, s, u, base, 24*time.Hour)
	first := rotateParams(base.Add(time.Minute))
	r := rotate(t, s, f, 0, first)
	at := first.Now.Add(time.Second)
	require.NoError(t, s.DisableUser(t.Context(), projA, u.ID, at), "DisableUser")
	feed := newFeedTracker(t, s, projA)
	want := r.Family
	want.RevokedAt = at
	now := at.Add(time.Second) // still within the predecessor's window
	_, err := s.RotateRefresh(t.Context(), projA, f.ID, 1, rotateParams(now))
	require.ErrorIs(t, err, store.ErrDisabled, "RotateRefresh(gen 1) of a disabled user's session")
	_, err = s.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(now))
	require.ErrorIs(t, err, store.ErrDisabled, "RotateRefresh(gen 0) within the window, of a disabled user's session")
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "the session after rotations refused")
	feed.unchanged(t, "rotations of a disabled user's session")

	require.NoError(t, s.EnableUser(t.Context(), projA, u.ID), "EnableUser")
	_, err = s.RotateRefresh(t.Context(), projA, f.ID, 1, rotateParams(now))
	require.ErrorIs(t, err, store.ErrRevoked, "RotateRefresh(gen 1) after EnableUser: the session stays ended")
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "the session after EnableUser")
}

// EndsAt is stored as given and read back; a zero EndsAt stays zero.
func testRefreshEndsAtRoundTrip(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "ends@example.com")
	f := newFamily(projA, u.ID, base, time.Hour)
	f.EndsAt = base.Add(90 * 24 * time.Hour).In(elsewhere)
	require.NoError(t, s.CreateRefreshFamily(t.Context(), f, userHash), "CreateRefreshFamily with EndsAt")
	wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily of a family with EndsAt")
	g := mustFamilyOf(t, s, u, base, time.Hour)
	wantZeroTime(t, mustGetFamily(t, s, projA, g.ID).EndsAt, "EndsAt of a family created without one")
	// EndsAt survives rotations unchanged.
	r := rotate(t, s, f, 0, rotateParams(base.Add(time.Minute)))
	wantTime(t, f.EndsAt, r.Family.EndsAt, "EndsAt after a rotation")
	wantTime(t, f.EndsAt, mustGetFamily(t, s, projA, f.ID).EndsAt, "GetRefreshFamily().EndsAt after a rotation")
}

// ScheduleSessionEnd puts a session's EndsAt in the feed at that time, as a
// roll's scheduled revocation: not listed before it (by the clock of the
// listing process; NextScheduledRevocation names it), listed once due, and
// once however often it was scheduled. A session with no EndsAt schedules
// nothing.
func testRefreshScheduleSessionEnd(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "ends@example.com")
	real := time.Now()
	later := newFamily(projA, u.ID, real, time.Hour)
	later.EndsAt = real.Add(time.Hour)
	require.NoError(t, s.CreateRefreshFamily(t.Context(), later, userHash))
	due := newFamily(projA, u.ID, base, time.Hour)
	due.EndsAt = base.Add(30 * time.Minute) // days before the real clock
	require.NoError(t, s.CreateRefreshFamily(t.Context(), due, userHash))
	endless := mustFamilyOf(t, s, u, base, time.Hour)
	feed := newFeedTracker(t, s, projA)

	require.NoError(t, s.ScheduleSessionEnd(t.Context(), projA, later.ID), "ScheduleSessionEnd of a session ending in an hour")
	require.NoError(t, s.ScheduleSessionEnd(t.Context(), projA, later.ID), "ScheduleSessionEnd again")
	require.NoError(t, s.ScheduleSessionEnd(t.Context(), projA, endless.ID), "ScheduleSessionEnd of a session with no EndsAt")
	feed.unchanged(t, "a session end scheduled in an hour")
	next, err := s.NextScheduledRevocation(t.Context(), projA)
	require.NoError(t, err)
	wantTime(t, later.EndsAt, next, "NextScheduledRevocation after ScheduleSessionEnd")

	require.NoError(t, s.ScheduleSessionEnd(t.Context(), projA, due.ID), "ScheduleSessionEnd of a session that has ended")
	require.NoError(t, s.ScheduleSessionEnd(t.Context(), projA, due.ID), "ScheduleSessionEnd again")
	feed.added(t, store.RevokedSession, due.ID, due.EndsAt, "a session end scheduled in the past, listed")
	feed.unchanged(t, "the feed listed again")
	next, err = s.NextScheduledRevocation(t.Context(), projA)
	require.NoError(t, err)
	wantTime(t, later.EndsAt, next, "NextScheduledRevocation once the due end is listed")
	// The family itself is as it was: the feed item is for verifiers.
	wantFamily(t, due, mustGetFamily(t, s, projA, due.ID), "GetRefreshFamily of a session whose end is in the feed")
}

// ScheduleSessionEnd of an unknown family, or of one through another
// project, is ErrNotFound and schedules nothing.
func testRefreshScheduleSessionEndUnknown(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	u := mustUser(t, s, projA, "ends@example.com")
	f := newFamily(projA, u.ID, base, time.Hour)
	f.EndsAt = base.Add(30 * time.Minute)
	require.NoError(t, s.CreateRefreshFamily(t.Context(), f, userHash))
	require.ErrorIs(t, s.ScheduleSessionEnd(t.Context(), projA, store.NewID(store.PrefixFamily)), store.ErrNotFound, "an unknown family")
	require.ErrorIs(t, s.ScheduleSessionEnd(t.Context(), projB, f.ID), store.ErrNotFound, "a family of another project")
	require.ErrorIs(t, s.ScheduleSessionEnd(t.Context(), "nosuch", f.ID), store.ErrNotFound, "an unknown project")
	for _, p := range []string{projA, projB} {
		require.Emptyf(t, feedList(s, p).all(t), "the feed of %q", p)
		next, err := s.NextScheduledRevocation(t.Context(), p)
		require.NoError(t, err)
		wantZeroTime(t, next, "NextScheduledRevocation of %q", p)
	}
}

// A rotation's successor expires at p.Now+p.TTL or at EndsAt, whichever
// is earlier; a reuse returns that capped successor.
func testRefreshEndsAtCapsExpiry(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "ends@example.com")
	f := newFamily(projA, u.ID, aligned, time.Hour)
	f.EndsAt = aligned.Add(2 * time.Hour)
	require.NoError(t, s.CreateRefreshFamily(t.Context(), f, userHash), "CreateRefreshFamily with EndsAt")
	// TTL within the end: not capped.
	p := store.RotateParams{Now: aligned.Add(30 * time.Minute), TTL: time.Hour, ReuseWindow: 10 * time.Second}
	r := rotate(t, s, f, 0, p)
	want := successor(f, p)
	wantTime(t, aligned.Add(90*time.Minute), want.ExpiresAt, "precondition: the successor's expiry")
	wantFamily(t, want, r.Family, "RotateRefresh within EndsAt")
	// TTL past the end: capped at EndsAt.
	p = store.RotateParams{Now: aligned.Add(80 * time.Minute), TTL: 30 * 24 * time.Hour, ReuseWindow: 10 * time.Second}
	r = rotate(t, s, f, 1, p)
	want = successor(want, p)
	wantTime(t, f.EndsAt, want.ExpiresAt, "precondition: the capped expiry")
	wantFamily(t, want, r.Family, "RotateRefresh with a TTL past EndsAt: ExpiresAt capped at EndsAt")
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily after a capped rotation")
	reuse := rotate(t, s, f, 1, store.RotateParams{Now: p.Now.Add(time.Second), TTL: 30 * 24 * time.Hour, ReuseWindow: 10 * time.Second})
	require.True(t, reuse.Reused, "a reuse within the window")
	wantFamily(t, want, reuse.Family, "the reuse's family: the capped successor")
}

// At or after EndsAt nothing rotates: the current generation is
// ErrExpired, and so is its predecessor within the reuse window; a
// microsecond before, it rotates.
func testRefreshEndsAtEndsRotation(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "ends@example.com")
	end := aligned.Add(time.Hour)
	f := newFamily(projA, u.ID, aligned, 30*24*time.Hour)
	f.EndsAt = end
	require.NoError(t, s.CreateRefreshFamily(t.Context(), f, userHash), "CreateRefreshFamily with EndsAt")
	for _, now := range []time.Time{end, end.Add(time.Microsecond), end.Add(24 * time.Hour)} {
		_, err := s.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(now))
		require.ErrorIsf(t, err, store.ErrExpired, "RotateRefresh(gen 0) at %s, EndsAt %s", now.Format(time.RFC3339Nano), end.Format(time.RFC3339Nano))
	}
	wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "the family after refused rotations past EndsAt")

	before := end.Add(-5 * time.Second)
	r := rotate(t, s, f, 0, rotateParams(before))
	want := successor(f, rotateParams(before))
	wantFamily(t, want, r.Family, "RotateRefresh five seconds before EndsAt")
	_, err := s.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(end))
	require.ErrorIs(t, err, store.ErrExpired, "RotateRefresh(gen 0) within the reuse window but at EndsAt")
	_, err = s.RotateRefresh(t.Context(), projA, f.ID, 1, rotateParams(end))
	require.ErrorIs(t, err, store.ErrExpired, "RotateRefresh(gen 1) at EndsAt")
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "the family after refused rotations at EndsAt")

	g := newFamily(projA, u.ID, aligned, 30*24*time.Hour)
	g.EndsAt = end
	require.NoError(t, s.CreateRefreshFamily(t.Context(), g, userHash), "CreateRefreshFamily with EndsAt")
	rotate(t, s, g, 0, rotateParams(end.Add(-time.Microsecond)))
}

// pruneFamilies calls PruneRefreshFamilies and checks the count.
func pruneFamilies(t *testing.T, s store.RefreshStore, before time.Time, want int) {
	t.Helper()
	n, err := s.PruneRefreshFamilies(t.Context(), before)
	require.NoErrorf(t, err, "PruneRefreshFamilies(%s)", before.Format(time.RFC3339Nano))
	require.Equalf(t, want, n, "PruneRefreshFamilies(%s): families deleted", before.Format(time.RFC3339Nano))
}

// wantPruned fails unless each family is gone.
func wantPruned(t *testing.T, s store.RefreshStore, what string, fs ...store.RefreshFamily) {
	t.Helper()
	for _, f := range fs {
		_, err := s.GetRefreshFamily(t.Context(), f.ProjectID, f.ID)
		require.ErrorIsf(t, err, store.ErrNotFound, "GetRefreshFamily(%q, %q) of a family %s", f.ProjectID, f.ID, what)
	}
}

// wantKept fails unless each family is still stored unchanged.
func wantKept(t *testing.T, s store.RefreshStore, what string, fs ...store.RefreshFamily) {
	t.Helper()
	for _, f := range fs {
		wantFamily(t, f, mustGetFamily(t, s, f.ProjectID, f.ID), "a family "+what)
	}
}

// PruneRefreshFamilies deletes the families, of every project, revoked
// before the time given, and keeps those revoked at or after it.
func testRefreshPruneRevoked(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	u := mustUser(t, s, projA, "prune@example.com")
	v := mustUser(t, s, projB, "prune@example.com")
	cut := aligned.Add(time.Hour)
	long := 30 * 24 * time.Hour
	revoke := func(f store.RefreshFamily, at time.Time) store.RefreshFamily {
		t.Helper()
		require.NoError(t, s.RevokeRefreshFamily(t.Context(), f.ProjectID, f.ID, at), "RevokeRefreshFamily")
		f.RevokedAt = at
		return f
	}
	oldA := revoke(mustFamilyOf(t, s, u, aligned, long), cut.Add(-time.Microsecond))
	oldB := revoke(mustFamilyOf(t, s, v, aligned, long), aligned)
	atCut := revoke(mustFamilyOf(t, s, u, aligned, long), cut)
	later := revoke(mustFamilyOf(t, s, u, aligned, long), cut.Add(time.Minute))
	live := mustFamilyOf(t, s, u, aligned, long)
	feed := newFeedTracker(t, s, projA)

	pruneFamilies(t, s, cut.In(elsewhere), 2)
	wantPruned(t, s, "revoked before the cut", oldA, oldB)
	wantKept(t, s, "revoked at or after the cut, or live", atCut, later, live)
	pruneFamilies(t, s, cut, 0)
	feed.unchanged(t, "PruneRefreshFamilies")
}

// PruneRefreshFamilies deletes the families whose current generation
// expired before the time given, and keeps those expiring at or after it.
func testRefreshPruneExpired(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "prune@example.com")
	cut := aligned.Add(time.Hour)
	expired := mustFamilyOf(t, s, u, aligned, time.Hour-time.Microsecond)
	atCut := mustFamilyOf(t, s, u, aligned, time.Hour)
	later := mustFamilyOf(t, s, u, aligned, 2*time.Hour)
	// A family whose first generation would have expired, rotated since:
	// its current generation counts.
	rotated := mustFamilyOf(t, s, u, aligned, time.Minute)
	rotated = rotate(t, s, rotated, 0, store.RotateParams{Now: aligned.Add(time.Second), TTL: 2 * time.Hour, ReuseWindow: time.Second}).Family
	// A family rotated to a successor that expired before the cut.
	short := mustFamilyOf(t, s, u, aligned, 2*time.Hour)
	short = rotate(t, s, short, 0, store.RotateParams{Now: aligned.Add(time.Second), TTL: time.Minute, ReuseWindow: time.Second}).Family

	pruneFamilies(t, s, cut, 2)
	wantPruned(t, s, "expired before the cut", expired, short)
	wantKept(t, s, "expiring at or after the cut", atCut, later, rotated)
}

// PruneRefreshFamilies deletes the families whose EndsAt is before the
// time given, even if their current generation has not expired; a zero
// EndsAt is no end.
func testRefreshPruneEnded(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "prune@example.com")
	cut := aligned.Add(time.Hour)
	withEnd := func(end time.Time) store.RefreshFamily {
		t.Helper()
		f := newFamily(projA, u.ID, aligned, 30*24*time.Hour)
		f.EndsAt = end
		require.NoError(t, s.CreateRefreshFamily(t.Context(), f, userHash), "CreateRefreshFamily with EndsAt")
		return f
	}
	ended := withEnd(cut.Add(-time.Microsecond))
	atCut := withEnd(cut)
	later := withEnd(cut.Add(time.Hour))
	noEnd := mustFamilyOf(t, s, u, aligned, 30*24*time.Hour)

	pruneFamilies(t, s, cut, 1)
	wantPruned(t, s, "ended before the cut", ended)
	wantKept(t, s, "ending at or after the cut, or without an end", atCut, later, noEnd)
}

// A pruned family's tokens stay refused: every call naming it is
// ErrNotFound, whatever the generation.
func testRefreshPrunedNeverValid(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	r := rotate(t, s, f, 0, rotateParams(base.Add(time.Minute)))
	require.NoError(t, s.RevokeRefreshFamily(t.Context(), projA, f.ID, base.Add(2*time.Minute)), "RevokeRefreshFamily")
	pruneFamilies(t, s, base.Add(time.Hour), 1)
	for gen := int64(0); gen <= r.Family.Generation+1; gen++ {
		for _, now := range []time.Time{base.Add(time.Minute + time.Second), base.Add(2 * time.Hour)} {
			_, err := s.RotateRefresh(t.Context(), projA, f.ID, gen, rotateParams(now))
			require.ErrorIsf(t, err, store.ErrNotFound, "RotateRefresh(gen %d) of a pruned family at %s", gen, now.Format(time.RFC3339Nano))
		}
	}
	require.ErrorIs(t, s.RevokeRefreshFamily(t.Context(), projA, f.ID, base.Add(3*time.Hour)), store.ErrNotFound, "RevokeRefreshFamily of a pruned family")
	wantPruned(t, s, "pruned", f)
}

// PruneRefreshFamilies with a zero time is ErrInvalid and deletes nothing.
func testRefreshPruneInvalid(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	require.NoError(t, s.RevokeRefreshFamily(t.Context(), projA, f.ID, base), "RevokeRefreshFamily")
	f.RevokedAt = base
	_, err := s.PruneRefreshFamilies(t.Context(), time.Time{})
	require.ErrorIs(t, err, store.ErrInvalid, "PruneRefreshFamilies(zero time)")
	wantKept(t, s, "after a refused prune", f)
}
