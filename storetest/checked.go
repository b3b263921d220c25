package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// Cases of the optional [store.CheckedContactLister] capability. Run and
// RunShared register them only for a store that implements it.

func checkedListCases() []testCase {
	return []testCase{
		{"RecordsAndPage", testCheckedRecordsAndPage},
		{"MissingRecords", testCheckedMissing},
		{"SeesEveryWrite", testCheckedSeesWrites},
		{"RecordsAreTheCallers", testCheckedRecordsAreTheCallers},
		{"ScheduledRevocation", testCheckedScheduledRevocation},
		{"InvalidArguments", testCheckedInvalid},
	}
}

// tokenFixture is a project with a signing key, an API key, a user with a
// session, and contacts.
type tokenFixture struct {
	sk       store.SigningKey
	key      store.APIKey
	family   store.RefreshFamily
	contacts []store.Contact
}

func mustTokenFixture(t *testing.T, s store.Store, project string, contacts int) tokenFixture {
	t.Helper()
	if _, err := s.GetProject(t.Context(), project); err != nil {
		mustProject(t, s, project)
	}
	var f tokenFixture
	f.sk = mustSigningKey(t, s, project, "sk_checked", base)
	f.key = mustAPIKey(t, s, project, "key_checked", base)
	f.family = mustFamilyOf(t, s, mustUser(t, s, project, "checked@example.com"), base, 30*24*time.Hour)
	for i := range contacts {
		f.contacts = append(f.contacts, mustContact(t, s, project, "ct_checked"+string(rune('a'+i)), base.Add(time.Duration(i)*time.Second)))
	}
	return f
}

func (f tokenFixture) ids() store.TokenRecordIDs {
	return store.TokenRecordIDs{SigningKeyID: f.sk.ID, APIKeyID: f.key.ID, SessionID: f.family.ID}
}

// listChecked calls ListContactsChecked and fails the test on an error.
func listChecked(t *testing.T, cl store.CheckedContactLister, project string, ids store.TokenRecordIDs, req paginate.Request) (store.TokenRecords, paginate.Page[store.Contact]) {
	t.Helper()
	recs, page, err := cl.ListContactsChecked(t.Context(), project, ids, req)
	require.NoErrorf(t, err, "ListContactsChecked(%q, %+v, %+v)", project, ids, req)
	return recs, page
}

// wantRecords fails unless recs holds exactly what the Get methods return
// for the records of ids.
func wantRecords(t *testing.T, s store.Store, project string, ids store.TokenRecordIDs, recs store.TokenRecords, what string) {
	t.Helper()
	ctx := t.Context()
	require.NotNilf(t, recs.SigningKey, "%s: SigningKey is nil, want %q", what, ids.SigningKeyID)
	sk, err := s.GetSigningKey(ctx, project, ids.SigningKeyID)
	require.NoError(t, err)
	require.Equalf(t, sk.ID, recs.SigningKey.ID, "%s: SigningKey.ID", what)
	require.Equalf(t, sk.ProjectID, recs.SigningKey.ProjectID, "%s: SigningKey.ProjectID", what)
	require.Equalf(t, sk.Algorithm, recs.SigningKey.Algorithm, "%s: SigningKey.Algorithm", what)
	wantBytes(t, sk.PublicKey, recs.SigningKey.PublicKey, "%s: SigningKey.PublicKey", what)
	wantBytes(t, sk.EncryptedPrivateKey, recs.SigningKey.EncryptedPrivateKey, "%s: SigningKey.EncryptedPrivateKey", what)
	wantTime(t, sk.CreatedAt, recs.SigningKey.CreatedAt, "%s: SigningKey.CreatedAt", what)
	wantTime(t, sk.RetiredAt, recs.SigningKey.RetiredAt, "%s: SigningKey.RetiredAt", what)

	require.NotNilf(t, recs.APIKey, "%s: APIKey is nil, want %q", what, ids.APIKeyID)
	k, err := s.GetAPIKey(ctx, project, ids.APIKeyID)
	require.NoError(t, err)
	require.Equalf(t, []string{k.ID, k.ProjectID, k.Name, k.CreatedBy, k.SigningKeyID},
		[]string{recs.APIKey.ID, recs.APIKey.ProjectID, recs.APIKey.Name, recs.APIKey.CreatedBy, recs.APIKey.SigningKeyID}, "%s: APIKey", what)
	wantTime(t, k.CreatedAt, recs.APIKey.CreatedAt, "%s: APIKey.CreatedAt", what)
	wantTime(t, k.LastUsedAt, recs.APIKey.LastUsedAt, "%s: APIKey.LastUsedAt", what)
	wantTime(t, k.RevokedAt, recs.APIKey.RevokedAt, "%s: APIKey.RevokedAt", what)

	require.NotNilf(t, recs.Session, "%s: Session is nil, want %q", what, ids.SessionID)
	wantFamily(t, mustGetFamily(t, s, project, ids.SessionID), *recs.Session, what+": Session")
}

// The records come back whole, as their Get methods return them, and the
// page is ListContacts' page: the first one and one after a cursor.
func testCheckedRecordsAndPage(t *testing.T, s store.Store) {
	cl := capability[store.CheckedContactLister](t, s)
	f := mustTokenFixture(t, s, projA, 5)
	mustTokenFixture(t, s, projB, 2) // the same record ids in another project
	ctx := t.Context()
	// Contacts sharing one CreatedAt, given out of id order: the page
	// orders them by id.
	same := base.Add(time.Hour)
	require.NoError(t, s.CreateContacts(ctx, projA, []store.Contact{
		newContact(projA, "ct_same_c", same), newContact(projA, "ct_same_a", same), newContact(projA, "ct_same_b", same),
	}))
	require.NoError(t, s.TouchAPIKey(ctx, projA, f.key.ID, base.Add(time.Minute)))

	for _, req := range []paginate.Request{
		{Limit: 2},
		{Limit: 2, After: cursorOf(t, f.contacts[1])},
		{Limit: 3, After: cursorOf(t, f.contacts[1])},
		{Limit: 100},
		{Limit: 2, After: cursorOf(t, f.contacts[4])},
		{Limit: 4, After: cursorOf(t, f.contacts[3])},
	} {
		recs, page := listChecked(t, cl, projA, f.ids(), req)
		wantRecords(t, s, projA, f.ids(), recs, "ListContactsChecked")
		want, err := s.ListContacts(ctx, projA, req)
		require.NoError(t, err)
		wantContacts(t, want.Items, page.Items, "ListContactsChecked page")
		require.Equalf(t, want.HasMore, page.HasMore, "ListContactsChecked(%+v).HasMore", req)
		require.NotNilf(t, page.Items, "ListContactsChecked(%+v).Items is nil, want a non-nil slice", req)
	}
}

// An API key whose revocation a roll scheduled comes back with that time:
// the record stops at it (its RevokedAt may hold it), so that a verifier
// refuses the key from then on without another read.
func testCheckedScheduledRevocation(t *testing.T, s store.Store) {
	cl := capability[store.CheckedContactLister](t, s)
	f := mustTokenFixture(t, s, projA, 1)
	due := base.Add(24 * time.Hour)
	_, err := s.RollAPIKey(t.Context(), projA, f.key.ID, successorOf(f.key, "key_checked_next", base.Add(time.Hour)), due)
	require.NoError(t, err)
	recs, _ := listChecked(t, cl, projA, f.ids(), paginate.Request{Limit: 10})
	require.NotNil(t, recs.APIKey, "ListContactsChecked: the rolled key's record")
	wantTime(t, due, recs.APIKey.StopsAt(), "ListContactsChecked: the rolled key's StopsAt")
}

// Records not asked for, missing, or of another project are nil; the page
// is read all the same, also for a project without contacts.
func testCheckedMissing(t *testing.T, s store.Store) {
	cl := capability[store.CheckedContactLister](t, s)
	f := mustTokenFixture(t, s, projA, 3)
	mustProject(t, s, projB)
	for _, c := range []struct {
		name    string
		project string
		ids     store.TokenRecordIDs
		items   int
	}{
		{"none asked", projA, store.TokenRecordIDs{}, 3},
		{"signing key only", projA, store.TokenRecordIDs{SigningKeyID: f.sk.ID}, 3},
		{"unknown ids", projA, store.TokenRecordIDs{SigningKeyID: "sk_none", APIKeyID: "key_none", SessionID: "rf_none"}, 3},
		{"another project's records", projB, f.ids(), 0},
	} {
		recs, page := listChecked(t, cl, c.project, c.ids, paginate.Request{Limit: 10})
		require.Lenf(t, page.Items, c.items, "%s: page", c.name)
		require.NotNilf(t, page.Items, "%s: Items is nil, want a non-nil slice", c.name)
		require.Equalf(t, c.name == "signing key only", recs.SigningKey != nil, "%s: SigningKey = %v", c.name, recs.SigningKey)
		require.Nilf(t, recs.APIKey, "%s: APIKey", c.name)
		require.Nilf(t, recs.Session, "%s: Session", c.name)
	}
}

// A write through the handle is seen by the next call: a revoked API key,
// a retired signing key, an ended session, a new contact.
func testCheckedSeesWrites(t *testing.T, s store.Store) {
	checkedSeesWrites(t, s, s)
}

// checkedSeesWrites writes through w and reads through r.
func checkedSeesWrites(t *testing.T, w, r store.Store) {
	cl := capability[store.CheckedContactLister](t, r)
	ctx := t.Context()
	f := mustTokenFixture(t, w, projA, 1)
	mustSigningKey(t, w, projA, "sk_newer", base.Add(time.Hour)) // so sk_checked may retire
	req := paginate.Request{Limit: 10}
	recs, page := listChecked(t, cl, projA, f.ids(), req)
	require.False(t, recs.APIKey.Revoked() || recs.SigningKey.Retired() || !recs.Session.RevokedAt.IsZero(), "records before the writes")
	require.Len(t, page.Items, 1)

	at := base.Add(2 * time.Hour)
	steps := []struct {
		name  string
		write func(context.Context) error
		seen  func(store.TokenRecords, paginate.Page[store.Contact]) bool
	}{
		{"RevokeAPIKey", func(ctx context.Context) error { return w.RevokeAPIKey(ctx, projA, f.key.ID, at) },
			func(r store.TokenRecords, _ paginate.Page[store.Contact]) bool { return r.APIKey.Revoked() }},
		{"RetireSigningKey", func(ctx context.Context) error { return w.RetireSigningKey(ctx, projA, f.sk.ID, at) },
			func(r store.TokenRecords, _ paginate.Page[store.Contact]) bool { return r.SigningKey.Retired() }},
		{"RevokeRefreshFamily", func(ctx context.Context) error { return w.RevokeRefreshFamily(ctx, projA, f.family.ID, at) },
			func(r store.TokenRecords, _ paginate.Page[store.Contact]) bool { return !r.Session.RevokedAt.IsZero() }},
		{"CreateContact", func(ctx context.Context) error {
			_, err := w.CreateContact(ctx, newContact(projA, "ct_later", at))
			return err
		}, func(_ store.TokenRecords, p paginate.Page[store.Contact]) bool { return len(p.Items) == 2 }},
	}
	for _, st := range steps {
		require.NoErrorf(t, st.write(ctx), "%s", st.name)
		recs, page := listChecked(t, cl, projA, f.ids(), req)
		require.Truef(t, st.seen(recs, page), "ListContactsChecked right after %s does not show it: %+v", st.name, recs)
	}
}

// The records a call returns are the caller's: changing them (their bytes
// included) changes nothing a later call returns.
func testCheckedRecordsAreTheCallers(t *testing.T, s store.Store) {
	cl := capability[store.CheckedContactLister](t, s)
	f := mustTokenFixture(t, s, projA, 1)
	req := paginate.Request{Limit: 10}
	for range 3 {
		recs, _ := listChecked(t, cl, projA, f.ids(), req)
		wantRecords(t, s, projA, f.ids(), recs, "ListContactsChecked after a caller changed what an earlier call returned")
		recs.SigningKey.ID, recs.SigningKey.RetiredAt = "sk_changed", base
		recs.SigningKey.PublicKey[0] ^= 0xff
		recs.SigningKey.EncryptedPrivateKey[0] ^= 0xff
		recs.APIKey.Name, recs.APIKey.RevokedAt = "changed", base
		recs.Session.UserID, recs.Session.RevokedAt = "usr_changed", base
	}
}

// Bad arguments are refused with ErrInvalid, as ListContacts refuses them.
func testCheckedInvalid(t *testing.T, s store.Store) {
	cl := capability[store.CheckedContactLister](t, s)
	f := mustTokenFixture(t, s, projA, 1)
	for _, c := range []struct {
		name    string
		project string
		ids     store.TokenRecordIDs
		req     paginate.Request
	}{
		{"bad project", "Bad Project", f.ids(), paginate.Request{Limit: 10}},
		{"empty project", "", f.ids(), paginate.Request{Limit: 10}},
		{"zero limit", projA, f.ids(), paginate.Request{}},
		{"negative limit", projA, f.ids(), paginate.Request{Limit: -1}},
		{"bad signing key id", projA, store.TokenRecordIDs{SigningKeyID: "sk:x"}, paginate.Request{Limit: 10}},
		{"bad API key id", projA, store.TokenRecordIDs{SigningKeyID: f.sk.ID, APIKeyID: "key x"}, paginate.Request{Limit: 10}},
		{"bad session id", projA, store.TokenRecordIDs{SigningKeyID: f.sk.ID, SessionID: "rf\x00"}, paginate.Request{Limit: 10}},
	} {
		_, _, err := cl.ListContactsChecked(t.Context(), c.project, c.ids, c.req)
		require.ErrorIsf(t, err, store.ErrInvalid, "ListContactsChecked with %s", c.name)
	}
}

// A write through one handle is seen by the next call through the other.
func testSharedChecked(t *testing.T, a, b store.Store) {
	checkedSeesWrites(t, a, b)
}
