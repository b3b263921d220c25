package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// Cases of the optional [store.ChangeVersioner] capability. Run and
// RunShared register them only for a store that implements it: a store
// without it promises nothing here, and callers fall back to reading it
// every time.

func changeVersionCases() []testCase {
	return []testCase{
		{"UnchangedWithoutWrites", testChangeVersionUnchanged},
		{"ChangesAfterEachWrite", testChangeVersionChanges},
	}
}

func changeVersion(t *testing.T, cv store.ChangeVersioner, what string) uint64 {
	t.Helper()
	v, err := cv.ChangeVersion(t.Context())
	require.NoErrorf(t, err, "ChangeVersion() %s", what)
	return v
}

// Reads do not change the version, nor does time.
func testChangeVersionUnchanged(t *testing.T, s store.Store) {
	cv := capability[store.ChangeVersioner](t, s)
	mustProject(t, s, projA)
	mustAPIKey(t, s, projA, "key_v", base)
	v1 := changeVersion(t, cv, "after the writes")
	for range 3 {
		_, err := s.GetAPIKey(t.Context(), projA, "key_v")
		require.NoErrorf(t, err, "GetAPIKey")
		_, err = s.ListProjects(t.Context())
		require.NoErrorf(t, err, "ListProjects")
		require.Equalf(t, v1, changeVersion(t, cv, "after reads only"), "ChangeVersion() after reads only, want it unchanged")
	}
}

// Every kind of write through the handle, once returned, gives a version
// different from every earlier one.
func testChangeVersionChanges(t *testing.T, s store.Store) {
	cv := capability[store.ChangeVersioner](t, s)
	ctx := t.Context()
	seen := map[uint64]string{changeVersion(t, cv, "at start"): "start"}
	step := func(name string, err error) {
		t.Helper()
		require.NoErrorf(t, err, "%s", name)
		v := changeVersion(t, cv, "after "+name)
		prev, ok := seen[v]
		require.Falsef(t, ok, "ChangeVersion() after %s = %d, the value it had after %s: a committed write went unnoticed", name, v, prev)
		seen[v] = name
	}
	step("CreateProject", s.CreateProject(ctx, store.Project{ID: projA, CreatedAt: base}))
	step("CreateAPIKey", s.CreateAPIKey(ctx, newAPIKey(projA, "key_v", base)))
	step("TouchAPIKey", s.TouchAPIKey(ctx, projA, "key_v", base.Add(1e9)))
	step("RevokeAPIKey", s.RevokeAPIKey(ctx, projA, "key_v", base.Add(2e9)))
	step("CreateSigningKey old", s.CreateSigningKey(ctx, newSigningKey(projA, "sk_old", base)))
	step("CreateSigningKey new", s.CreateSigningKey(ctx, newSigningKey(projA, "sk_new", base.Add(1e9))))
	step("RetireSigningKey", s.RetireSigningKey(ctx, projA, "sk_old", base.Add(2e9)))
	u := newUser(projA, "v@example.com")
	step("CreateUser", s.CreateUser(ctx, u))
	_, err := s.CreateContact(ctx, newContact(projA, "ct_v", base))
	step("CreateContact", err)
	step("SetUserTags", s.SetUserTags(ctx, projA, u.ID, []string{"admin"}))
	f := newFamily(projA, u.ID, base, time.Hour)
	step("CreateRefreshFamily", s.CreateRefreshFamily(ctx, f, userHash))
	step("DisableUser", s.DisableUser(ctx, projA, u.ID, base.Add(3e9)))
	step("EnableUser", s.EnableUser(ctx, projA, u.ID))
	step("AppendAudit", s.AppendAudit(ctx, newAudit(projA, "aud_v", base, store.ActionSignIn, "")))
	cs := newConsoleSession(projA, "v", u.ID, base)
	step("CreateConsoleSession", s.CreateConsoleSession(ctx, cs))
	step("TouchConsoleSession", s.TouchConsoleSession(ctx, projA, cs.ID, base.Add(1e9)))
	step("DeleteConsoleSession", s.DeleteConsoleSession(ctx, projA, cs.ID))
	// The writes of the other areas, each with something to change.
	k := newAPIKey(projA, "key_roll", base)
	step("CreateAPIKey to roll", s.CreateAPIKey(ctx, k))
	_, err = s.RollAPIKey(ctx, projA, k.ID, successorOf(k, "key_rolled", base.Add(1e9)), base.Add(2e9))
	step("RollAPIKey", err)
	_, err = s.ListRevocations(ctx, projA, paginate.Request{Limit: 10})
	step("ListRevocations placing the roll's due revocation", err)
	const newHash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$b3RoZXJvdGhlcm90aGVyb3RoZXJvdGhlcm90aGVyb3Q"
	step("SetPasswordHash", s.SetPasswordHash(ctx, projA, u.ID, newHash))
	step("ReplacePasswordHash", s.ReplacePasswordHash(ctx, projA, u.ID, newHash, userHash))
	g := newFamily(projA, u.ID, base.Add(5e9), time.Hour)
	g.EndsAt = base.Add(30 * time.Minute)
	step("CreateRefreshFamily with an EndsAt", s.CreateRefreshFamily(ctx, g, userHash))
	_, err = s.RotateRefresh(ctx, projA, g.ID, 0, rotateParams(base.Add(6e9)))
	step("RotateRefresh", err)
	step("ScheduleSessionEnd", s.ScheduleSessionEnd(ctx, projA, g.ID))
	step("RevokeRefreshFamily", s.RevokeRefreshFamily(ctx, projA, g.ID, base.Add(7e9)))
	step("CreateRefreshFamily to end", s.CreateRefreshFamily(ctx, newFamily(projA, u.ID, base.Add(8e9), time.Hour), userHash))
	step("EndUserSessions", s.EndUserSessions(ctx, projA, u.ID, base.Add(9e9)))
	step("CreateContacts", s.CreateContacts(ctx, projA, []store.Contact{newContact(projA, "ct_w", base), newContact(projA, "ct_x", base)}))
	step("DeleteContact", s.DeleteContact(ctx, projA, "ct_v"))
	_, _, err = s.AddFailure(ctx, "ip:192.0.2.1", base, time.Minute)
	step("AddFailure", err)
	step("ClearFailures", s.ClearFailures(ctx, "ip:192.0.2.1"))
	_, _, err = s.AddFailure(ctx, "ip:192.0.2.1", base, time.Minute)
	step("AddFailure again", err)
	pruned := func(name string, n int, err error) {
		t.Helper()
		require.NoErrorf(t, err, "%s", name)
		require.Positivef(t, n, "%s deleted nothing", name)
		step(name, nil)
	}
	n, err := s.PruneThrottle(ctx, base.Add(time.Hour))
	pruned("PruneThrottle", n, err)
	step("SetSetting", s.SetSetting(ctx, store.SettingPublicURL, "https://id.example.com"))
	n, err = s.PruneSessionRevocations(ctx, base.Add(24*time.Hour))
	pruned("PruneSessionRevocations", n, err)
	n, err = s.PruneAudit(ctx, base.Add(time.Hour))
	pruned("PruneAudit", n, err)
	step("CreateConsoleSession to prune", s.CreateConsoleSession(ctx, newConsoleSession(projA, "w", u.ID, base)))
	n, err = s.PruneConsoleSessions(ctx, base.Add(time.Hour), base.Add(time.Hour))
	pruned("PruneConsoleSessions", n, err)
	n, err = s.PruneRefreshFamilies(ctx, base.Add(24*time.Hour))
	pruned("PruneRefreshFamilies", n, err)
}

// A write through one handle changes the version the other handle reports,
// and only a write does.
func testSharedChangeVersion(t *testing.T, a, b store.Store) {
	cva := capability[store.ChangeVersioner](t, a)
	cvb := capability[store.ChangeVersioner](t, b)
	ctx := t.Context()
	mustProject(t, a, projA)
	mustAPIKey(t, a, projA, "key_v", base)
	require.NoErrorf(t, a.CreateSigningKey(ctx, newSigningKey(projA, "sk_old", base)), "a.CreateSigningKey")
	require.NoErrorf(t, a.CreateSigningKey(ctx, newSigningKey(projA, "sk_new", base.Add(1e9))), "a.CreateSigningKey")

	check := func(name string, write func(context.Context) error) {
		t.Helper()
		va := changeVersion(t, cva, "a, before "+name)
		require.Equalf(t, va, changeVersion(t, cva, "a, again before "+name), "a.ChangeVersion() twice with no write in between")
		vb := changeVersion(t, cvb, "b, before "+name)
		require.NoErrorf(t, write(ctx), "%s", name)
		require.NotEqualf(t, va, changeVersion(t, cva, "a, after "+name), "a.ChangeVersion() both before and after %s: the other handle's commit went unnoticed", name)
		require.NotEqualf(t, vb, changeVersion(t, cvb, "b, after "+name), "b.ChangeVersion() both before and after %s", name)
	}
	check("b.RevokeAPIKey", func(ctx context.Context) error { return b.RevokeAPIKey(ctx, projA, "key_v", base) })
	check("b.RetireSigningKey", func(ctx context.Context) error { return b.RetireSigningKey(ctx, projA, "sk_old", base) })
	check("a.TouchAPIKey", func(ctx context.Context) error { return a.TouchAPIKey(ctx, projA, "key_v", base.Add(1e9)) })
}
