package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

func apiKeyCases() []testCase {
	return []testCase{
		{"CreateGet", testAPIKeyCreateGet},
		{"Duplicate", testAPIKeyDuplicate},
		{"Unknown", testAPIKeyUnknown},
		{"Invalid", testAPIKeyInvalid},
		{"UnknownProject", testAPIKeyUnknownProject},
		{"ListOrder", testAPIKeyListOrder},
		{"Revoke", testAPIKeyRevoke},
		{"RevokeTwiceKeepsFirst", testAPIKeyRevokeTwice},
		{"Touch", testAPIKeyTouch},
		{"OtherProject", testAPIKeyOtherProject},
	}
}

func wantAPIKey(t *testing.T, want, got store.APIKey, what string) {
	t.Helper()
	require.Equalf(t, want.ID, got.ID, "%s: ID", what)
	require.Equalf(t, want.ProjectID, got.ProjectID, "%s: ProjectID", what)
	require.Equalf(t, want.Name, got.Name, "%s: Name", what)
	wantTime(t, want.CreatedAt, got.CreatedAt, "%s: CreatedAt", what)
	wantTime(t, want.LastUsedAt, got.LastUsedAt, "%s: LastUsedAt", what)
	wantTime(t, want.RevokedAt, got.RevokedAt, "%s: RevokedAt", what)
}

func mustGetAPIKey(t *testing.T, s store.APIKeyStore, project, id string) store.APIKey {
	t.Helper()
	k, err := s.GetAPIKey(t.Context(), project, id)
	require.NoErrorf(t, err, "GetAPIKey(%q, %q)", project, id)
	return k
}

// CreateAPIKey records the key; GetAPIKey returns it unused and unrevoked.
func testAPIKeyCreateGet(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := store.APIKey{ID: store.NewID(store.PrefixAPIKey), ProjectID: projA, Name: "billing backend — prod", CreatedAt: base.In(elsewhere)}
	require.NoErrorf(t, s.CreateAPIKey(t.Context(), k), "CreateAPIKey(%q)", k.ID)
	got := mustGetAPIKey(t, s, projA, k.ID)
	wantAPIKey(t, k, got, "GetAPIKey")
	wantZeroTime(t, got.LastUsedAt, "GetAPIKey(...).LastUsedAt of an unused key")
	wantZeroTime(t, got.RevokedAt, "GetAPIKey(...).RevokedAt of a valid key")
	require.False(t, got.Revoked(), "Revoked() of a new key")

	k2 := mustAPIKey(t, s, projA, store.NewID(store.PrefixAPIKey), base.Add(time.Second))
	wantAPIKey(t, k2, mustGetAPIKey(t, s, projA, k2.ID), "GetAPIKey of a second key")
	wantAPIKey(t, k, mustGetAPIKey(t, s, projA, k.ID), "GetAPIKey of the first key after a second create")
}

// CreateAPIKey returns ErrConflict for an existing id and keeps the first.
func testAPIKeyDuplicate(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := mustAPIKey(t, s, projA, "key_dup", base)
	dup := newAPIKey(projA, "key_dup", base.Add(time.Hour))
	dup.Name = "other"
	require.ErrorIsf(t, s.CreateAPIKey(t.Context(), dup), store.ErrConflict, "CreateAPIKey(%q) with an existing id", dup.ID)
	wantAPIKey(t, k, mustGetAPIKey(t, s, projA, k.ID), "GetAPIKey after a conflicting create")
	keys, err := s.ListAPIKeys(t.Context(), projA)
	require.NoErrorf(t, err, "ListAPIKeys(%q)", projA)
	require.Len(t, keys, 1)
}

// GetAPIKey, RevokeAPIKey and TouchAPIKey return ErrNotFound for an unknown
// key.
func testAPIKeyUnknown(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := mustAPIKey(t, s, projA, "key_known", base)
	for _, id := range []string{"key_unknown", "KEY_KNOWN", "key_know"} {
		_, err := s.GetAPIKey(t.Context(), projA, id)
		require.ErrorIsf(t, err, store.ErrNotFound, "GetAPIKey(%q, %q)", projA, id)
		require.ErrorIsf(t, s.RevokeAPIKey(t.Context(), projA, id, base), store.ErrNotFound, "RevokeAPIKey(%q, %q)", projA, id)
		require.ErrorIsf(t, s.TouchAPIKey(t.Context(), projA, id, base), store.ErrNotFound, "TouchAPIKey(%q, %q)", projA, id)
	}
	_, err := s.GetAPIKey(t.Context(), "no-such-project", k.ID)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetAPIKey in an unknown project")
	require.ErrorIsf(t, s.RevokeAPIKey(t.Context(), "no-such-project", k.ID, base), store.ErrNotFound, "RevokeAPIKey in an unknown project")
	require.ErrorIsf(t, s.TouchAPIKey(t.Context(), "no-such-project", k.ID, base), store.ErrNotFound, "TouchAPIKey in an unknown project")
	wantAPIKey(t, k, mustGetAPIKey(t, s, projA, k.ID), "GetAPIKey after calls on unknown keys")
}

// Empty ids and names and invalid project ids are ErrInvalid and change
// nothing.
func testAPIKeyInvalid(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := mustAPIKey(t, s, projA, "key_ok", base)

	noID := newAPIKey(projA, "", base)
	require.ErrorIsf(t, s.CreateAPIKey(t.Context(), noID), store.ErrInvalid, "CreateAPIKey with an empty id")
	noName := newAPIKey(projA, "key_noname", base)
	noName.Name = ""
	require.ErrorIsf(t, s.CreateAPIKey(t.Context(), noName), store.ErrInvalid, "CreateAPIKey with an empty name")
	_, err := s.GetAPIKey(t.Context(), projA, noName.ID)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetAPIKey(%q) after a rejected create", noName.ID)

	_, err = s.GetAPIKey(t.Context(), projA, "")
	require.ErrorIsf(t, err, store.ErrInvalid, "GetAPIKey(%q, \"\")", projA)
	require.ErrorIsf(t, s.RevokeAPIKey(t.Context(), projA, "", base), store.ErrInvalid, "RevokeAPIKey(%q, \"\")", projA)
	require.ErrorIsf(t, s.TouchAPIKey(t.Context(), projA, "", base), store.ErrInvalid, "TouchAPIKey(%q, \"\")", projA)

	for _, p := range []string{"", "Proj A"} {
		bad := newAPIKey(p, "key_badproject", base)
		require.ErrorIsf(t, s.CreateAPIKey(t.Context(), bad), store.ErrInvalid, "CreateAPIKey in project %q", p)
		_, err = s.GetAPIKey(t.Context(), p, k.ID)
		require.ErrorIsf(t, err, store.ErrInvalid, "GetAPIKey(%q, %q)", p, k.ID)
		_, err = s.ListAPIKeys(t.Context(), p)
		require.ErrorIsf(t, err, store.ErrInvalid, "ListAPIKeys(%q)", p)
		require.ErrorIsf(t, s.RevokeAPIKey(t.Context(), p, k.ID, base), store.ErrInvalid, "RevokeAPIKey(%q, %q)", p, k.ID)
		require.ErrorIsf(t, s.TouchAPIKey(t.Context(), p, k.ID, base), store.ErrInvalid, "TouchAPIKey(%q, %q)", p, k.ID)
	}
	wantAPIKey(t, k, mustGetAPIKey(t, s, projA, k.ID), "GetAPIKey after rejected calls")
}

// CreateAPIKey in an unknown project is ErrNotFound and leaves no row.
func testAPIKeyUnknownProject(t *testing.T, s store.Store) {
	k := newAPIKey("no-such-project", "key_orphan", base)
	require.ErrorIsf(t, s.CreateAPIKey(t.Context(), k), store.ErrNotFound, "CreateAPIKey in unknown project %q", k.ProjectID)
	mustProject(t, s, "no-such-project")
	_, err := s.GetAPIKey(t.Context(), "no-such-project", k.ID)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetAPIKey after the project is created: the failed create must have left no row")
	keys, err := s.ListAPIKeys(t.Context(), "no-such-project")
	require.NoErrorf(t, err, "ListAPIKeys(%q)", "no-such-project")
	require.Empty(t, keys)
}

// ListAPIKeys returns the project's keys, revoked ones included, ascending
// by (CreatedAt, ID) with ids compared byte-wise; another project's keys
// are not listed.
func testAPIKeyListOrder(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)

	keys, err := s.ListAPIKeys(t.Context(), projA)
	require.NoErrorf(t, err, "ListAPIKeys(%q) of a project without keys", projA)
	require.Empty(t, keys)

	later := base.Add(time.Hour)
	mustAPIKey(t, s, projA, "key_a", later)
	mustAPIKey(t, s, projA, "key_z", base)
	mustAPIKey(t, s, projA, "key_B", later.Add(-300*time.Nanosecond)) // same microsecond as later
	mustAPIKey(t, s, projA, "key_Z", base)
	mustAPIKey(t, s, projA, "key_0", base.Add(-time.Minute))
	mustAPIKey(t, s, projB, "key_other", base)
	require.NoErrorf(t, s.RevokeAPIKey(t.Context(), projA, "key_z", later), "RevokeAPIKey(key_z)")

	keys, err = s.ListAPIKeys(t.Context(), projA)
	require.NoErrorf(t, err, "ListAPIKeys(%q)", projA)
	var ids []string
	for _, k := range keys {
		ids = append(ids, k.ID)
		require.Equal(t, projA, k.ProjectID)
	}
	require.Equal(t, []string{"key_0", "key_Z", "key_z", "key_B", "key_a"}, ids, "ListAPIKeys order")
	wantTime(t, later, keys[2].RevokedAt, "ListAPIKeys: RevokedAt of the revoked key")
	wantTime(t, later, keys[3].CreatedAt, "ListAPIKeys: CreatedAt of key_B")

	// An unknown project has no keys; it may say so with ErrNotFound.
	keys, err = s.ListAPIKeys(t.Context(), "no-such-project")
	if err != nil {
		require.ErrorIsf(t, err, store.ErrNotFound, "ListAPIKeys(%q)", "no-such-project")
	}
	require.Empty(t, keys, "ListAPIKeys of an unknown project")
}

// RevokeAPIKey sets RevokedAt; the key is still listed and readable.
func testAPIKeyRevoke(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := mustAPIKey(t, s, projA, "key_r", base)
	other := mustAPIKey(t, s, projA, "key_s", base)
	at := base.Add(90 * time.Minute).In(elsewhere)
	require.NoErrorf(t, s.RevokeAPIKey(t.Context(), projA, k.ID, at), "RevokeAPIKey(%q)", k.ID)
	got := mustGetAPIKey(t, s, projA, k.ID)
	k.RevokedAt = at
	wantAPIKey(t, k, got, "GetAPIKey after RevokeAPIKey")
	require.True(t, got.Revoked(), "Revoked() after RevokeAPIKey")
	wantAPIKey(t, other, mustGetAPIKey(t, s, projA, other.ID), "GetAPIKey of another key")
	keys, err := s.ListAPIKeys(t.Context(), projA)
	require.NoErrorf(t, err, "ListAPIKeys(%q)", projA)
	require.Len(t, keys, 2, "revoked keys are listed")
}

// Revoking a revoked key succeeds and keeps the first revocation time.
func testAPIKeyRevokeTwice(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := mustAPIKey(t, s, projA, "key_r", base)
	first := base.Add(time.Hour)
	require.NoErrorf(t, s.RevokeAPIKey(t.Context(), projA, k.ID, first), "RevokeAPIKey(%q) first", k.ID)
	require.NoErrorf(t, s.RevokeAPIKey(t.Context(), projA, k.ID, first.Add(time.Hour)), "RevokeAPIKey(%q) again, later", k.ID)
	wantTime(t, first, mustGetAPIKey(t, s, projA, k.ID).RevokedAt, "RevokedAt after a second, later revocation")
	require.NoErrorf(t, s.RevokeAPIKey(t.Context(), projA, k.ID, first), "RevokeAPIKey(%q) again, same time", k.ID)
	wantTime(t, first, mustGetAPIKey(t, s, projA, k.ID).RevokedAt, "RevokedAt after a third revocation")
}

// TouchAPIKey sets LastUsedAt unless it is already at or after the time
// given: it never goes back.
func testAPIKeyTouch(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := mustAPIKey(t, s, projA, "key_t", base)
	other := mustAPIKey(t, s, projA, "key_u", base)
	steps := []struct {
		at   time.Time
		want time.Time
	}{
		{base.Add(time.Minute).In(elsewhere), base.Add(time.Minute)},
		{base.Add(2 * time.Minute), base.Add(2 * time.Minute)},
		{base.Add(time.Minute), base.Add(2 * time.Minute)},                                       // earlier: kept
		{base.Add(2 * time.Minute), base.Add(2 * time.Minute)},                                   // equal: kept
		{base.Add(2*time.Minute - 100), base.Add(2 * time.Minute)},                               // earlier by nanoseconds, same microsecond
		{base.Add(2*time.Minute + time.Microsecond), base.Add(2*time.Minute + time.Microsecond)}, // one microsecond later
		{base.Add(-time.Hour), base.Add(2*time.Minute + time.Microsecond)},                       // before creation: kept
	}
	for i, st := range steps {
		require.NoErrorf(t, s.TouchAPIKey(t.Context(), projA, k.ID, st.at), "TouchAPIKey #%d (%s)", i, st.at.Format(time.RFC3339Nano))
		got := mustGetAPIKey(t, s, projA, k.ID)
		wantTime(t, st.want, got.LastUsedAt, "LastUsedAt after TouchAPIKey #%d (%s)", i, st.at.Format(time.RFC3339Nano))
		require.Falsef(t, got.Revoked(), "TouchAPIKey #%d revoked the key", i)
		wantTime(t, base, got.CreatedAt, "CreatedAt after TouchAPIKey #%d", i)
	}
	wantAPIKey(t, other, mustGetAPIKey(t, s, projA, other.ID), "another key after TouchAPIKey")

	// Touching a revoked key does not change its revocation.
	require.NoErrorf(t, s.RevokeAPIKey(t.Context(), projA, k.ID, base.Add(time.Hour)), "RevokeAPIKey(%q)", k.ID)
	err := s.TouchAPIKey(t.Context(), projA, k.ID, base.Add(2*time.Hour))
	if err != nil {
		require.ErrorIsf(t, err, store.ErrConflict, "TouchAPIKey of a revoked key")
	}
	wantTime(t, base.Add(time.Hour), mustGetAPIKey(t, s, projA, k.ID).RevokedAt, "RevokedAt after touching a revoked key")
}

// Another project's key is reported exactly as a missing one and cannot be
// revoked or touched through this project.
func testAPIKeyOtherProject(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	k := mustAPIKey(t, s, projA, "key_a", base)
	_, err := s.GetAPIKey(t.Context(), projB, k.ID)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetAPIKey(%q, %q) of project %q's key", projB, k.ID, projA)
	require.ErrorIsf(t, s.RevokeAPIKey(t.Context(), projB, k.ID, base), store.ErrNotFound, "RevokeAPIKey(%q, %q) of project %q's key", projB, k.ID, projA)
	require.ErrorIsf(t, s.TouchAPIKey(t.Context(), projB, k.ID, base), store.ErrNotFound, "TouchAPIKey(%q, %q) of project %q's key", projB, k.ID, projA)
	keys, err := s.ListAPIKeys(t.Context(), projB)
	require.NoErrorf(t, err, "ListAPIKeys(%q)", projB)
	require.Empty(t, keys, "ListAPIKeys of project B lists project A's key")
	wantAPIKey(t, k, mustGetAPIKey(t, s, projA, k.ID), "project A's key after project B's calls")
}
