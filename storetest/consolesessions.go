package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

func consoleSessionCases() []testCase {
	return []testCase{
		{"CreateGet", testConsoleCreateGet},
		{"Duplicate", testConsoleDuplicate},
		{"UnknownProject", testConsoleUnknownProject},
		{"Unknown", testConsoleUnknown},
		{"OtherProject", testConsoleOtherProject},
		{"Invalid", testConsoleInvalid},
		{"TouchMonotonic", testConsoleTouch},
		{"Delete", testConsoleDelete},
		{"PruneIdle", testConsolePruneIdle},
		{"PruneCreated", testConsolePruneCreated},
		{"PruneInvalid", testConsolePruneInvalid},
	}
}

// consoleID is the SHA-256 of secret in lowercase hex, as a console
// session's id is.
func consoleID(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

func newConsoleSession(project, secret, userID string, at time.Time) store.ConsoleSession {
	return store.ConsoleSession{ID: consoleID(secret), ProjectID: project, UserID: userID, CreatedAt: at, LastSeenAt: at}
}

func mustConsoleSession(t *testing.T, s store.ConsoleSessionStore, project, secret, userID string, at time.Time) store.ConsoleSession {
	t.Helper()
	cs := newConsoleSession(project, secret, userID, at)
	require.NoErrorf(t, s.CreateConsoleSession(t.Context(), cs), "CreateConsoleSession(%q, %q)", project, cs.ID)
	return cs
}

func mustGetConsoleSession(t *testing.T, s store.ConsoleSessionStore, project, id string) store.ConsoleSession {
	t.Helper()
	cs, err := s.GetConsoleSession(t.Context(), project, id)
	require.NoErrorf(t, err, "GetConsoleSession(%q, %q)", project, id)
	return cs
}

func wantConsoleSession(t *testing.T, want, got store.ConsoleSession, what string) {
	t.Helper()
	require.Equalf(t, want.ID, got.ID, "%s: ID", what)
	require.Equalf(t, want.ProjectID, got.ProjectID, "%s: ProjectID", what)
	require.Equalf(t, want.UserID, got.UserID, "%s: UserID", what)
	wantTime(t, want.CreatedAt, got.CreatedAt, "%s: CreatedAt", what)
	wantTime(t, want.LastSeenAt, got.LastSeenAt, "%s: LastSeenAt", what)
}

// wantConsoleGone fails unless the session is not found.
func wantConsoleGone(t *testing.T, s store.ConsoleSessionStore, project, id, what string) {
	t.Helper()
	_, err := s.GetConsoleSession(t.Context(), project, id)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetConsoleSession(%q, %q) of a session %s", project, id, what)
}

// CreateConsoleSession records every field; GetConsoleSession returns it
// with its times in UTC, truncated to microseconds.
func testConsoleCreateGet(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "admin@example.com")
	cs := store.ConsoleSession{ID: consoleID("secret-1"), ProjectID: projA, UserID: u.ID, CreatedAt: base.In(elsewhere), LastSeenAt: base.Add(time.Minute).In(elsewhere)}
	require.NoError(t, s.CreateConsoleSession(t.Context(), cs), "CreateConsoleSession")
	wantConsoleSession(t, cs, mustGetConsoleSession(t, s, projA, cs.ID), "GetConsoleSession")
	other := mustConsoleSession(t, s, projA, "secret-2", u.ID, base.Add(time.Hour))
	wantConsoleSession(t, other, mustGetConsoleSession(t, s, projA, other.ID), "GetConsoleSession of a second session")
	wantConsoleSession(t, cs, mustGetConsoleSession(t, s, projA, cs.ID), "GetConsoleSession of the first after a second create")
}

// CreateConsoleSession with an existing id is ErrConflict and keeps the
// first.
func testConsoleDuplicate(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	cs := mustConsoleSession(t, s, projA, "secret", "usr_1", base)
	dup := newConsoleSession(projA, "secret", "usr_2", base.Add(time.Hour))
	require.ErrorIs(t, s.CreateConsoleSession(t.Context(), dup), store.ErrConflict, "CreateConsoleSession with an existing id")
	wantConsoleSession(t, cs, mustGetConsoleSession(t, s, projA, cs.ID), "GetConsoleSession after a conflicting create")
}

// CreateConsoleSession in an unknown project is ErrNotFound and leaves
// nothing.
func testConsoleUnknownProject(t *testing.T, s store.Store) {
	cs := newConsoleSession("no-such-project", "secret", "usr_1", base)
	require.ErrorIs(t, s.CreateConsoleSession(t.Context(), cs), store.ErrNotFound, "CreateConsoleSession in an unknown project")
	mustProject(t, s, "no-such-project")
	wantConsoleGone(t, s, "no-such-project", cs.ID, "whose create failed, once the project exists")
}

// An unknown session is ErrNotFound to GetConsoleSession and
// TouchConsoleSession; deleting it succeeds. So is an id that is not a
// SHA-256 in hex.
func testConsoleUnknown(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	cs := mustConsoleSession(t, s, projA, "known", "usr_1", base)
	id := consoleID("unknown")
	wantConsoleGone(t, s, projA, id, "never created")
	require.ErrorIs(t, s.TouchConsoleSession(t.Context(), projA, id, base.Add(time.Minute)), store.ErrNotFound, "TouchConsoleSession of an unknown session")
	require.NoError(t, s.DeleteConsoleSession(t.Context(), projA, id), "DeleteConsoleSession of an unknown session")
	wantConsoleGone(t, s, "no-such-project", cs.ID, "looked up in an unknown project")
	require.ErrorIs(t, s.TouchConsoleSession(t.Context(), "no-such-project", cs.ID, base.Add(time.Minute)), store.ErrNotFound, "TouchConsoleSession in an unknown project")
	require.NoError(t, s.DeleteConsoleSession(t.Context(), "no-such-project", cs.ID), "DeleteConsoleSession in an unknown project")
	wantConsoleSession(t, cs, mustGetConsoleSession(t, s, projA, cs.ID), "the known session after calls on unknown ones")
	// An id that is not a SHA-256 in hex is one no session has.
	for _, id := range []string{"not-hex", strings.ToUpper(cs.ID), cs.ID[:len(cs.ID)-1]} {
		wantConsoleGone(t, s, projA, id, "an id that is not a SHA-256 in hex")
		require.ErrorIsf(t, s.TouchConsoleSession(t.Context(), projA, id, base.Add(time.Minute)), store.ErrNotFound, "TouchConsoleSession(%q)", id)
		require.NoErrorf(t, s.DeleteConsoleSession(t.Context(), projA, id), "DeleteConsoleSession(%q)", id)
	}
	wantConsoleSession(t, cs, mustGetConsoleSession(t, s, projA, cs.ID), "the known session after calls on ids that are not SHA-256s")
}

// Another project's session is reported exactly as a missing one: not
// found, not touched, and not deleted (deleting it succeeds as deleting a
// missing session does, and leaves it).
func testConsoleOtherProject(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	cs := mustConsoleSession(t, s, projA, "secret", "usr_1", base)
	wantConsoleGone(t, s, projB, cs.ID, "of project A, looked up in project B")
	require.ErrorIs(t, s.TouchConsoleSession(t.Context(), projB, cs.ID, base.Add(time.Hour)), store.ErrNotFound, "TouchConsoleSession through another project")
	require.NoError(t, s.DeleteConsoleSession(t.Context(), projB, cs.ID), "DeleteConsoleSession through another project")
	wantConsoleSession(t, cs, mustGetConsoleSession(t, s, projA, cs.ID), "project A's session after project B's calls")
}

// A session CheckConsoleSession refuses, an empty id, an invalid project
// or a zero time is ErrInvalid, and changes nothing.
func testConsoleInvalid(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	cs := mustConsoleSession(t, s, projA, "kept", "usr_1", base)
	for _, c := range []struct {
		name   string
		change func(cs *store.ConsoleSession)
	}{
		{"empty id", func(cs *store.ConsoleSession) { cs.ID = "" }},
		{"upper-case hex id", func(cs *store.ConsoleSession) { cs.ID = strings.ToUpper(cs.ID) }},
		{"id one character short", func(cs *store.ConsoleSession) { cs.ID = cs.ID[1:] }},
		{"id one character long", func(cs *store.ConsoleSession) { cs.ID += "0" }},
		{"id that is not hex", func(cs *store.ConsoleSession) { cs.ID = strings.Repeat("g", 64) }},
		{"the secret as id", func(cs *store.ConsoleSession) { cs.ID = "refused-secret" }},
		{"empty project", func(cs *store.ConsoleSession) { cs.ProjectID = "" }},
		{"invalid project", func(cs *store.ConsoleSession) { cs.ProjectID = "Proj A" }},
		{"empty user id", func(cs *store.ConsoleSession) { cs.UserID = "" }},
		{"user id with a space", func(cs *store.ConsoleSession) { cs.UserID = "usr 1" }},
		{"zero CreatedAt", func(cs *store.ConsoleSession) { cs.CreatedAt = time.Time{} }},
		{"zero LastSeenAt", func(cs *store.ConsoleSession) { cs.LastSeenAt = time.Time{} }},
	} {
		bad := newConsoleSession(projA, "refused-secret", "usr_1", base)
		c.change(&bad)
		require.Errorf(t, store.CheckConsoleSession(bad), "precondition: CheckConsoleSession refuses a session with %s", c.name)
		require.ErrorIsf(t, s.CreateConsoleSession(t.Context(), bad), store.ErrInvalid, "CreateConsoleSession with %s", c.name)
	}
	wantConsoleGone(t, s, projA, consoleID("refused-secret"), "whose creates were refused")
	for _, p := range []string{"", "Proj A"} {
		_, err := s.GetConsoleSession(t.Context(), p, cs.ID)
		require.ErrorIsf(t, err, store.ErrInvalid, "GetConsoleSession(%q, ...)", p)
		require.ErrorIsf(t, s.TouchConsoleSession(t.Context(), p, cs.ID, base.Add(time.Hour)), store.ErrInvalid, "TouchConsoleSession(%q, ...)", p)
		require.ErrorIsf(t, s.DeleteConsoleSession(t.Context(), p, cs.ID), store.ErrInvalid, "DeleteConsoleSession(%q, ...)", p)
	}
	_, err := s.GetConsoleSession(t.Context(), projA, "")
	require.ErrorIs(t, err, store.ErrInvalid, "GetConsoleSession with an empty id")
	require.ErrorIs(t, s.TouchConsoleSession(t.Context(), projA, "", base.Add(time.Hour)), store.ErrInvalid, "TouchConsoleSession with an empty id")
	require.ErrorIs(t, s.DeleteConsoleSession(t.Context(), projA, ""), store.ErrInvalid, "DeleteConsoleSession with an empty id")
	require.ErrorIs(t, s.TouchConsoleSession(t.Context(), projA, cs.ID, time.Time{}), store.ErrInvalid, "TouchConsoleSession with a zero time")
	wantConsoleSession(t, cs, mustGetConsoleSession(t, s, projA, cs.ID), "the session after refused calls")
}

// TouchConsoleSession sets LastSeenAt unless it is already at or after the
// time given: it never goes back, and nothing else changes.
func testConsoleTouch(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	cs := mustConsoleSession(t, s, projA, "touched", "usr_1", base)
	other := mustConsoleSession(t, s, projA, "other", "usr_1", base)
	steps := []struct{ at, want time.Time }{
		{base.Add(time.Minute).In(elsewhere), base.Add(time.Minute)},
		{base.Add(2 * time.Minute), base.Add(2 * time.Minute)},
		{base.Add(time.Minute), base.Add(2 * time.Minute)},
		{base.Add(2 * time.Minute), base.Add(2 * time.Minute)},
		{base.Add(2*time.Minute - 100), base.Add(2 * time.Minute)},
		{base.Add(2*time.Minute + time.Microsecond), base.Add(2*time.Minute + time.Microsecond)},
		{base.Add(-time.Hour), base.Add(2*time.Minute + time.Microsecond)},
	}
	for i, st := range steps {
		require.NoErrorf(t, s.TouchConsoleSession(t.Context(), projA, cs.ID, st.at), "TouchConsoleSession #%d (%s)", i, st.at.Format(time.RFC3339Nano))
		want := cs
		want.LastSeenAt = st.want
		wantConsoleSession(t, want, mustGetConsoleSession(t, s, projA, cs.ID), "the session after TouchConsoleSession")
	}
	wantConsoleSession(t, other, mustGetConsoleSession(t, s, projA, other.ID), "another session after TouchConsoleSession")
}

// DeleteConsoleSession ends the session and no other; deleting it again
// succeeds.
func testConsoleDelete(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	cs := mustConsoleSession(t, s, projA, "deleted", "usr_1", base)
	other := mustConsoleSession(t, s, projA, "other", "usr_1", base)
	require.NoError(t, s.DeleteConsoleSession(t.Context(), projA, cs.ID), "DeleteConsoleSession")
	wantConsoleGone(t, s, projA, cs.ID, "deleted")
	require.ErrorIs(t, s.TouchConsoleSession(t.Context(), projA, cs.ID, base.Add(time.Hour)), store.ErrNotFound, "TouchConsoleSession of a deleted session")
	require.NoError(t, s.DeleteConsoleSession(t.Context(), projA, cs.ID), "DeleteConsoleSession again")
	wantConsoleSession(t, other, mustGetConsoleSession(t, s, projA, other.ID), "another session after DeleteConsoleSession")
}

// pruneConsole calls PruneConsoleSessions and checks the count.
func pruneConsole(t *testing.T, s store.ConsoleSessionStore, idleBefore, createdBefore time.Time, want int) {
	t.Helper()
	n, err := s.PruneConsoleSessions(t.Context(), idleBefore, createdBefore)
	require.NoErrorf(t, err, "PruneConsoleSessions(%s, %s)", idleBefore.Format(time.RFC3339Nano), createdBefore.Format(time.RFC3339Nano))
	require.Equalf(t, want, n, "PruneConsoleSessions(%s, %s): sessions deleted", idleBefore.Format(time.RFC3339Nano), createdBefore.Format(time.RFC3339Nano))
}

// PruneConsoleSessions deletes the sessions, of every project, last seen
// before idleBefore, and keeps those seen at or after it.
func testConsolePruneIdle(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	cut := aligned.Add(time.Hour)
	seen := func(project, secret string, at time.Time) store.ConsoleSession {
		t.Helper()
		cs := mustConsoleSession(t, s, project, secret, "usr_1", aligned)
		require.NoError(t, s.TouchConsoleSession(t.Context(), project, cs.ID, at), "TouchConsoleSession")
		cs.LastSeenAt = at
		return cs
	}
	idleA := seen(projA, "idle-a", cut.Add(-time.Microsecond))
	idleB := seen(projB, "idle-b", aligned.Add(time.Minute))
	atCut := seen(projA, "at-cut", cut)
	active := seen(projA, "active", cut.Add(time.Minute))
	pruneConsole(t, s, cut.In(elsewhere), aligned.Add(-time.Hour), 2)
	wantConsoleGone(t, s, projA, idleA.ID, "idle before the cut")
	wantConsoleGone(t, s, projB, idleB.ID, "of project B idle before the cut")
	wantConsoleSession(t, atCut, mustGetConsoleSession(t, s, projA, atCut.ID), "a session last seen at the cut")
	wantConsoleSession(t, active, mustGetConsoleSession(t, s, projA, active.ID), "a session seen after the cut")
	pruneConsole(t, s, cut, aligned.Add(-time.Hour), 0)
}

// PruneConsoleSessions deletes the sessions created before createdBefore,
// however recently seen, and keeps those created at or after it.
func testConsolePruneCreated(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	cut := aligned.Add(time.Hour)
	old := mustConsoleSession(t, s, projA, "old", "usr_1", cut.Add(-time.Microsecond))
	require.NoError(t, s.TouchConsoleSession(t.Context(), projA, old.ID, cut.Add(time.Hour)), "TouchConsoleSession")
	atCut := mustConsoleSession(t, s, projA, "at-cut", "usr_1", cut)
	young := mustConsoleSession(t, s, projA, "young", "usr_1", cut.Add(time.Minute))
	pruneConsole(t, s, aligned.Add(-time.Hour), cut, 1)
	wantConsoleGone(t, s, projA, old.ID, "created before the cut, though seen since")
	wantConsoleSession(t, atCut, mustGetConsoleSession(t, s, projA, atCut.ID), "a session created at the cut")
	wantConsoleSession(t, young, mustGetConsoleSession(t, s, projA, young.ID), "a session created after the cut")
}

// PruneConsoleSessions with a zero time is ErrInvalid and deletes nothing.
func testConsolePruneInvalid(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	cs := mustConsoleSession(t, s, projA, "kept", "usr_1", base)
	for _, c := range []struct{ idle, created time.Time }{{time.Time{}, base.Add(time.Hour)}, {base.Add(time.Hour), time.Time{}}, {}} {
		_, err := s.PruneConsoleSessions(t.Context(), c.idle, c.created)
		require.ErrorIsf(t, err, store.ErrInvalid, "PruneConsoleSessions(%s, %s)", c.idle.Format(time.RFC3339Nano), c.created.Format(time.RFC3339Nano))
	}
	wantConsoleSession(t, cs, mustGetConsoleSession(t, s, projA, cs.ID), "the session after refused prunes")
}
