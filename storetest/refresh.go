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
	}
}

func rotate(t *testing.T, s store.RefreshStore, f store.RefreshFamily, gen int64, p store.RotateParams) store.Rotation {
	t.Helper()
	r, err := s.RotateRefresh(t.Context(), f.ProjectID, f.ID, gen, p)
	noErr(t, err, "RotateRefresh(%q, gen %d, now %s)", f.ID, gen, p.Now.Format(time.RFC3339Nano))
	return r
}

// successor is f after a fresh rotation at p.
func successor(f store.RefreshFamily, p store.RotateParams) store.RefreshFamily {
	f.Generation++
	f.IssuedAt = p.Now
	f.ExpiresAt = p.Now.Add(p.TTL)
	return f
}

// CreateRefreshFamily records generation 0; GetRefreshFamily returns it.
func testRefreshCreateGet(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "rt@example.com")
	f := newFamily(projA, u.ID, base.In(elsewhere), 30*24*time.Hour)
	noErr(t, s.CreateRefreshFamily(t.Context(), f), "CreateRefreshFamily(%q)", f.ID)
	got := mustGetFamily(t, s, projA, f.ID)
	wantFamily(t, f, got, "GetRefreshFamily of a new family")
	require.EqualValues(t, 0, got.Generation)
	wantZeroTime(t, got.RevokedAt, "RevokedAt of a new family")

	// Several families of one user are independent.
	g := newFamily(projA, u.ID, base.Add(time.Minute), time.Hour)
	noErr(t, s.CreateRefreshFamily(t.Context(), g), "CreateRefreshFamily(%q)", g.ID)
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
	wantErr(t, s.CreateRefreshFamily(t.Context(), noID), store.ErrInvalid, "CreateRefreshFamily with an empty id")
	noUser := newFamily(projA, "", base, time.Hour)
	wantErr(t, s.CreateRefreshFamily(t.Context(), noUser), store.ErrInvalid, "CreateRefreshFamily with an empty user id")
	_, err := s.GetRefreshFamily(t.Context(), projA, noUser.ID)
	wantErr(t, err, store.ErrNotFound, "GetRefreshFamily(%q) after a rejected create", noUser.ID)
	for _, gen := range []int64{1, -1, 7} {
		f := newFamily(projA, u.ID, base, time.Hour)
		f.Generation = gen
		wantErr(t, s.CreateRefreshFamily(t.Context(), f), store.ErrInvalid, "CreateRefreshFamily with Generation %d", gen)
		_, err = s.GetRefreshFamily(t.Context(), projA, f.ID)
		wantErr(t, err, store.ErrNotFound, "GetRefreshFamily(%q) after a rejected create", f.ID)
	}
	for _, p := range []string{"", "Proj A"} {
		f := newFamily(p, u.ID, base, time.Hour)
		wantErr(t, s.CreateRefreshFamily(t.Context(), f), store.ErrInvalid, "CreateRefreshFamily in project %q", p)
		_, err = s.GetRefreshFamily(t.Context(), p, f.ID)
		wantErr(t, err, store.ErrInvalid, "GetRefreshFamily(%q, ...)", p)
		_, err = s.RotateRefresh(t.Context(), p, f.ID, 0, rotateParams(base))
		wantErr(t, err, store.ErrInvalid, "RotateRefresh(%q, ...)", p)
		wantErr(t, s.RevokeRefreshFamily(t.Context(), p, f.ID, base), store.ErrInvalid, "RevokeRefreshFamily(%q, ...)", p)
	}
	_, err = s.GetRefreshFamily(t.Context(), projA, "")
	wantErr(t, err, store.ErrInvalid, "GetRefreshFamily(%q, \"\")", projA)
	_, err = s.RotateRefresh(t.Context(), projA, "", 0, rotateParams(base))
	wantErr(t, err, store.ErrInvalid, "RotateRefresh(%q, \"\")", projA)
	wantErr(t, s.RevokeRefreshFamily(t.Context(), projA, "", base), store.ErrInvalid, "RevokeRefreshFamily(%q, \"\")", projA)
}

// CreateRefreshFamily returns ErrNotFound for an unknown project, an unknown
// user, or a user of another project.
func testRefreshCreateUnknown(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	u := mustUser(t, s, projA, "rt@example.com")
	f := newFamily("no-such-project", u.ID, base, time.Hour)
	wantErr(t, s.CreateRefreshFamily(t.Context(), f), store.ErrNotFound, "CreateRefreshFamily in an unknown project")
	f = newFamily(projA, store.NewID(store.PrefixUser), base, time.Hour)
	wantErr(t, s.CreateRefreshFamily(t.Context(), f), store.ErrNotFound, "CreateRefreshFamily for an unknown user")
	_, err := s.GetRefreshFamily(t.Context(), projA, f.ID)
	wantErr(t, err, store.ErrNotFound, "GetRefreshFamily(%q) after a rejected create", f.ID)
	f = newFamily(projB, u.ID, base, time.Hour)
	wantErr(t, s.CreateRefreshFamily(t.Context(), f), store.ErrNotFound, "CreateRefreshFamily in %q for a user of %q", projB, projA)
	_, err = s.GetRefreshFamily(t.Context(), projB, f.ID)
	wantErr(t, err, store.ErrNotFound, "GetRefreshFamily(%q) after a rejected create", f.ID)
}

// CreateRefreshFamily returns ErrConflict for an existing id and keeps the
// first family.
func testRefreshCreateDuplicate(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	dup := f
	dup.ExpiresAt = f.ExpiresAt.Add(time.Hour)
	dup.IssuedAt = f.IssuedAt.Add(time.Hour)
	wantErr(t, s.CreateRefreshFamily(t.Context(), dup), store.ErrConflict, "CreateRefreshFamily(%q) with an existing id", f.ID)
	wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily after a conflicting create")

	// Even after the family has rotated.
	r := rotate(t, s, f, 0, rotateParams(base.Add(time.Minute)))
	wantErr(t, s.CreateRefreshFamily(t.Context(), f), store.ErrConflict, "CreateRefreshFamily(%q) of a rotated family", f.ID)
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
	wantErr(t, err, store.ErrReplayed, "RotateRefresh(gen 0) ReuseWindow+1µs after its rotation")
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
	wantErr(t, err, store.ErrReplayed, "RotateRefresh(gen 0) 11s after its rotation with a 10s window")

	want := r.Family
	want.RevokedAt = now
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily after a replay")

	later := now.Add(time.Second)
	_, err = s.RotateRefresh(t.Context(), projA, f.ID, 1, rotateParams(later))
	wantErr(t, err, store.ErrRevoked, "RotateRefresh(gen 1), the current generation, after a replay revoked the family")
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
	wantErr(t, err, store.ErrReplayed, "RotateRefresh(gen 0) again at the same instant with ReuseWindow 0")
	wantTime(t, p.Now, mustGetFamily(t, s, projA, f.ID).RevokedAt, "RevokedAt after a replay with ReuseWindow 0")
	_, err = s.RotateRefresh(t.Context(), projA, f.ID, 1, p)
	wantErr(t, err, store.ErrRevoked, "RotateRefresh(gen 1) after the replay")

	g := mustFamily(t, s, projB)
	rotate(t, s, g, 0, p)
	p.Now = p.Now.Add(time.Microsecond)
	_, err = s.RotateRefresh(t.Context(), projB, g.ID, 0, p)
	wantErr(t, err, store.ErrReplayed, "RotateRefresh(gen 0) 1µs later with ReuseWindow 0")
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
	wantErr(t, err, store.ErrReplayed, "RotateRefresh(gen 0) when the current generation is 2, within the window")
	got := mustGetFamily(t, s, projA, f.ID)
	wantTime(t, now, got.RevokedAt, "RevokedAt after replaying gen 0")
	require.EqualValues(t, 2, got.Generation)
	_, err = s.RotateRefresh(t.Context(), projA, f.ID, 2, rotateParams(now))
	wantErr(t, err, store.ErrRevoked, "RotateRefresh(gen 2) after the replay of gen 0")

	// And deeper: gen 3 of 5.
	g := mustFamily(t, s, projB)
	for gen := int64(0); gen < 5; gen++ {
		rotate(t, s, g, gen, rotateParams(t0.Add(time.Duration(gen)*time.Minute)))
	}
	_, err = s.RotateRefresh(t.Context(), projB, g.ID, 3, rotateParams(t0.Add(5*time.Minute)))
	wantErr(t, err, store.ErrReplayed, "RotateRefresh(gen 3) when the current generation is 5")
}

// The current generation presented at or after its ExpiresAt is
// ErrExpired; a microsecond before, it rotates.
func testRefreshExpired(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "rt@example.com")
	exp := aligned.Add(time.Hour)
	f := newFamily(projA, u.ID, aligned, time.Hour)
	noErr(t, s.CreateRefreshFamily(t.Context(), f), "CreateRefreshFamily")
	for _, now := range []time.Time{exp, exp.Add(time.Microsecond), exp.Add(24 * time.Hour)} {
		_, err := s.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(now))
		wantErr(t, err, store.ErrExpired, "RotateRefresh(gen 0) at %s, expiry %s", now.Format(time.RFC3339Nano), exp.Format(time.RFC3339Nano))
	}
	got := mustGetFamily(t, s, projA, f.ID)
	require.EqualValues(t, 0, got.Generation, "an expired token does not rotate")

	g := newFamily(projA, u.ID, aligned, time.Hour)
	noErr(t, s.CreateRefreshFamily(t.Context(), g), "CreateRefreshFamily")
	r := rotate(t, s, g, 0, store.RotateParams{Now: exp.Add(-time.Microsecond), TTL: time.Minute, ReuseWindow: 10 * time.Second})
	require.False(t, r.Reused)
	// The successor lives p.TTL.
	_, err := s.RotateRefresh(t.Context(), projA, g.ID, 1, rotateParams(r.Family.ExpiresAt))
	wantErr(t, err, store.ErrExpired, "RotateRefresh(gen 1) at the successor's expiry")
	rotate(t, s, g, 1, rotateParams(r.Family.ExpiresAt.Add(-time.Microsecond)))
}

// An unknown family is ErrNotFound.
func testRefreshUnknownFamily(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	id := store.NewID(store.PrefixFamily)
	_, err := s.RotateRefresh(t.Context(), projA, id, 0, rotateParams(base))
	wantErr(t, err, store.ErrNotFound, "RotateRefresh of an unknown family")
	_, err = s.GetRefreshFamily(t.Context(), projA, id)
	wantErr(t, err, store.ErrNotFound, "GetRefreshFamily of an unknown family")
	wantErr(t, s.RevokeRefreshFamily(t.Context(), projA, id, base), store.ErrNotFound, "RevokeRefreshFamily of an unknown family")
	_, err = s.RotateRefresh(t.Context(), "no-such-project", f.ID, 0, rotateParams(base))
	wantErr(t, err, store.ErrNotFound, "RotateRefresh in an unknown project")
	wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "an existing family after calls on unknown ones")
}

// Another project's family is reported exactly as a missing one and is not
// changed: not rotated, not revoked.
func testRefreshOtherProject(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	mustProject(t, s, projB)
	now := base.Add(time.Minute)
	_, err := s.RotateRefresh(t.Context(), projB, f.ID, 0, rotateParams(now))
	wantErr(t, err, store.ErrNotFound, "RotateRefresh(%q, %q) of project %q's family", projB, f.ID, projA)
	_, err = s.GetRefreshFamily(t.Context(), projB, f.ID)
	wantErr(t, err, store.ErrNotFound, "GetRefreshFamily(%q, %q) of project %q's family", projB, f.ID, projA)
	wantErr(t, s.RevokeRefreshFamily(t.Context(), projB, f.ID, now), store.ErrNotFound, "RevokeRefreshFamily(%q, %q) of project %q's family", projB, f.ID, projA)
	wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "the family after another project's calls")

	// After a rotation, a replay through another project neither revokes
	// nor reuses.
	r := rotate(t, s, f, 0, rotateParams(now))
	_, err = s.RotateRefresh(t.Context(), projB, f.ID, 0, rotateParams(now.Add(time.Hour)))
	wantErr(t, err, store.ErrNotFound, "RotateRefresh(%q, %q, gen 0) after the window, through another project", projB, f.ID)
	wantFamily(t, r.Family, mustGetFamily(t, s, projA, f.ID), "the family after another project's replay attempt")
}

// A generation above the current one is ErrNotFound and changes nothing.
func testRefreshFutureGeneration(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	for _, gen := range []int64{1, 2, 1 << 40} {
		_, err := s.RotateRefresh(t.Context(), projA, f.ID, gen, rotateParams(base.Add(time.Minute)))
		wantErr(t, err, store.ErrNotFound, "RotateRefresh(gen %d) when the current generation is 0", gen)
	}
	wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "the family after future generations")
	r := rotate(t, s, f, 0, rotateParams(base.Add(time.Minute)))
	_, err := s.RotateRefresh(t.Context(), projA, f.ID, 2, rotateParams(base.Add(2*time.Minute)))
	wantErr(t, err, store.ErrNotFound, "RotateRefresh(gen 2) when the current generation is 1")
	wantFamily(t, r.Family, mustGetFamily(t, s, projA, f.ID), "the family after a future generation")
}

// A negative generation, a TTL that is not positive or a negative window is
// ErrInvalid and changes nothing.
func testRefreshInvalidParams(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	now := base.Add(time.Minute)
	_, err := s.RotateRefresh(t.Context(), projA, f.ID, -1, rotateParams(now))
	wantErr(t, err, store.ErrInvalid, "RotateRefresh(gen -1)")
	for _, ttl := range []time.Duration{0, -time.Hour} {
		p := rotateParams(now)
		p.TTL = ttl
		_, err = s.RotateRefresh(t.Context(), projA, f.ID, 0, p)
		wantErr(t, err, store.ErrInvalid, "RotateRefresh with TTL %s", ttl)
	}
	p := rotateParams(now)
	p.ReuseWindow = -time.Second
	_, err = s.RotateRefresh(t.Context(), projA, f.ID, 0, p)
	wantErr(t, err, store.ErrInvalid, "RotateRefresh with ReuseWindow -1s")
	wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "the family after rejected rotations")
}

// RevokeRefreshFamily revokes at the time given, keeping an earlier
// revocation time; a revoked family refuses rotation with ErrRevoked.
func testRefreshRevoke(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	other := mustFamily(t, s, projB)
	at := base.Add(time.Hour).In(elsewhere)
	noErr(t, s.RevokeRefreshFamily(t.Context(), projA, f.ID, at), "RevokeRefreshFamily(%q)", f.ID)
	want := f
	want.RevokedAt = at
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily after RevokeRefreshFamily")
	noErr(t, s.RevokeRefreshFamily(t.Context(), projA, f.ID, at.Add(time.Hour)), "RevokeRefreshFamily(%q) again, later", f.ID)
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily after a second, later revocation")
	_, err := s.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(at.Add(time.Minute)))
	wantErr(t, err, store.ErrRevoked, "RotateRefresh(gen 0) of a revoked family")
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "GetRefreshFamily after rotating a revoked family")
	wantFamily(t, other, mustGetFamily(t, s, projB, other.ID), "another family after a revocation")
}

// The predecessor presented within the window of a family revoked since is
// refused: revocation ends the whole family, successors included.
func testRefreshRevokedPredecessor(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	t0 := base.Add(time.Minute)
	r := rotate(t, s, f, 0, rotateParams(t0))
	noErr(t, s.RevokeRefreshFamily(t.Context(), projA, f.ID, t0.Add(time.Second)), "RevokeRefreshFamily(%q)", f.ID)
	_, err := s.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(t0.Add(2*time.Second)))
	wantErrAny(t, err, []error{store.ErrRevoked, store.ErrReplayed}, "RotateRefresh(gen 0) within the window after the family was revoked")
	want := r.Family
	want.RevokedAt = t0.Add(time.Second)
	wantFamily(t, want, mustGetFamily(t, s, projA, f.ID), "the family after a refused reuse")
}
