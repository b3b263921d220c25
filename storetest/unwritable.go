package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

// RunUnwritable checks a store on a database that answers but cannot take
// writes now (a standby in recovery, a database or role set read-only):
// every method that writes, the prunes included, returns an error matching
// store.ErrUnavailable and changes nothing, and the reads still answer. A
// store that implements store.WritableChecker says nil before and
// ErrUnavailable after.
//
// open is called once. It returns a handle on a fresh, empty database that
// can write, which the test fills, and a function that makes that database
// unwritable and returns a handle on it (a new one, or the same); open
// registers its own t.Cleanup that closes them.
func RunUnwritable(t *testing.T, open func(t *testing.T) (writable store.Store, freeze func(t *testing.T) store.Store)) {
	t.Helper()
	rw0, freeze0 := open(t)
	rw := store.Check(rw0)
	freeze := func(t *testing.T) store.Store { return store.Check(freeze0(t)) }
	w := newWorld(t, rw)
	disabled := mustUser(t, rw, projA, "disabled@example.com")
	require.NoError(t, rw.DisableUser(t.Context(), projA, disabled.ID, base.Add(time.Minute)), "DisableUser")
	if wc, ok := store.As[store.WritableChecker](rw); ok {
		require.NoError(t, wc.CheckWritable(t.Context()), "CheckWritable on a database that can write")
	}
	ending := newFamily(projA, w.user.ID, base, time.Hour)
	ending.EndsAt = base.Add(2 * time.Hour)
	require.NoError(t, rw.CreateRefreshFamily(t.Context(), ending, userHash), "CreateRefreshFamily with an EndsAt")
	before := w.snapshot(t, rw)

	ro := freeze(t)
	require.Equal(t, before, w.snapshot(t, ro), "the reads of the unwritable database")
	if wc, ok := store.As[store.WritableChecker](ro); ok {
		require.ErrorIs(t, wc.CheckWritable(t.Context()), store.ErrUnavailable, "CheckWritable on a database that cannot write")
	}
	later, far := base.Add(time.Hour), base.Add(1000*24*time.Hour)
	for _, c := range []refusal{
		{"CreateProject", func(ctx context.Context) error {
			return ro.CreateProject(ctx, store.Project{ID: "proj-new", CreatedAt: base})
		}},
		{"CreateUser", func(ctx context.Context) error {
			u := newUser(projA, "new@example.com")
			u.ID = refusedID
			return ro.CreateUser(ctx, u)
		}},
		{"SetPasswordHash", func(ctx context.Context) error { return ro.SetPasswordHash(ctx, projA, w.user.ID, "changed") }},
		{"ReplacePasswordHash", func(ctx context.Context) error {
			return ro.ReplacePasswordHash(ctx, projA, w.user.ID, w.user.PasswordHash, "changed")
		}},
		{"SetUserTags", func(ctx context.Context) error { return ro.SetUserTags(ctx, projA, w.user.ID, []string{"changed"}) }},
		{"DisableUser", func(ctx context.Context) error { return ro.DisableUser(ctx, projA, w.user.ID, later) }},
		{"EnableUser", func(ctx context.Context) error { return ro.EnableUser(ctx, projA, disabled.ID) }},
		{"EndUserSessions", func(ctx context.Context) error { return ro.EndUserSessions(ctx, projA, w.user.ID, later) }},
		{"CreateContact", func(ctx context.Context) error {
			return errOf(ro.CreateContact(ctx, newContact(projA, "ct_new", base)))
		}},
		{"CreateContacts", func(ctx context.Context) error {
			return ro.CreateContacts(ctx, projA, []store.Contact{newContact(projA, "ct_new", base)})
		}},
		{"DeleteContact", func(ctx context.Context) error { return ro.DeleteContact(ctx, projA, w.contact.ID) }},
		{"CreateAPIKey", func(ctx context.Context) error { return ro.CreateAPIKey(ctx, newAPIKey(projA, "key_new", base)) }},
		{"RevokeAPIKey", func(ctx context.Context) error { return ro.RevokeAPIKey(ctx, projA, w.apiKey.ID, later) }},
		{"RollAPIKey", func(ctx context.Context) error {
			return errOf(ro.RollAPIKey(ctx, projA, w.apiKey.ID, successorOf(w.apiKey, "key_rolled", later), later.Add(time.Hour)))
		}},
		{"TouchAPIKey", func(ctx context.Context) error { return ro.TouchAPIKey(ctx, projA, w.apiKey.ID, later) }},
		{"CreateSigningKey", func(ctx context.Context) error {
			return ro.CreateSigningKey(ctx, newSigningKey(projA, "sk_newest", later))
		}},
		{"RetireSigningKey", func(ctx context.Context) error { return ro.RetireSigningKey(ctx, projA, "sk_old", later) }},
		{"CreateRefreshFamily", func(ctx context.Context) error {
			f := newFamily(projA, w.user.ID, base, time.Hour)
			f.ID = refusedID
			return ro.CreateRefreshFamily(ctx, f, userHash)
		}},
		{"RotateRefresh", func(ctx context.Context) error {
			return errOf(ro.RotateRefresh(ctx, projA, w.family.ID, 0, rotateParams(base.Add(time.Minute))))
		}},
		{"RevokeRefreshFamily", func(ctx context.Context) error { return ro.RevokeRefreshFamily(ctx, projA, w.family.ID, later) }},
		{"ScheduleSessionEnd", func(ctx context.Context) error { return ro.ScheduleSessionEnd(ctx, projA, ending.ID) }},
		{"SetSetting", func(ctx context.Context) error {
			return ro.SetSetting(ctx, store.SettingPublicURL, "https://changed.example.com")
		}},
		{"PruneRefreshFamilies", func(ctx context.Context) error { return errOf(ro.PruneRefreshFamilies(ctx, far)) }},
		{"PruneSessionRevocations", func(ctx context.Context) error { return errOf(ro.PruneSessionRevocations(ctx, far)) }},
		{"AppendAudit", func(ctx context.Context) error {
			return ro.AppendAudit(ctx, newAudit(projA, "aud_new", base, store.ActionSignIn, ""))
		}},
		{"PruneAudit", func(ctx context.Context) error { return errOf(ro.PruneAudit(ctx, far)) }},
		{"CreateConsoleSession", func(ctx context.Context) error {
			return ro.CreateConsoleSession(ctx, newConsoleSession(projA, refusedID, w.user.ID, base))
		}},
		{"TouchConsoleSession", func(ctx context.Context) error { return ro.TouchConsoleSession(ctx, projA, w.console.ID, later) }},
		{"DeleteConsoleSession", func(ctx context.Context) error { return ro.DeleteConsoleSession(ctx, projA, w.console.ID) }},
		{"PruneConsoleSessions", func(ctx context.Context) error { return errOf(ro.PruneConsoleSessions(ctx, far, far)) }},
		{"AddFailure", func(ctx context.Context) error {
			return errOf3(ro.AddFailure(ctx, "k", base.Add(time.Minute), time.Hour))
		}},
		{"ClearFailures", func(ctx context.Context) error { return ro.ClearFailures(ctx, "k") }},
		{"PruneThrottle", func(ctx context.Context) error { return errOf(ro.PruneThrottle(ctx, far)) }},
	} {
		require.ErrorIsf(t, c.call(t.Context()), store.ErrUnavailable, "%s on a database that cannot write", c.name)
	}
	require.Equal(t, before, w.snapshot(t, ro), "the store after every write was refused: want nothing changed")
}

func writableCases() []testCase {
	return []testCase{{"Healthy", testWritableHealthy}}
}

// A fresh store on a database that can write says so, also after writes;
// and the check writes nothing: a store that also offers ChangeVersion
// reports the version unchanged by it.
func testWritableHealthy(t *testing.T, s store.Store) {
	wc := capability[store.WritableChecker](t, s)
	require.NoError(t, wc.CheckWritable(t.Context()), "CheckWritable on a fresh store")
	mustProject(t, s, projA)
	cv, versioned := store.As[store.ChangeVersioner](s)
	var v uint64
	if versioned {
		v = changeVersion(t, cv, "before CheckWritable")
	}
	require.NoError(t, wc.CheckWritable(t.Context()), "CheckWritable after a write")
	if versioned {
		require.Equal(t, v, changeVersion(t, cv, "after CheckWritable"), "ChangeVersion() moved across CheckWritable, which writes nothing")
	}
	mustUser(t, s, projA, "after-check@example.com")
}
