package storetest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

func auditCases() []testCase {
	return []testCase{
		{"AppendList", testAuditAppendList},
		{"AtKept", testAuditAtKept},
		{"OrderTies", testAuditOrderTies},
		{"Pages", testAuditPages},
		{"LookAhead", testAuditLookAhead},
		{"CursorStrictlyOlder", testAuditCursorStrictlyOlder},
		{"FilterAction", testAuditFilterAction},
		{"FilterTarget", testAuditFilterTarget},
		{"FilterBoth", testAuditFilterBoth},
		{"OtherProject", testAuditOtherProject},
		{"UnknownProject", testAuditUnknownProject},
		{"Duplicate", testAuditDuplicate},
		{"Invalid", testAuditInvalid},
		{"Prune", testAuditPrune},
	}
}

func newAudit(project, id string, at time.Time, action, target string) store.AuditEntry {
	return store.AuditEntry{
		ID:         id,
		ProjectID:  project,
		At:         at,
		Actor:      "usr_actor",
		Action:     action,
		Target:     target,
		ClientAddr: "192.0.2.10",
	}
}

// mustAudit appends es in order and returns them newest first, as the log
// lists them: descending (At truncated to microseconds, ID byte by byte).
func mustAudit(t *testing.T, s store.AuditStore, es ...store.AuditEntry) []store.AuditEntry {
	t.Helper()
	for _, e := range es {
		require.NoErrorf(t, s.AppendAudit(t.Context(), e), "AppendAudit(%q, %q)", e.ProjectID, e.ID)
	}
	return newestFirst(es)
}

// newestFirst returns a copy of es in the audit log's order.
func newestFirst(es []store.AuditEntry) []store.AuditEntry {
	return inListOrder(es, auditPos, true)
}

// wantAuditEntries fails unless got holds exactly the entries of want, in
// order, with equal fields.
func wantAuditEntries(t *testing.T, want, got []store.AuditEntry, what string) {
	t.Helper()
	require.Equalf(t, auditIDs(want), auditIDs(got), "%s: ids in order", what)
	for i, w := range want {
		g := got[i]
		require.Equalf(t, w.ProjectID, g.ProjectID, "%s: ProjectID of %q", what, w.ID)
		require.Equalf(t, w.Actor, g.Actor, "%s: Actor of %q", what, w.ID)
		require.Equalf(t, w.Action, g.Action, "%s: Action of %q", what, w.ID)
		require.Equalf(t, w.Target, g.Target, "%s: Target of %q", what, w.ID)
		require.Equalf(t, w.ClientAddr, g.ClientAddr, "%s: ClientAddr of %q", what, w.ID)
		wantTime(t, w.At, g.At, "%s: At of %q", what, w.ID)
	}
}

func auditIDs(es []store.AuditEntry) []string {
	return idsOf(es, func(e store.AuditEntry) string { return e.ID })
}

// filterAudit returns the entries of es that f matches.
func filterAudit(es []store.AuditEntry, f store.AuditFilter) []store.AuditEntry {
	var out []store.AuditEntry
	for _, e := range es {
		if (f.Action == "" || e.Action == f.Action) && (f.Target == "" || e.Target == f.Target) {
			out = append(out, e)
		}
	}
	return out
}

// AppendAudit records every field; ListAudit returns the entries newest
// first, each as appended, At in UTC truncated to microseconds.
func testAuditAppendList(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	es := []store.AuditEntry{
		{ID: store.NewID(store.PrefixAudit), ProjectID: projA, At: base.In(elsewhere), Actor: store.ActorCLI, Action: store.ActionAPIKeyCreate, Target: "key_1"},
		{ID: store.NewID(store.PrefixAudit), ProjectID: projA, At: base.Add(time.Hour), Actor: "", Action: store.ActionSignInFailed, Target: "", ClientAddr: "[2001:db8::1]:443"},
		{ID: store.NewID(store.PrefixAudit), ProjectID: projA, At: base.Add(time.Minute), Actor: "usr_admin", Action: store.ActionUserDisable, Target: "usr_x", ClientAddr: "198.51.100.7"},
		{ID: store.NewID(store.PrefixAudit), ProjectID: projA, At: base.Add(-time.Hour), Actor: "key_admin", Action: "custom.action with spaces", Target: "rf_x", ClientAddr: strings.Repeat("a", store.MaxIDLen)},
	}
	want := mustAudit(t, s, es...)
	wantAuditEntries(t, want, auditList(s, projA, store.AuditFilter{}).all(t), "ListAudit")
}

// An entry's At is kept as given (truncated): an entry appended after
// another with an earlier At lists after it, older, and is not raised.
func testAuditAtKept(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	late := newAudit(projA, "aud_late", base.Add(time.Hour), store.ActionSignIn, "")
	early := newAudit(projA, "aud_early", base, store.ActionSignOut, "")
	mustAudit(t, s, late, early)
	wantAuditEntries(t, []store.AuditEntry{late, early}, auditList(s, projA, store.AuditFilter{}).all(t), "ListAudit after an older entry was appended last")
}

// Entries sharing a microsecond list by id in descending byte order:
// "aud_b" before "aud_a" before "aud_B".
func testAuditOrderTies(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	at := aligned.Add(time.Hour) // no sub-microsecond part: the 100 ns steps stay in one microsecond
	var es []store.AuditEntry
	for i, id := range []string{"aud_a", "aud_B", "aud_b", "aud_a0", "aud_-", "aud_~"} {
		es = append(es, newAudit(projA, id, at.Add(time.Duration(i)*100*time.Nanosecond), store.ActionSignIn, ""))
	}
	es = append(es, newAudit(projA, "aud_z", at.Add(-time.Microsecond), store.ActionSignIn, ""), newAudit(projA, "aud_0", at.Add(time.Microsecond), store.ActionSignIn, ""))
	want := mustAudit(t, s, es...)
	require.Equal(t, []string{"aud_0", "aud_~", "aud_b", "aud_a0", "aud_a", "aud_B", "aud_-", "aud_z"}, auditIDs(want), "precondition: the log's order")
	wantAuditEntries(t, want, auditList(s, projA, store.AuditFilter{}).all(t), "ListAudit of entries sharing a microsecond")
	for _, limit := range []int{1, 2, 3} {
		wantAuditEntries(t, want, auditList(s, projA, store.AuditFilter{}).walk(t, limit, nil), fmt.Sprintf("walk of ListAudit with limit %d", limit))
	}
}

// Paging with any page size returns every entry exactly once, newest
// first; the zero cursor starts at the newest.
func testAuditPages(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	rng := rand.New(rand.NewPCG(7, 7))
	var es []store.AuditEntry
	for range 37 {
		at := base.Add(time.Duration(rng.IntN(10)) * time.Millisecond).Add(time.Duration(rng.IntN(3)) * 100 * time.Nanosecond)
		es = append(es, newAudit(projA, store.NewID(store.PrefixAudit), at, store.ActionSignIn, ""))
	}
	want := mustAudit(t, s, es...)
	for _, limit := range []int{1, 2, 3, 5, 36, 37, 38, paginate.MaxLimit} {
		wantAuditEntries(t, want, auditList(s, projA, store.AuditFilter{}).walk(t, limit, nil), fmt.Sprintf("walk of ListAudit with limit %d", limit))
	}
}

// ListAudit reads one entry ahead: with exactly limit entries left HasMore
// is false, with one more it is true.
func testAuditLookAhead(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	var es []store.AuditEntry
	for i := range 5 {
		es = append(es, newAudit(projA, store.NewID(store.PrefixAudit), base.Add(time.Duration(i)*time.Minute), store.ActionSignIn, ""))
	}
	all := mustAudit(t, s, es...)
	cases := []struct {
		after, limit, want int
		hasMore            bool
	}{
		{-1, 5, 5, false}, {-1, 6, 5, false}, {-1, 4, 4, true}, {-1, 1, 1, true},
		{1, 3, 3, false}, {1, 2, 2, true}, {3, 1, 1, false}, {4, 1, 0, false},
	}
	for _, c := range cases {
		req := paginate.Request{Limit: c.limit}
		start := 0
		if c.after >= 0 {
			req.After = textCursor(t, auditPos(all[c.after]))
			start = c.after + 1
		}
		page := auditList(s, projA, store.AuditFilter{}).page(t, req)
		what := fmt.Sprintf("ListAudit(limit %d, after %q)", c.limit, req.After.String())
		wantAuditEntries(t, all[start:start+c.want], page.Items, what)
		require.Equalf(t, c.hasMore, page.HasMore, "%s.HasMore", what)
	}
}

// A page holds the entries strictly older than the cursor's position,
// whether or not it names an entry.
func testAuditCursorStrictlyOlder(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	at := store.Truncate(base.Add(time.Hour))
	all := mustAudit(t, s,
		newAudit(projA, "aud_m", at.Add(-time.Microsecond), store.ActionSignIn, ""),
		newAudit(projA, "aud_a", at, store.ActionSignIn, ""),
		newAudit(projA, "aud_b", at, store.ActionSignIn, ""),
		newAudit(projA, "aud_c", at, store.ActionSignIn, ""),
		newAudit(projA, "aud_0", at.Add(time.Microsecond), store.ActionSignIn, ""),
	) // aud_0, aud_c, aud_b, aud_a, aud_m
	list := func(id string, at time.Time) []store.AuditEntry {
		return auditList(s, projA, store.AuditFilter{}).page(t, paginate.Request{Limit: 100, After: paginate.Cursor{ID: id, CreatedAt: at}}).Items
	}
	wantAuditEntries(t, all[2:], list("aud_c", at), "before (at, aud_c)")
	wantAuditEntries(t, all[2:], list("aud_bb", at), "before (at, aud_bb)")
	wantAuditEntries(t, all[1:], list("aud_~", at), "before (at, aud_~)")
	wantAuditEntries(t, all[4:], list("aud_", at), "before (at, aud_)")
	wantAuditEntries(t, all[4:], list("aud_a", at), "before (at, aud_a)")
	wantAuditEntries(t, nil, list("aud_m", at.Add(-time.Microsecond)), "before the oldest entry")
	wantAuditEntries(t, all, list("aud_", at.Add(time.Hour)), "before a position newer than every entry")
	wantAuditEntries(t, nil, list("aud_~", at.Add(-time.Hour)), "before a position older than every entry")
}

// filterLog appends a log of several actions and targets and returns it
// newest first.
func filterLog(t *testing.T, s store.AuditStore, project string) []store.AuditEntry {
	t.Helper()
	actions := []string{store.ActionAPIKeyRevoke, store.ActionAPIKeyCreate, store.ActionSignIn, store.ActionUserDisable}
	targets := []string{"key_1", "key_2", "usr_1", ""}
	var es []store.AuditEntry
	for i := range 24 {
		es = append(es, newAudit(project, store.NewID(store.PrefixAudit), base.Add(time.Duration(i)*time.Second), actions[i%4], targets[(i/2)%4]))
	}
	return mustAudit(t, s, es...)
}

// A filter's Action keeps the entries with exactly that action: compared
// exactly, never as a prefix or in another case.
func testAuditFilterAction(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	all := filterLog(t, s, projA)
	for _, action := range []string{store.ActionAPIKeyRevoke, store.ActionSignIn, "apikey", "apikey.revok", "APIKEY.REVOKE", "apikey.revoke ", "%", "apikey_revoke"} {
		f := store.AuditFilter{Action: action}
		want := filterAudit(all, f)
		for _, limit := range []int{1, 4, 100} {
			wantAuditEntries(t, want, auditList(s, projA, f).walk(t, limit, nil), fmt.Sprintf("walk of ListAudit(action %q) with limit %d", action, limit))
		}
	}
}

// A filter's Target keeps the entries with exactly that target.
func testAuditFilterTarget(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	all := filterLog(t, s, projA)
	for _, target := range []string{"key_1", "usr_1", "key_", "KEY_1", "key_%", "key__"} {
		f := store.AuditFilter{Target: target}
		want := filterAudit(all, f)
		for _, limit := range []int{1, 4, 100} {
			wantAuditEntries(t, want, auditList(s, projA, f).walk(t, limit, nil), fmt.Sprintf("walk of ListAudit(target %q) with limit %d", target, limit))
		}
	}
}

// A filter with both fields keeps the entries matching both.
func testAuditFilterBoth(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	all := filterLog(t, s, projA)
	for _, f := range []store.AuditFilter{
		{Action: store.ActionAPIKeyRevoke, Target: "key_1"},
		{Action: store.ActionSignIn, Target: "key_2"},
		{Action: store.ActionSignIn, Target: "usr_none"},
	} {
		want := filterAudit(all, f)
		for _, limit := range []int{1, 100} {
			wantAuditEntries(t, want, auditList(s, projA, f).walk(t, limit, nil), fmt.Sprintf("walk of ListAudit(%+v) with limit %d", f, limit))
		}
	}
}

// Another project's entries never appear.
func testAuditOtherProject(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	a := filterLog(t, s, projA)
	b := mustAudit(t, s, newAudit(projB, store.NewID(store.PrefixAudit), base.Add(time.Hour), store.ActionAPIKeyRevoke, "key_1"))
	wantAuditEntries(t, a, auditList(s, projA, store.AuditFilter{}).walk(t, 5, nil), "walk of project A's log")
	wantAuditEntries(t, filterAudit(a, store.AuditFilter{Target: "key_1"}), auditList(s, projA, store.AuditFilter{Target: "key_1"}).all(t), "project A's log filtered by a target both projects have")
	wantAuditEntries(t, b, auditList(s, projB, store.AuditFilter{}).all(t), "project B's log")
}

// An unknown project's log is empty; appending to it is ErrNotFound and
// leaves nothing.
func testAuditUnknownProject(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	filterLog(t, s, projA)
	page := auditList(s, "no-such-project", store.AuditFilter{}).page(t, paginate.Request{Limit: 10})
	require.Empty(t, page.Items, "ListAudit of an unknown project")
	e := newAudit("no-such-project", "aud_orphan", base, store.ActionSignIn, "")
	require.ErrorIs(t, s.AppendAudit(t.Context(), e), store.ErrNotFound, "AppendAudit in an unknown project")
	mustProject(t, s, "no-such-project")
	require.Empty(t, auditList(s, "no-such-project", store.AuditFilter{}).all(t), "ListAudit after the project is created: the failed append left no entry")
}

// AppendAudit with an existing id is ErrConflict and keeps the first.
func testAuditDuplicate(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	first := mustAudit(t, s, newAudit(projA, "aud_dup", base, store.ActionSignIn, "usr_1"))
	dup := newAudit(projA, "aud_dup", base.Add(time.Hour), store.ActionSignOut, "usr_2")
	require.ErrorIs(t, s.AppendAudit(t.Context(), dup), store.ErrConflict, "AppendAudit with an existing id")
	wantAuditEntries(t, first, auditList(s, projA, store.AuditFilter{}).all(t), "ListAudit after a conflicting append")
}

// An entry CheckAudit refuses, a limit below 1 or an invalid project id is
// ErrInvalid, and nothing is stored.
func testAuditInvalid(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	kept := mustAudit(t, s, newAudit(projA, "aud_ok", base, store.ActionSignIn, ""))
	long := strings.Repeat("x", store.MaxIDLen+1)
	for _, c := range []struct {
		name   string
		change func(e *store.AuditEntry)
	}{
		{"empty id", func(e *store.AuditEntry) { e.ID = "" }},
		{"id with a space", func(e *store.AuditEntry) { e.ID = "aud_a b" }},
		{"empty project", func(e *store.AuditEntry) { e.ProjectID = "" }},
		{"invalid project", func(e *store.AuditEntry) { e.ProjectID = "Proj A" }},
		{"zero At", func(e *store.AuditEntry) { e.At = time.Time{} }},
		{"empty action", func(e *store.AuditEntry) { e.Action = "" }},
		{"long actor", func(e *store.AuditEntry) { e.Actor = long }},
		{"long target", func(e *store.AuditEntry) { e.Target = long }},
		{"long client address", func(e *store.AuditEntry) { e.ClientAddr = long }},
	} {
		e := newAudit(projA, "aud_refused", base.Add(time.Minute), store.ActionSignIn, "")
		c.change(&e)
		require.Errorf(t, store.CheckAudit(e), "precondition: CheckAudit refuses an entry with %s", c.name)
		require.ErrorIsf(t, s.AppendAudit(t.Context(), e), store.ErrInvalid, "AppendAudit of an entry with %s", c.name)
	}
	wantAuditEntries(t, kept, auditList(s, projA, store.AuditFilter{}).all(t), "ListAudit after refused appends")
	for _, limit := range []int{0, -1} {
		_, err := s.ListAudit(t.Context(), projA, store.AuditFilter{}, paginate.Request{Limit: limit})
		require.ErrorIsf(t, err, store.ErrInvalid, "ListAudit(%q, limit %d)", projA, limit)
	}
	for _, p := range []string{"", "Proj A", "-x"} {
		_, err := s.ListAudit(t.Context(), p, store.AuditFilter{}, paginate.Request{Limit: 10})
		require.ErrorIsf(t, err, store.ErrInvalid, "ListAudit(%q)", p)
	}
	_, err := s.PruneAudit(t.Context(), time.Time{})
	require.ErrorIs(t, err, store.ErrInvalid, "PruneAudit(zero time)")
	wantAuditEntries(t, kept, auditList(s, projA, store.AuditFilter{}).all(t), "ListAudit after a refused prune")
}

// PruneAudit deletes the entries, of every project, older than the time
// given, keeps those at or after it, and returns how many it deleted.
func testAuditPrune(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	cut := aligned.Add(time.Hour)
	mustAudit(t, s,
		newAudit(projA, "aud_old1", aligned, store.ActionSignIn, ""),
		newAudit(projA, "aud_old2", cut.Add(-time.Microsecond), store.ActionSignIn, ""),
		newAudit(projB, "aud_oldb", aligned, store.ActionSignIn, ""),
	)
	keptA := mustAudit(t, s,
		newAudit(projA, "aud_cut", cut, store.ActionSignIn, ""),
		newAudit(projA, "aud_new", cut.Add(time.Minute), store.ActionSignIn, ""),
	)
	keptB := mustAudit(t, s, newAudit(projB, "aud_newb", cut.Add(time.Minute), store.ActionSignIn, ""))
	n, err := s.PruneAudit(t.Context(), cut.In(elsewhere))
	require.NoError(t, err, "PruneAudit")
	require.Equal(t, 3, n, "PruneAudit: entries deleted")
	wantAuditEntries(t, keptA, auditList(s, projA, store.AuditFilter{}).all(t), "project A's log after PruneAudit")
	wantAuditEntries(t, keptB, auditList(s, projB, store.AuditFilter{}).all(t), "project B's log after PruneAudit")
	n, err = s.PruneAudit(t.Context(), cut)
	require.NoError(t, err, "PruneAudit again")
	require.Equal(t, 0, n, "PruneAudit again: entries deleted")
}
