package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

func contactCases() []testCase {
	return []testCase{
		{"CreateReturnsStored", testContactCreateReturnsStored},
		{"MicrosecondRoundTrip", testContactMicrosecondRoundTrip},
		{"CreatedAtRaised", testContactCreatedAtRaised},
		{"ByteOrder", testContactByteOrder},
		{"SharedTimestampPages", testContactSharedTimestampPages},
		{"PagesNeverRepeatOrSkip", testContactPagesNeverRepeatOrSkip},
		{"InsertsBetweenPages", testContactInsertsBetweenPages},
		{"LookAhead", testContactLookAhead},
		{"MaxLimit", testContactMaxLimit},
		{"CursorNamesNoItem", testContactCursorNamesNoItem},
		{"OtherProject", testContactOtherProject},
		{"EmptyProject", testContactEmptyProject},
		{"Delete", testContactDelete},
		{"DeletedCursor", testContactDeletedCursor},
		{"InsertAfterDeletedTail", testContactInsertAfterDeletedTail},
		{"CreateErrors", testContactCreateErrors},
		{"ListInvalid", testContactListInvalid},
		{"Bulk", testContactBulk},
		{"BulkEarlierTimes", testContactBulkEarlierTimes},
		{"BulkAtomic", testContactBulkAtomic},
		{"BulkEmptyProjectID", testContactBulkEmptyProjectID},
	}
}

// CreateContacts gives a contact whose ProjectID is empty the project it is
// called with.
func testContactBulkEmptyProjectID(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	batch := []store.Contact{newContact("", "ct_bulk_none", base), newContact(projA, "ct_bulk_set", base.Add(time.Second))}
	require.NoErrorf(t, s.CreateContacts(t.Context(), projA, batch), "CreateContacts(%q) with a contact of no project", projA)
	got := listAll(t, s, projA)
	require.Len(t, got, 2, "ListContacts(%q)", projA)
	for _, c := range got {
		require.Equalf(t, projA, c.ProjectID, "ProjectID of %s", c.ID)
	}
	require.Empty(t, listAll(t, s, projB), "ListContacts(%q)", projB)
}

// contactTracker creates contacts one at a time in one project and checks
// CreateContact's CreatedAt rule against the newest position the project
// has ever had (deleted contacts included, since a client may hold a cursor
// naming one):
//
//   - a contact given a position after that one keeps its CreatedAt,
//     truncated to microseconds: it is raised only if needed;
//   - otherwise it is raised to sort after it, by no more than needed: to
//     that position's CreatedAt, or one microsecond later.
type contactTracker struct {
	s       store.ContactStore
	project string
	top     store.Contact // newest position ever created
	hasTop  bool
	created []store.Contact // as returned, in creation order
}

func newTracker(s store.ContactStore, project string) *contactTracker {
	return &contactTracker{s: s, project: project}
}

func (tr *contactTracker) create(t *testing.T, id string, at time.Time) store.Contact {
	t.Helper()
	in := newContact(tr.project, id, at)
	got, err := tr.s.CreateContact(t.Context(), in)
	require.NoErrorf(t, err, "CreateContact(%q, %q, %s)", tr.project, id, at.Format(time.RFC3339Nano))
	what := fmt.Sprintf("CreateContact(%q, %q, %s)", tr.project, id, at.Format(time.RFC3339Nano))
	require.Equalf(t, id, got.ID, "%s: ID", what)
	require.Equalf(t, tr.project, got.ProjectID, "%s: ProjectID", what)
	require.Equalf(t, in.Name, got.Name, "%s: Name", what)
	require.Equalf(t, time.UTC, got.CreatedAt.Location(), "%s: CreatedAt location", what)
	checkRaised(t, what, store.Contact{ID: id, CreatedAt: store.Truncate(at)}, got, tr.top, tr.hasTop)
	tr.note(got)
	tr.created = append(tr.created, got)
	return got
}

// note records that c exists (or existed) in the project.
func (tr *contactTracker) note(c store.Contact) {
	if !tr.hasTop || contactLess(tr.top, c) {
		tr.top, tr.hasTop = c, true
	}
}

// checkRaised checks the CreatedAt rule for one contact given want (its
// truncated input position) and stored as got, when top is the project's
// newest position before it.
func checkRaised(t *testing.T, what string, want, got, top store.Contact, hasTop bool) {
	t.Helper()
	require.Truef(t, got.CreatedAt.Equal(store.Truncate(got.CreatedAt)), "%s: CreatedAt = %s, finer than microseconds",
		what, got.CreatedAt.Format(time.RFC3339Nano))
	require.Falsef(t, got.CreatedAt.Before(want.CreatedAt), "%s: CreatedAt = %s, earlier than the truncated input %s; it may only be raised",
		what, got.CreatedAt.Format(time.RFC3339Nano), want.CreatedAt.Format(time.RFC3339Nano))
	if !hasTop || contactLess(top, want) {
		require.Truef(t, got.CreatedAt.Equal(want.CreatedAt), "%s: CreatedAt = %s, want %s: it already sorts after every contact of the project, so it is not raised",
			what, got.CreatedAt.Format(time.RFC3339Nano), want.CreatedAt.Format(time.RFC3339Nano))
		return
	}
	require.Truef(t, contactLess(top, got), "%s: stored at (%s, %q), which does not sort after the project's newest contact (%s, %q)",
		what, got.CreatedAt.Format(time.RFC3339Nano), got.ID, top.CreatedAt.Format(time.RFC3339Nano), top.ID)
	limit := top.CreatedAt.Add(time.Microsecond)
	require.Falsef(t, got.CreatedAt.After(limit), "%s: CreatedAt raised to %s, want at most %s (raised only as far as needed to sort after (%s, %q))",
		what, got.CreatedAt.Format(time.RFC3339Nano), limit.Format(time.RFC3339Nano),
		top.CreatedAt.Format(time.RFC3339Nano), top.ID)
}

// listAll returns the project's whole list in one walk with the largest
// page size.
func listAll(t *testing.T, s store.ContactStore, project string) []store.Contact {
	t.Helper()
	return walk(t, s, project, paginate.MaxLimit, nil)
}

// CreateContact returns the contact as stored, and ListContacts returns the
// same.
func testContactCreateReturnsStored(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	in := store.Contact{ID: "ct_first", ProjectID: projA, Name: "Ada Lovelace — ünïcödé", CreatedAt: base.In(elsewhere)}
	got, err := s.CreateContact(t.Context(), in)
	require.NoErrorf(t, err, "CreateContact(%q)", in.ID)
	require.Equal(t, in.ID, got.ID)
	require.Equal(t, projA, got.ProjectID)
	require.Equal(t, in.Name, got.Name)
	wantTime(t, base, got.CreatedAt, "CreateContact(%q).CreatedAt", in.ID)
	wantContacts(t, []store.Contact{got}, listAll(t, s, projA), "ListContacts after one create")
}

// Times written with nanoseconds are read back Equal to their microsecond
// truncation, in UTC, from CreateContact and from ListContacts.
func testContactMicrosecondRoundTrip(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	tr := newTracker(s, projA)
	day := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	times := []time.Time{
		day.Add(1),                 // 1 ns: truncates to the whole second
		day.Add(time.Second + 999), // below one microsecond
		day.Add(2*time.Second + 1000),
		day.Add(3*time.Second + 999999999),
		day.Add(4*time.Second + 123456789).In(elsewhere),
		day.Add(5*time.Second + 500).In(time.FixedZone("UTC-11", -11*3600)),
		base,
		time.Date(2038, 1, 19, 3, 14, 8, 999999001, time.UTC), // past the 32-bit epoch limit
		time.Date(2199, 12, 31, 23, 59, 59, 999999999, time.UTC),
	}
	for i, at := range times {
		c := tr.create(t, fmt.Sprintf("ct_%02d", i), at)
		wantTime(t, at, c.CreatedAt, "CreateContact(ct_%02d).CreatedAt", i)
	}
	got := listAll(t, s, projA)
	require.Len(t, got, len(times))
	for i, at := range times {
		wantTime(t, at, got[i].CreatedAt, "ListContacts()[%d].CreatedAt", i)
	}
}

// CreateContact raises CreatedAt, only as far as needed, so that the new
// contact sorts after every contact the project already has.
func testContactCreatedAtRaised(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	tr := newTracker(s, projA)
	c1 := tr.create(t, "ct_m", base.Add(time.Hour))
	wantTime(t, base.Add(time.Hour), c1.CreatedAt, "first contact's CreatedAt")

	// Earlier time, greater id: raised to sort after ct_m.
	c2 := tr.create(t, "ct_z", base)
	// Same time as the newest, smaller id: raised past it.
	c3 := tr.create(t, "ct_a", c2.CreatedAt)
	// Far earlier: raised.
	c4 := tr.create(t, "ct_0", base.Add(-365*24*time.Hour))
	// Later: kept.
	c5 := tr.create(t, "ct_5", base.Add(2*time.Hour))
	wantTime(t, base.Add(2*time.Hour), c5.CreatedAt, "a later contact's CreatedAt is kept")
	// Same microsecond as the newest, greater id: kept, sharing the timestamp.
	c6 := tr.create(t, "ct_6", base.Add(2*time.Hour-500*time.Nanosecond))
	wantTime(t, base.Add(2*time.Hour), c6.CreatedAt, "a contact in the newest's microsecond with a greater id keeps its CreatedAt")

	wantContacts(t, []store.Contact{c1, c2, c3, c4, c5, c6}, listAll(t, s, projA), "ListContacts after raised creates")
}

// Ids compare byte by byte: "ct_B" sorts before "ct_a", "ct_a" before
// "ct_a0", "ct_-" before "ct_0", whatever the insertion order.
func testContactByteOrder(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	at := base.Add(time.Minute)
	// In byte order: '-' < '0' < '9' < 'A' < 'Z' < '_' < 'a' < 'z' < '~'.
	ordered := []string{"ct_-", "ct_0", "ct_9", "ct_A", "ct_B", "ct_Z", "ct__", "ct_a", "ct_a0", "ct_aa", "ct_b", "ct_z", "ct_~"}

	// One by one in byte order at one time: no contact needs raising, so
	// all share the timestamp.
	tr := newTracker(s, projA)
	for _, id := range ordered {
		c := tr.create(t, id, at)
		wantTime(t, at, c.CreatedAt, "CreateContact(%q).CreatedAt in byte order at one time", id)
	}
	got := listAll(t, s, projA)
	require.Equal(t, ordered, contactIDs(got), "ListContacts order of ids sharing one timestamp")
	for _, limit := range []int{1, 2, 5} {
		require.Equalf(t, ordered, contactIDs(walk(t, s, projA, limit, nil)), "walk with limit %d", limit)
	}

	// "ct_b_a" then "ct_b_B" at one time: "ct_b_B" sorts before "ct_b_a"
	// byte-wise, so it must be raised past it (a case-insensitive
	// comparison would not raise it). Ids are not reused across projects.
	trB := newTracker(s, projB)
	a := trB.create(t, "ct_b_a", at)
	b := trB.create(t, "ct_b_B", at)
	require.Truef(t, b.CreatedAt.After(a.CreatedAt), "CreateContact(ct_b_B) after ct_b_a at one time: CreatedAt %s not after %s; ids compare byte-wise, so it must be raised",
		b.CreatedAt.Format(time.RFC3339Nano), a.CreatedAt.Format(time.RFC3339Nano))
	wantContacts(t, []store.Contact{a, b}, listAll(t, s, projB), "ListContacts of project B")

	// In one batch, shuffled, at one time: the list is in (created_at, id)
	// order whatever CreatedAt each was given.
	const projC = "proj-c"
	mustProject(t, s, projC)
	orderedC := make([]string, len(ordered))
	for i, id := range ordered {
		orderedC[i] = "ct_c" + id[len("ct_"):] // same order, ids unique to the project
	}
	shuffled := append([]string(nil), orderedC...)
	rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	batch := make([]store.Contact, len(shuffled))
	for i, id := range shuffled {
		batch[i] = newContact(projC, id, at)
	}
	require.NoErrorf(t, s.CreateContacts(t.Context(), projC, batch), "CreateContacts(%q, %d shuffled)", projC, len(batch))
	got = listAll(t, s, projC)
	require.ElementsMatch(t, orderedC, contactIDs(got), "ids listed after a shuffled batch")
	if got[0].CreatedAt.Equal(got[len(got)-1].CreatedAt) {
		require.Equal(t, orderedC, contactIDs(got), "a batch sharing one CreatedAt lists in byte order of ids")
	}
}

// Many contacts sharing one timestamp are paged in small pages without
// repeats or gaps.
func testContactSharedTimestampPages(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	at := base.Add(time.Hour)
	// Ids in byte order, so that no contact of the batch needs raising
	// and all of them keep the shared timestamp.
	ids := make([]string, 60)
	for i := range ids {
		ids[i] = store.NewID(store.PrefixContact)
	}
	slices.Sort(ids)
	var batch []store.Contact
	for _, id := range ids {
		batch = append(batch, newContact(projA, id, at))
	}
	require.NoErrorf(t, s.CreateContacts(t.Context(), projA, batch), "CreateContacts(%q, 60 at one time)", projA)
	// A few one by one at the same time, after the batch.
	tr := newTracker(s, projA)
	all := listAll(t, s, projA)
	tr.note(all[len(all)-1])
	for i := range 5 {
		tr.create(t, fmt.Sprintf("ct_~%d", i), at)
	}
	want := listAll(t, s, projA)
	require.Len(t, want, 65)
	require.Equal(t, sortedContacts(want), want)
	shared := 0
	for _, c := range want {
		if c.CreatedAt.Equal(store.Truncate(at)) {
			shared++
		}
	}
	require.Equalf(t, 65, shared, "contacts that kept the shared timestamp %s (given in byte order of ids, none needs raising)", store.Truncate(at))
	for _, limit := range []int{1, 2, 3, 7, 64, 65, 66} {
		wantContacts(t, want, walk(t, s, projA, limit, nil), fmt.Sprintf("walk with limit %d", limit))
	}
}

// Walking every page with any page size returns every contact exactly once,
// in order.
func testContactPagesNeverRepeatOrSkip(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	tr := newTracker(s, projA)
	for i := range 37 {
		// Groups of three share a microsecond; ids are random, so each
		// group is in byte order only by luck and some get raised.
		at := base.Add(time.Duration(i/3) * time.Millisecond).Add(time.Duration(i%3) * 100 * time.Nanosecond)
		tr.create(t, store.NewID(store.PrefixContact), at)
	}
	want := sortedContacts(tr.created)
	for _, limit := range []int{1, 2, 3, 4, 5, 10, 36, 37, 38, 100} {
		wantContacts(t, want, walk(t, s, projA, limit, nil), fmt.Sprintf("walk with limit %d", limit))
	}
}

// Contacts added while a client pages appear after the items that existed
// and are not skipped, even when given a CreatedAt earlier than the
// client's cursor.
func testContactInsertsBetweenPages(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	tr := newTracker(s, projA)
	for i := range 20 {
		tr.create(t, fmt.Sprintf("ct_%02d", i), base.Add(time.Duration(i)*time.Second))
	}
	existing := sortedContacts(tr.created)
	var added []store.Contact
	got := walk(t, s, projA, 4, func(page int, last store.Contact) {
		switch page {
		case 1:
			// Earlier than everything.
			added = append(added, tr.create(t, "ct_early", base.Add(-time.Hour)))
		case 2:
			// At the client's cursor position, with a smaller id.
			added = append(added, tr.create(t, "ct_0", last.CreatedAt))
		case 3:
			// Later than everything.
			added = append(added, tr.create(t, "ct_late", base.Add(24*time.Hour)))
		case 4:
			// Several at once, earlier than the cursor.
			for i := range 3 {
				added = append(added, tr.create(t, fmt.Sprintf("ct_x%d", i), base))
			}
		}
	})
	want := append(append([]store.Contact(nil), existing...), added...)
	wantContacts(t, want, got, "walk with inserts between pages")

	// A second walk, after the fact, sees the same list.
	wantContacts(t, want, listAll(t, s, projA), "ListContacts after the walk")
}

// ListContacts reads one item ahead: with exactly limit items left HasMore
// is false, with one more it is true.
func testContactLookAhead(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	tr := newTracker(s, projA)
	for i := range 6 {
		tr.create(t, fmt.Sprintf("ct_%d", i), base.Add(time.Duration(i)*time.Minute))
	}
	all := tr.created
	cases := []struct {
		after   int // index of the cursor item, -1 for none
		limit   int
		want    int // items returned
		hasMore bool
	}{
		{-1, 6, 6, false},
		{-1, 7, 6, false},
		{-1, 100, 6, false},
		{-1, 5, 5, true},
		{-1, 1, 1, true},
		{-1, 3, 3, true},
		{2, 3, 3, false},
		{2, 2, 2, true},
		{4, 1, 1, false},
		{3, 1, 1, true},
		{5, 1, 0, false},
		{5, 100, 0, false},
	}
	for _, c := range cases {
		req := paginate.Request{Limit: c.limit}
		start := 0
		if c.after >= 0 {
			req.After = cursorOf(t, all[c.after])
			start = c.after + 1
		}
		page := listPage(t, s, projA, req)
		what := fmt.Sprintf("ListContacts(limit %d, after %q)", c.limit, req.After.String())
		wantContacts(t, all[start:start+c.want], page.Items, what)
		require.Equalf(t, c.hasMore, page.HasMore, "%s.HasMore", what)
	}
}

// A page holds up to MaxLimit items.
func testContactMaxLimit(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	batch := make([]store.Contact, 150)
	for i := range batch {
		batch[i] = newContact(projA, fmt.Sprintf("ct_%03d", i), base.Add(time.Duration(i)*time.Microsecond))
	}
	require.NoErrorf(t, s.CreateContacts(t.Context(), projA, batch), "CreateContacts(%q, 150)", projA)
	page := listPage(t, s, projA, paginate.Request{Limit: paginate.MaxLimit})
	require.Len(t, page.Items, paginate.MaxLimit)
	require.True(t, page.HasMore, "HasMore of the first page of 150 with limit 100")
	page = listPage(t, s, projA, paginate.Request{Limit: paginate.MaxLimit, After: cursorOf(t, page.Items[99])})
	require.Len(t, page.Items, 50)
	require.False(t, page.HasMore, "HasMore of the second page of 150 with limit 100")
	require.Equal(t, "ct_100", page.Items[0].ID)
	wantTime(t, base.Add(149*time.Microsecond), page.Items[49].CreatedAt, "CreatedAt of the last contact")
}

// A cursor is a position: it need not name an existing item, and the page
// holds the items strictly after it.
func testContactCursorNamesNoItem(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	at := store.Truncate(base.Add(time.Hour))
	tr := newTracker(s, projA)
	before := tr.create(t, "ct_m", at.Add(-time.Microsecond))
	var same []store.Contact
	for _, id := range []string{"ct_a", "ct_b", "ct_c", "ct_d"} {
		same = append(same, tr.create(t, id, at))
	}
	after := tr.create(t, "ct_0", at.Add(time.Microsecond))
	list := func(id string, at time.Time) []store.Contact {
		return listPage(t, s, projA, paginate.Request{Limit: 100, After: paginate.Cursor{ID: id, CreatedAt: at}}).Items
	}
	rest := append(append([]store.Contact(nil), same...), after)
	wantContacts(t, rest, list("ct_zzz", at.Add(-time.Microsecond)), "after (at-1µs, ct_zzz)")
	wantContacts(t, rest, list("ct_", at), "after (at, ct_)")
	wantContacts(t, rest, list("ct_A", at), "after (at, ct_A), upper case sorting before ct_a")
	wantContacts(t, rest[2:], list("ct_b", at), "after (at, ct_b)")
	wantContacts(t, rest[2:], list("ct_b0", at), "after (at, ct_b0)")
	wantContacts(t, rest[4:], list("ct_d", at), "after (at, ct_d)")
	wantContacts(t, rest[4:], list("ct_~", at), "after (at, ct_~)")
	wantContacts(t, nil, list("ct_0", at.Add(time.Microsecond)), "after the last item")
	wantContacts(t, nil, list("ct_", at.Add(time.Hour)), "after a position past the end")
	wantContacts(t, append([]store.Contact{before}, rest...), list("ct_zzz", at.Add(-time.Hour)), "after a position before the start")
}

// Another project's contacts are never visible, and creating contacts in
// one project does not raise the CreatedAt of another project's.
func testContactOtherProject(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	trA, trB := newTracker(s, projA), newTracker(s, projB)
	for i := range 10 {
		at := base.Add(time.Duration(i) * time.Second)
		trA.create(t, fmt.Sprintf("ct_a%d", i), at)
		trB.create(t, fmt.Sprintf("ct_b%d", i), at.Add(time.Millisecond))
	}
	// Project B gets a contact far later; project A's next one, earlier,
	// keeps its time because only A's own contacts count.
	trB.create(t, "ct_blate", base.Add(24*time.Hour))
	trA.create(t, "ct_a10", base.Add(time.Minute))

	wantContacts(t, trA.created, walk(t, s, projA, 3, nil), "walk of project A")
	wantContacts(t, trB.created, walk(t, s, projB, 3, nil), "walk of project B")

	// A cursor taken in A, used in B, is a position in B's list.
	cur := cursorOf(t, trA.created[4]) // (base+4s, ct_a4)
	page := listPage(t, s, projB, paginate.Request{Limit: 100, After: cur})
	wantContacts(t, trB.created[4:], page.Items, "project B listed after a cursor of project A")

	// Deleting or re-creating another project's contact is a missing row.
	require.ErrorIsf(t, s.DeleteContact(t.Context(), projB, "ct_a0"), store.ErrNotFound, "DeleteContact(%q, %q) of project A's contact", projB, "ct_a0")
	wantContacts(t, trA.created, listAll(t, s, projA), "project A after B's delete attempt")
}

// An empty or unknown project lists as empty: non-nil Items, HasMore false.
func testContactEmptyProject(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	mustContact(t, s, projB, "ct_x", base)
	for _, p := range []string{projA, "no-such-project"} {
		for _, req := range []paginate.Request{
			{Limit: 25},
			{Limit: 1},
			{Limit: 100, After: paginate.Cursor{ID: "ct_x", CreatedAt: store.Truncate(base.Add(-time.Hour))}},
		} {
			page := listPage(t, s, p, req)
			require.Lenf(t, page.Items, 0, "ListContacts(%q, limit %d, after %q).Items", p, req.Limit, req.After.String())
			require.Falsef(t, page.HasMore, "ListContacts(%q, limit %d).HasMore", p, req.Limit)
		}
	}
}

// DeleteContact removes the contact; deleting a missing one is ErrNotFound.
func testContactDelete(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	tr := newTracker(s, projA)
	for i := range 5 {
		tr.create(t, fmt.Sprintf("ct_%d", i), base.Add(time.Duration(i)*time.Second))
	}
	require.NoErrorf(t, s.DeleteContact(t.Context(), projA, "ct_2"), "DeleteContact(%q, %q)", projA, "ct_2")
	c := tr.created
	wantContacts(t, []store.Contact{c[0], c[1], c[3], c[4]}, listAll(t, s, projA), "ListContacts after a delete")
	require.ErrorIsf(t, s.DeleteContact(t.Context(), projA, "ct_2"), store.ErrNotFound, "second DeleteContact(%q, %q)", projA, "ct_2")
	require.ErrorIsf(t, s.DeleteContact(t.Context(), projA, "ct_9"), store.ErrNotFound, "DeleteContact(%q, %q) of a missing contact", projA, "ct_9")
	require.ErrorIsf(t, s.DeleteContact(t.Context(), projA, "CT_1"), store.ErrNotFound, "DeleteContact(%q, %q): ids are case-sensitive", projA, "CT_1")
	require.ErrorIsf(t, s.DeleteContact(t.Context(), "no-such-project", "ct_1"), store.ErrNotFound, "DeleteContact in an unknown project")
	require.ErrorIsf(t, s.DeleteContact(t.Context(), projA, ""), store.ErrInvalid, "DeleteContact(%q, \"\")", projA)
	require.ErrorIsf(t, s.DeleteContact(t.Context(), "Bad!", "ct_1"), store.ErrInvalid, "DeleteContact(%q, %q)", "Bad!", "ct_1")
	wantContacts(t, []store.Contact{c[0], c[1], c[3], c[4]}, listAll(t, s, projA), "ListContacts after failed deletes")

	// A deleted contact's id is free again; the new contact sorts after
	// every position the project has had.
	again := tr.create(t, "ct_2", base)
	wantContacts(t, []store.Contact{c[0], c[1], c[3], c[4], again}, listAll(t, s, projA), "ListContacts after re-creating a deleted id")
}

// A cursor naming a deleted contact stays valid: the next page starts after
// its position.
func testContactDeletedCursor(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	tr := newTracker(s, projA)
	at := base.Add(time.Minute)
	for _, id := range []string{"ct_a", "ct_b", "ct_c", "ct_d", "ct_e", "ct_f", "ct_g"} {
		tr.create(t, id, at) // all share one timestamp
	}
	c := tr.created
	page := listPage(t, s, projA, paginate.Request{Limit: 3})
	wantContacts(t, c[:3], page.Items, "first page")
	cur := cursorOf(t, page.Items[2])
	require.NoErrorf(t, s.DeleteContact(t.Context(), projA, "ct_c"), "DeleteContact(ct_c), the cursor's item")
	page = listPage(t, s, projA, paginate.Request{Limit: 3, After: cur})
	wantContacts(t, c[3:6], page.Items, "page after the deleted cursor item")
	require.True(t, page.HasMore)
	// Delete the cursor item and the one after it.
	cur = cursorOf(t, page.Items[2])
	require.NoErrorf(t, s.DeleteContact(t.Context(), projA, "ct_f"), "DeleteContact(ct_f)")
	require.NoErrorf(t, s.DeleteContact(t.Context(), projA, "ct_g"), "DeleteContact(ct_g)")
	page = listPage(t, s, projA, paginate.Request{Limit: 3, After: cur})
	wantContacts(t, nil, page.Items, "page after a deleted tail")
	require.False(t, page.HasMore)
}

// A contact added after the project's newest contact was deleted still
// sorts after that contact's position, so a client holding a cursor naming
// the deleted contact sees it (the contract: added contacts are never skipped; a
// cursor stays valid when its item is deleted).
func testContactInsertAfterDeletedTail(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	tr := newTracker(s, projA)
	for i := range 4 {
		tr.create(t, fmt.Sprintf("ct_%d", i), base.Add(time.Duration(i)*time.Hour))
	}
	c := tr.created
	page := listPage(t, s, projA, paginate.Request{Limit: 3})
	require.True(t, page.HasMore)
	cur := cursorOf(t, page.Items[2]) // ct_2 at base+2h
	// The rest of the list goes away, including the cursor item.
	require.NoErrorf(t, s.DeleteContact(t.Context(), projA, "ct_2"), "DeleteContact(ct_2)")
	require.NoErrorf(t, s.DeleteContact(t.Context(), projA, "ct_3"), "DeleteContact(ct_3)")
	// A contact given a time before the cursor is added (tracker: the
	// project's newest position is still ct_3's).
	x := tr.create(t, "ct_x", base.Add(30*time.Minute))
	page = listPage(t, s, projA, paginate.Request{Limit: 3, After: cur})
	wantContacts(t, []store.Contact{x}, page.Items, "the page after a deleted cursor, with a contact added since")
	wantContacts(t, []store.Contact{c[0], c[1], x}, listAll(t, s, projA), "the whole list")

	// The same through the bulk path: delete the tail again, add a batch
	// given earlier times; a client holding the deleted tail's cursor sees
	// the whole batch.
	cur = cursorOf(t, x)
	require.NoErrorf(t, s.DeleteContact(t.Context(), projA, "ct_x"), "DeleteContact(ct_x)")
	batch := []store.Contact{newContact(projA, "ct_y1", base), newContact(projA, "ct_y2", base.Add(time.Minute))}
	require.NoErrorf(t, s.CreateContacts(t.Context(), projA, batch), "CreateContacts after deleting the tail")
	page = listPage(t, s, projA, paginate.Request{Limit: 3, After: cur})
	require.ElementsMatch(t, []string{"ct_y1", "ct_y2"}, contactIDs(page.Items), "the page after a deleted cursor, with a batch added since")
}

// CreateContact: ErrInvalid for an empty id or invalid project id,
// ErrNotFound for an unknown project, ErrConflict for an existing id; none
// of them stores anything.
func testContactCreateErrors(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	orig := mustContact(t, s, projA, "ct_1", base)

	_, err := s.CreateContact(t.Context(), newContact(projA, "", base))
	require.ErrorIsf(t, err, store.ErrInvalid, "CreateContact with an empty id")
	_, err = s.CreateContact(t.Context(), newContact("", "ct_2", base))
	require.ErrorIsf(t, err, store.ErrInvalid, "CreateContact in project \"\"")
	_, err = s.CreateContact(t.Context(), newContact("NOT valid", "ct_2", base))
	require.ErrorIsf(t, err, store.ErrInvalid, "CreateContact in project %q", "NOT valid")
	_, err = s.CreateContact(t.Context(), newContact("no-such-project", "ct_2", base))
	require.ErrorIsf(t, err, store.ErrNotFound, "CreateContact in unknown project %q", "no-such-project")
	dup := newContact(projA, "ct_1", base.Add(time.Hour))
	dup.Name = "changed"
	_, err = s.CreateContact(t.Context(), dup)
	require.ErrorIsf(t, err, store.ErrConflict, "CreateContact(%q) with an existing id", "ct_1")

	wantContacts(t, []store.Contact{orig}, listAll(t, s, projA), "ListContacts after rejected creates")
	mustProject(t, s, "no-such-project")
	wantContacts(t, nil, listAll(t, s, "no-such-project"), "ListContacts of the project a create failed in")

	// A conflict does not move the project's newest position: the next
	// contact, given a time after ct_1, keeps it.
	tr := newTracker(s, projA)
	tr.note(orig)
	tr.create(t, "ct_3", base.Add(time.Minute))
}

// ListContacts: ErrInvalid for an invalid project id or a limit below 1.
func testContactListInvalid(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustContact(t, s, projA, "ct_1", base)
	for _, p := range []string{"", "Proj A", "-x"} {
		_, err := s.ListContacts(t.Context(), p, paginate.Request{Limit: 10})
		require.ErrorIsf(t, err, store.ErrInvalid, "ListContacts(%q)", p)
	}
	for _, limit := range []int{0, -1} {
		_, err := s.ListContacts(t.Context(), projA, paginate.Request{Limit: limit})
		require.ErrorIsf(t, err, store.ErrInvalid, "ListContacts(%q, limit %d)", projA, limit)
	}
}

// CreateContacts inserts a batch; times after the project's newest are kept,
// and the list pages as for one-by-one creates. An empty batch is a no-op.
func testContactBulk(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	require.NoErrorf(t, s.CreateContacts(t.Context(), projA, nil), "CreateContacts(%q, nil)", projA)
	require.NoErrorf(t, s.CreateContacts(t.Context(), projA, []store.Contact{}), "CreateContacts(%q, empty)", projA)
	wantContacts(t, nil, listAll(t, s, projA), "ListContacts after empty batches")

	tr := newTracker(s, projA)
	first := tr.create(t, "ct_first", base)
	var batch []store.Contact
	for i := range 500 {
		// Ascending, some sharing a microsecond (ids ascending too).
		at := base.Add(time.Second + time.Duration(i/4)*time.Millisecond + time.Duration(i%4)*10*time.Nanosecond)
		batch = append(batch, newContact(projA, fmt.Sprintf("ct_b%04d", i), at.In(elsewhere)))
	}
	require.NoErrorf(t, s.CreateContacts(t.Context(), projA, batch), "CreateContacts(%q, 500)", projA)
	want := []store.Contact{first}
	for _, c := range batch {
		c.CreatedAt = store.Truncate(c.CreatedAt)
		want = append(want, c)
	}
	wantContacts(t, want, listAll(t, s, projA), "ListContacts after a bulk insert in order")
	wantContacts(t, want, walk(t, s, projA, 7, nil), "walk with limit 7 after a bulk insert")

	// One-by-one creates after a batch sort after it.
	tr.note(want[len(want)-1])
	tr.create(t, "ct_after", base)
}

// CreateContacts applies the CreatedAt rule to each contact: a batch given
// times before the project's newest contact sorts after it.
func testContactBulkEarlierTimes(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	tr := newTracker(s, projA)
	for i := range 5 {
		tr.create(t, fmt.Sprintf("ct_%d", i), base.Add(time.Duration(i)*time.Hour))
	}
	existing := listAll(t, s, projA)
	top := existing[len(existing)-1]
	var batch []store.Contact
	for i := range 20 {
		at := base.Add(time.Duration(i%5) * 30 * time.Minute) // earlier than ct_4, some shared
		batch = append(batch, newContact(projA, store.NewID(store.PrefixContact), at))
	}
	require.NoErrorf(t, s.CreateContacts(t.Context(), projA, batch), "CreateContacts(%q, 20 earlier)", projA)
	all := listAll(t, s, projA)
	require.Len(t, all, 25)
	wantContacts(t, existing, all[:5], "the contacts that existed come first")
	inBatch := map[string]store.Contact{}
	for _, c := range batch {
		inBatch[c.ID] = c
	}
	for _, got := range all[5:] {
		in, ok := inBatch[got.ID]
		require.Truef(t, ok, "ListContacts returned %q, which is not in the batch", got.ID)
		delete(inBatch, got.ID)
		require.Equal(t, in.Name, got.Name)
		require.Truef(t, contactLess(top, got), "batch contact %q stored at %s sorts before the project's newest contact %q at %s",
			got.ID, got.CreatedAt.Format(time.RFC3339Nano), top.ID, top.CreatedAt.Format(time.RFC3339Nano))
		require.Falsef(t, got.CreatedAt.Before(store.Truncate(in.CreatedAt)), "batch contact %q CreatedAt lowered", got.ID)
	}
	require.Empty(t, inBatch, "batch contacts missing from the list")
	wantContacts(t, all, walk(t, s, projA, 4, nil), "walk with limit 4")
}

// CreateContacts is atomic: a batch with a duplicate id (within the batch or
// already stored), an empty id, or for an unknown project inserts nothing.
func testContactBulkAtomic(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	orig := mustContact(t, s, projA, "ct_exists", base)
	batch := func(ids ...string) []store.Contact {
		var cs []store.Contact
		for i, id := range ids {
			cs = append(cs, newContact(projA, id, base.Add(time.Duration(i+1)*time.Second)))
		}
		return cs
	}
	cases := []struct {
		name string
		cs   []store.Contact
		want error
	}{
		{"duplicate within the batch", batch("ct_1", "ct_2", "ct_3", "ct_2", "ct_4"), store.ErrConflict},
		{"duplicate of a stored contact", batch("ct_1", "ct_2", "ct_exists", "ct_4"), store.ErrConflict},
		{"duplicate at the end", batch("ct_1", "ct_2", "ct_3", "ct_1"), store.ErrConflict},
		{"empty id", batch("ct_1", "ct_2", "", "ct_4"), store.ErrInvalid},
	}
	for _, c := range cases {
		err := s.CreateContacts(t.Context(), projA, c.cs)
		require.ErrorIsf(t, err, c.want, "CreateContacts(%q) with %s", projA, c.name)
		wantContacts(t, []store.Contact{orig}, listAll(t, s, projA), "ListContacts after a failed batch with "+c.name)
	}
	unknown := batch("ct_1", "ct_2")
	for i := range unknown {
		unknown[i].ProjectID = "no-such-project"
	}
	require.ErrorIsf(t, s.CreateContacts(t.Context(), "no-such-project", unknown), store.ErrNotFound, "CreateContacts in an unknown project")
	require.ErrorIsf(t, s.CreateContacts(t.Context(), "Bad Project", batch("ct_1")), store.ErrInvalid, "CreateContacts(%q)", "Bad Project")

	// The ids of failed batches are free.
	require.NoErrorf(t, s.CreateContacts(t.Context(), projA, batch("ct_1", "ct_2", "ct_3", "ct_4")), "CreateContacts after failed batches")
	require.Len(t, listAll(t, s, projA), 5)
}
