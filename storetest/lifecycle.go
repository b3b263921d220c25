package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

func lifecycleCases() []testCase {
	return []testCase{
		{"TimesInUTC", testStoreTimesInUTC},
		{"CallsAfterCloseFail", testStoreCallsAfterCloseFail},
	}
}

// Every time a store returns is in UTC, whatever zone it was written in.
func testStoreTimesInUTC(t *testing.T, s store.Store) {
	require.NoErrorf(t, s.CreateProject(t.Context(), store.Project{ID: projA, CreatedAt: base.In(elsewhere)}), "CreateProject")
	ps, err := s.ListProjects(t.Context())
	require.NoErrorf(t, err, "ListProjects()")
	wantTime(t, base, ps[0].CreatedAt, "ListProjects()[0].CreatedAt")
	u := newUser(projA, "utc@example.com")
	u.CreatedAt = base.In(elsewhere)
	require.NoErrorf(t, s.CreateUser(t.Context(), u), "CreateUser")
	got, err := s.GetUserByEmail(t.Context(), projA, u.Email)
	require.NoErrorf(t, err, "GetUserByEmail")
	wantTime(t, base, got.CreatedAt, "GetUserByEmail().CreatedAt")
	k := newSigningKey(projA, "sk_utc", base.In(elsewhere))
	require.NoErrorf(t, s.CreateSigningKey(t.Context(), k), "CreateSigningKey")
	ks, err := s.ListSigningKeys(t.Context(), projA)
	require.NoErrorf(t, err, "ListSigningKeys")
	wantTime(t, base, ks[0].CreatedAt, "ListSigningKeys()[0].CreatedAt")
	a := newAPIKey(projA, "key_utc", base.In(elsewhere))
	require.NoErrorf(t, s.CreateAPIKey(t.Context(), a), "CreateAPIKey")
	require.NoErrorf(t, s.TouchAPIKey(t.Context(), projA, a.ID, base.In(elsewhere)), "TouchAPIKey")
	aks, err := s.ListAPIKeys(t.Context(), projA)
	require.NoErrorf(t, err, "ListAPIKeys")
	wantTime(t, base, aks[0].CreatedAt, "ListAPIKeys()[0].CreatedAt")
	wantTime(t, base, aks[0].LastUsedAt, "ListAPIKeys()[0].LastUsedAt")
	require.NoError(t, s.RevokeAPIKey(t.Context(), projA, a.ID, base.In(elsewhere)), "RevokeAPIKey")
	feed := feedList(s, projA).all(t)
	require.Len(t, feed, 1, "ListRevocations")
	wantTime(t, base, feed[0].RevokedAt, "ListRevocations()[0].RevokedAt")
	require.NoError(t, s.DisableUser(t.Context(), projA, u.ID, base.In(elsewhere)), "DisableUser")
	users := userList(s, projA, "").all(t)
	wantTime(t, base, users[0].CreatedAt, "ListUsers()[0].CreatedAt")
	wantTime(t, base, users[0].DisabledAt, "ListUsers()[0].DisabledAt")
	require.NoError(t, s.AppendAudit(t.Context(), newAudit(projA, "aud_utc", base.In(elsewhere), store.ActionSignIn, "")), "AppendAudit")
	wantTime(t, base, auditList(s, projA, store.AuditFilter{}).all(t)[0].At, "ListAudit()[0].At")
	cs := newConsoleSession(projA, "utc", u.ID, base.In(elsewhere))
	require.NoError(t, s.CreateConsoleSession(t.Context(), cs), "CreateConsoleSession")
	got2 := mustGetConsoleSession(t, s, projA, cs.ID)
	wantTime(t, base, got2.CreatedAt, "GetConsoleSession().CreatedAt")
	wantTime(t, base, got2.LastSeenAt, "GetConsoleSession().LastSeenAt")
}

// Calls after Close fail. (The factory's cleanup closes the store again
// and must ignore that error.)
func testStoreCallsAfterCloseFail(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	require.NoError(t, s.Close(), "Close()")
	_, err := s.GetProject(t.Context(), projA)
	require.Error(t, err, "GetProject after Close")
	require.Error(t, s.CreateProject(t.Context(), store.Project{ID: projB, CreatedAt: base}), "CreateProject after Close")
	_, err = s.ListContacts(t.Context(), projA, paginate.Request{Limit: 10})
	require.Error(t, err, "ListContacts after Close")
	_, _, err = s.AddFailure(t.Context(), "k", base, 1)
	require.Error(t, err, "AddFailure after Close")
	_, err = s.ListRevocations(t.Context(), projA, paginate.Request{Limit: 10})
	require.Error(t, err, "ListRevocations after Close")
	require.Error(t, s.AppendAudit(t.Context(), newAudit(projA, "aud_closed", base, store.ActionSignIn, "")), "AppendAudit after Close")
	_, err = s.GetConsoleSession(t.Context(), projA, consoleID("closed"))
	require.Error(t, err, "GetConsoleSession after Close")
}
