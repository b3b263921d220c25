package storetest

import (
	"context"
	"testing"

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

// isChangeVersioner reports whether s offers the capability.
func isChangeVersioner(s store.Store) bool {
	_, ok := s.(store.ChangeVersioner)
	return ok
}

// versioner returns s's ChangeVersioner; the cases run only for stores
// that have one.
func versioner(t *testing.T, s any) store.ChangeVersioner {
	t.Helper()
	cv, ok := s.(store.ChangeVersioner)
	if !ok {
		t.Fatalf("%T does not implement store.ChangeVersioner", s)
	}
	return cv
}

func changeVersion(t *testing.T, cv store.ChangeVersioner, what string) uint64 {
	t.Helper()
	v, err := cv.ChangeVersion(t.Context())
	noErr(t, err, "ChangeVersion() %s", what)
	return v
}

// Reads do not change the version, nor does time.
func testChangeVersionUnchanged(t *testing.T, s store.Store) {
	cv := versioner(t, s)
	mustProject(t, s, projA)
	mustAPIKey(t, s, projA, "key_v", base)
	v1 := changeVersion(t, cv, "after the writes")
	for range 3 {
		_, err := s.GetAPIKey(t.Context(), projA, "key_v")
		noErr(t, err, "GetAPIKey")
		_, err = s.ListProjects(t.Context())
		noErr(t, err, "ListProjects")
		if v := changeVersion(t, cv, "after reads only"); v != v1 {
			t.Fatalf("ChangeVersion() = %d after reads only, want %d (unchanged)", v, v1)
		}
	}
}

// Every kind of write through the handle, once returned, gives a version
// different from every earlier one.
func testChangeVersionChanges(t *testing.T, s store.Store) {
	cv := versioner(t, s)
	ctx := t.Context()
	seen := map[uint64]string{changeVersion(t, cv, "at start"): "start"}
	step := func(name string, err error) {
		t.Helper()
		noErr(t, err, "%s", name)
		v := changeVersion(t, cv, "after "+name)
		if prev, ok := seen[v]; ok {
			t.Fatalf("ChangeVersion() after %s = %d, the value it had after %s: a committed write went unnoticed", name, v, prev)
		}
		seen[v] = name
	}
	step("CreateProject", s.CreateProject(ctx, store.Project{ID: projA, CreatedAt: base}))
	step("CreateAPIKey", s.CreateAPIKey(ctx, newAPIKey(projA, "key_v", base)))
	step("TouchAPIKey", s.TouchAPIKey(ctx, projA, "key_v", base.Add(1e9)))
	step("RevokeAPIKey", s.RevokeAPIKey(ctx, projA, "key_v", base.Add(2e9)))
	step("CreateSigningKey old", s.CreateSigningKey(ctx, newSigningKey(projA, "sk_old", base)))
	step("CreateSigningKey new", s.CreateSigningKey(ctx, newSigningKey(projA, "sk_new", base.Add(1e9))))
	step("RetireSigningKey", s.RetireSigningKey(ctx, projA, "sk_old", base.Add(2e9)))
	step("CreateUser", s.CreateUser(ctx, newUser(projA, "v@example.com")))
	_, err := s.CreateContact(ctx, newContact(projA, "ct_v", base))
	step("CreateContact", err)
}

// A write through one handle changes the version the other handle reports,
// and only a write does.
func testSharedChangeVersion(t *testing.T, a, b store.Store) {
	cva := versioner(t, a)
	cvb := versioner(t, b)
	ctx := t.Context()
	mustProject(t, a, projA)
	mustAPIKey(t, a, projA, "key_v", base)
	noErr(t, a.CreateSigningKey(ctx, newSigningKey(projA, "sk_old", base)), "a.CreateSigningKey")
	noErr(t, a.CreateSigningKey(ctx, newSigningKey(projA, "sk_new", base.Add(1e9))), "a.CreateSigningKey")

	check := func(name string, write func(context.Context) error) {
		t.Helper()
		va := changeVersion(t, cva, "a, before "+name)
		if v := changeVersion(t, cva, "a, again before "+name); v != va {
			t.Fatalf("a.ChangeVersion() = %d then %d with no write in between", va, v)
		}
		vb := changeVersion(t, cvb, "b, before "+name)
		noErr(t, write(ctx), "%s", name)
		if v := changeVersion(t, cva, "a, after "+name); v == va {
			t.Fatalf("a.ChangeVersion() = %d both before and after %s: the other handle's commit went unnoticed", v, name)
		}
		if v := changeVersion(t, cvb, "b, after "+name); v == vb {
			t.Fatalf("b.ChangeVersion() = %d both before and after %s", v, name)
		}
	}
	check("b.RevokeAPIKey", func(ctx context.Context) error { return b.RevokeAPIKey(ctx, projA, "key_v", base) })
	check("b.RetireSigningKey", func(ctx context.Context) error { return b.RetireSigningKey(ctx, projA, "sk_old", base) })
	check("a.TouchAPIKey", func(ctx context.Context) error { return a.TouchAPIKey(ctx, projA, "key_v", base.Add(1e9)) })
}
