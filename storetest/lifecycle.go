package storetest

import (
	"testing"

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
	noErr(t, s.CreateProject(t.Context(), store.Project{ID: projA, CreatedAt: base.In(elsewhere)}), "CreateProject")
	ps, err := s.ListProjects(t.Context())
	noErr(t, err, "ListProjects()")
	wantTime(t, base, ps[0].CreatedAt, "ListProjects()[0].CreatedAt")
	u := newUser(projA, "utc@example.com")
	u.CreatedAt = base.In(elsewhere)
	noErr(t, s.CreateUser(t.Context(), u), "CreateUser")
	got, err := s.GetUserByEmail(t.Context(), projA, u.Email)
	noErr(t, err, "GetUserByEmail")
	wantTime(t, base, got.CreatedAt, "GetUserByEmail().CreatedAt")
	k := newSigningKey(projA, "sk_utc", base.In(elsewhere))
	noErr(t, s.CreateSigningKey(t.Context(), k), "CreateSigningKey")
	ks, err := s.ListSigningKeys(t.Context(), projA)
	noErr(t, err, "ListSigningKeys")
	wantTime(t, base, ks[0].CreatedAt, "ListSigningKeys()[0].CreatedAt")
	a := newAPIKey(projA, "key_utc", base.In(elsewhere))
	noErr(t, s.CreateAPIKey(t.Context(), a), "CreateAPIKey")
	noErr(t, s.TouchAPIKey(t.Context(), projA, a.ID, base.In(elsewhere)), "TouchAPIKey")
	aks, err := s.ListAPIKeys(t.Context(), projA)
	noErr(t, err, "ListAPIKeys")
	wantTime(t, base, aks[0].CreatedAt, "ListAPIKeys()[0].CreatedAt")
	wantTime(t, base, aks[0].LastUsedAt, "ListAPIKeys()[0].LastUsedAt")
}

// Calls after Close fail. (The factory's cleanup closes the store again
// and must ignore that error.)
func testStoreCallsAfterCloseFail(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v, want nil", err)
	}
	if _, err := s.GetProject(t.Context(), projA); err == nil {
		t.Fatal("GetProject after Close = nil error, want an error")
	}
	if err := s.CreateProject(t.Context(), store.Project{ID: projB, CreatedAt: base}); err == nil {
		t.Fatal("CreateProject after Close = nil error, want an error")
	}
	if _, err := s.ListContacts(t.Context(), projA, paginate.Request{Limit: 10}); err == nil {
		t.Fatal("ListContacts after Close = nil error, want an error")
	}
	if _, _, err := s.AddFailure(t.Context(), "k", base, 1); err == nil {
		t.Fatal("AddFailure after Close = nil error, want an error")
	}
}
