package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

func projectCases() []testCase {
	return []testCase{
		{"CreateGet", testProjectCreateGet},
		{"EmptyStore", testProjectEmptyStore},
		{"Duplicate", testProjectDuplicate},
		{"Unknown", testProjectUnknown},
		{"InvalidID", testProjectInvalidID},
		{"ListOrder", testProjectListOrder},
	}
}

// CreateProject stores the project; GetProject returns it with CreatedAt in
// UTC, truncated to microseconds.
func testProjectCreateGet(t *testing.T, s store.Store) {
	in := store.Project{ID: "acme", CreatedAt: base.In(elsewhere)}
	require.NoErrorf(t, s.CreateProject(t.Context(), in), "CreateProject(%q)", in.ID)
	got, err := s.GetProject(t.Context(), "acme")
	require.NoErrorf(t, err, "GetProject(%q)", "acme")
	require.Equal(t, "acme", got.ID)
	wantTime(t, base, got.CreatedAt, "GetProject(%q).CreatedAt", "acme")

	// Slugs at the edges of the pattern are valid.
	for _, id := range []string{"0", "a-", "x" + strings.Repeat("-", 62), strings.Repeat("z9", 31) + "a", store.DefaultProject} {
		require.NoErrorf(t, s.CreateProject(t.Context(), store.Project{ID: id, CreatedAt: base}), "CreateProject(%q)", id)
		got, err := s.GetProject(t.Context(), id)
		require.NoErrorf(t, err, "GetProject(%q)", id)
		require.Equal(t, id, got.ID)
	}
}

// A fresh store has no projects; Open does not create the default project.
func testProjectEmptyStore(t *testing.T, s store.Store) {
	ps, err := s.ListProjects(t.Context())
	require.NoErrorf(t, err, "ListProjects()")
	require.Emptyf(t, ps, "ListProjects() of a fresh store = %v, want no projects (the factory must return an empty store)", ps)
	_, err = s.GetProject(t.Context(), store.DefaultProject)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetProject(%q) on a fresh store", store.DefaultProject)
}

// CreateProject returns ErrConflict when the id exists, and the first
// project is kept.
func testProjectDuplicate(t *testing.T, s store.Store) {
	mustProject(t, s, "acme")
	err := s.CreateProject(t.Context(), store.Project{ID: "acme", CreatedAt: base.Add(time.Hour)})
	require.ErrorIsf(t, err, store.ErrConflict, "second CreateProject(%q)", "acme")
	got, err := s.GetProject(t.Context(), "acme")
	require.NoErrorf(t, err, "GetProject(%q)", "acme")
	wantTime(t, base, got.CreatedAt, "GetProject(%q).CreatedAt after a failed duplicate", "acme")
	ps, err := s.ListProjects(t.Context())
	require.NoErrorf(t, err, "ListProjects()")
	require.Len(t, ps, 1, "ListProjects() after a duplicate create")
}

// GetProject returns ErrNotFound for a project that does not exist.
func testProjectUnknown(t *testing.T, s store.Store) {
	mustProject(t, s, "acme")
	for _, id := range []string{"acme2", "acm", "nope"} {
		_, err := s.GetProject(t.Context(), id)
		require.ErrorIsf(t, err, store.ErrNotFound, "GetProject(%q)", id)
	}
}

// CreateProject returns ErrInvalid for an id that is not a slug and stores
// nothing; GetProject of such an id returns ErrInvalid too (the shared rule:
// invalid project ids are malformed arguments).
func testProjectInvalidID(t *testing.T, s store.Store) {
	bad := []string{
		"",
		"Acme",
		"ACME",
		"-acme",
		"acme_corp",
		"acme corp",
		" acme",
		"acme\n",
		"acmé",
		"a" + strings.Repeat("b", 63), // 64 characters
		"acme/x",
		"acme:1",
	}
	for _, id := range bad {
		err := s.CreateProject(t.Context(), store.Project{ID: id, CreatedAt: base})
		require.ErrorIsf(t, err, store.ErrInvalid, "CreateProject(%q)", id)
		_, err = s.GetProject(t.Context(), id)
		require.ErrorIsf(t, err, store.ErrInvalid, "GetProject(%q)", id)
	}
	ps, err := s.ListProjects(t.Context())
	require.NoErrorf(t, err, "ListProjects()")
	require.Emptyf(t, ps, "ListProjects() after only invalid creates = %v, want none", ps)
}

// ListProjects returns every project ordered by id, whatever the order of
// creation.
func testProjectListOrder(t *testing.T, s store.Store) {
	ids := []string{"m", "a-b", "0x", "zeta", "a", "ab", "a0", "9"}
	for i, id := range ids {
		require.NoErrorf(t, s.CreateProject(t.Context(), store.Project{ID: id, CreatedAt: base.Add(-time.Duration(i) * time.Minute)}), "CreateProject(%q)", id)
	}
	ps, err := s.ListProjects(t.Context())
	require.NoErrorf(t, err, "ListProjects()")
	got := make([]string, len(ps))
	for i, p := range ps {
		got[i] = p.ID
		wantTime(t, base.Add(-time.Duration(indexOf(ids, p.ID))*time.Minute), p.CreatedAt, "ListProjects()[%d].CreatedAt", i)
	}
	require.Equal(t, []string{"0x", "9", "a", "a-b", "a0", "ab", "m", "zeta"}, got, "ListProjects() ids")
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}
