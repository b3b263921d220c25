package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// Cases of the optional [store.VersionedContactLister] capability. Run and
// RunShared register them only for a store that implements it.

func versionedListCases() []testCase {
	return []testCase{
		{"PageAndVersion", testVersionedPageAndVersion},
		{"ChangesAfterEachWrite", testVersionedChanges},
		{"InvalidArguments", testVersionedInvalid},
	}
}

// listVersioned calls ListContactsVersioned and fails the test on an error.
func listVersioned(t *testing.T, vl store.VersionedContactLister, project string, req paginate.Request) (uint64, paginate.Page[store.Contact]) {
	t.Helper()
	ver, page, err := vl.ListContactsVersioned(t.Context(), project, req)
	require.NoErrorf(t, err, "ListContactsVersioned(%q, %+v)", project, req)
	return ver, page
}

// The page is ListContacts' page, and with no write around the calls the
// version is ChangeVersion's.
func testVersionedPageAndVersion(t *testing.T, s store.Store) {
	vl := capability[store.VersionedContactLister](t, s)
	ctx := t.Context()
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	var cs []store.Contact
	for i, id := range []string{"ct_v1", "ct_v2", "ct_v3", "ct_v4"} {
		cs = append(cs, mustContact(t, s, projA, id, base.Add(time.Duration(i)*time.Second)))
	}
	v := changeVersion(t, vl, "after the writes")
	for _, c := range []struct {
		project string
		req     paginate.Request
	}{
		{projA, paginate.Request{Limit: 2}},
		{projA, paginate.Request{Limit: 2, After: cursorOf(t, cs[1])}},
		{projA, paginate.Request{Limit: 100}},
		{projA, paginate.Request{Limit: 2, After: cursorOf(t, cs[3])}},
		{projB, paginate.Request{Limit: 10}},
	} {
		ver, page := listVersioned(t, vl, c.project, c.req)
		require.Equalf(t, v, ver, "ListContactsVersioned(%q, %+v) with no write since ChangeVersion()", c.project, c.req)
		want, err := s.ListContacts(ctx, c.project, c.req)
		require.NoError(t, err)
		wantContacts(t, want.Items, page.Items, "ListContactsVersioned page")
		require.Equalf(t, want.HasMore, page.HasMore, "ListContactsVersioned(%q, %+v).HasMore", c.project, c.req)
		require.NotNilf(t, page.Items, "ListContactsVersioned(%q, %+v).Items is nil, want a non-nil slice", c.project, c.req)
	}
	require.Equal(t, v, changeVersion(t, vl, "after the lists"), "ChangeVersion() after reads only")
}

// A write through the handle gives the next call a version different from
// every earlier one, of either method, and a page that shows the write.
func testVersionedChanges(t *testing.T, s store.Store) {
	versionedSeesWrites(t, s, s)
}

// versionedSeesWrites writes through w and reads through r.
func versionedSeesWrites(t *testing.T, w, r store.Store) {
	vl := capability[store.VersionedContactLister](t, r)
	mustProject(t, w, projA)
	mustAPIKey(t, w, projA, "key_v", base)
	req := paginate.Request{Limit: 10}
	seen := map[uint64]string{}
	note := func(v uint64, what string) {
		t.Helper()
		prev, ok := seen[v]
		require.Falsef(t, ok, "version %d %s is the one of %s: a committed write went unnoticed", v, what, prev)
		seen[v] = what
	}
	ver, page := listVersioned(t, vl, projA, req)
	require.Empty(t, page.Items)
	note(ver, "at start")
	for _, st := range []struct {
		name     string
		write    func(context.Context) error
		contacts int // on the page after the write
	}{
		{"CreateContact", func(ctx context.Context) error {
			_, err := w.CreateContact(ctx, newContact(projA, "ct_w1", base))
			return err
		}, 1},
		{"RevokeAPIKey", func(ctx context.Context) error { return w.RevokeAPIKey(ctx, projA, "key_v", base.Add(time.Second)) }, 1},
		{"CreateContact again", func(ctx context.Context) error {
			_, err := w.CreateContact(ctx, newContact(projA, "ct_w2", base.Add(time.Second)))
			return err
		}, 2},
	} {
		require.NoErrorf(t, st.write(t.Context()), "%s", st.name)
		ver, page := listVersioned(t, vl, projA, req)
		note(ver, "of ListContactsVersioned after "+st.name)
		require.Lenf(t, page.Items, st.contacts, "the page after %s", st.name)
		again := changeVersion(t, vl, "after "+st.name)
		require.Equalf(t, ver, again, "ChangeVersion() right after ListContactsVersioned, with no write between, after %s", st.name)
	}
}

// Bad arguments are refused with ErrInvalid, as ListContacts refuses them.
func testVersionedInvalid(t *testing.T, s store.Store) {
	vl := capability[store.VersionedContactLister](t, s)
	mustProject(t, s, projA)
	for _, c := range []struct {
		name    string
		project string
		req     paginate.Request
	}{
		{"bad project", "Bad Project", paginate.Request{Limit: 10}},
		{"empty project", "", paginate.Request{Limit: 10}},
		{"zero limit", projA, paginate.Request{}},
		{"negative limit", projA, paginate.Request{Limit: -1}},
	} {
		_, _, err := vl.ListContactsVersioned(t.Context(), c.project, c.req)
		require.ErrorIsf(t, err, store.ErrInvalid, "ListContactsVersioned with %s", c.name)
	}
}

// A write through one handle changes the version the other handle's
// ListContactsVersioned reports, and shows in its page.
func testSharedVersioned(t *testing.T, a, b store.Store) {
	versionedSeesWrites(t, a, b)
}
