package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

func userCases() []testCase {
	return []testCase{
		{"CreateGet", testUserCreateGet},
		{"GetByEmailAnyCase", testUserGetByEmailAnyCase},
		{"DuplicateEmail", testUserDuplicateEmail},
		{"DuplicateID", testUserDuplicateID},
		{"SameEmailTwoProjects", testUserSameEmailTwoProjects},
		{"Tags", testUserTags},
		{"TagsRefused", testUserTagsRefused},
		{"SetTags", testUserSetTags},
		{"SetPasswordHash", testUserSetPasswordHash},
		{"ReplacePasswordHash", testUserReplacePasswordHash},
		{"Unknown", testUserUnknown},
		{"Invalid", testUserInvalid},
		{"UnknownProject", testUserUnknownProject},
		{"OtherProject", testUserOtherProject},
		{"ListOrder", testUserListOrder},
		{"ListPages", testUserListPages},
		{"ListLookAhead", testUserListLookAhead},
		{"ListAddedWhilePaging", testUserListAddedWhilePaging},
		{"ListEmailPrefix", testUserListEmailPrefix},
		{"ListPrefixLiteral", testUserListPrefixLiteral},
		{"ListOtherProject", testUserListOtherProject},
		{"ListUnknownProject", testUserListUnknownProject},
		{"ListInvalid", testUserListInvalid},
		{"Disable", testUserDisable},
		{"DisableTwice", testUserDisableTwice},
		{"Enable", testUserEnable},
		{"DisableUnknown", testUserDisableUnknown},
	}
}

func wantUser(t *testing.T, want, got store.User, what string) {
	t.Helper()
	require.Equalf(t, want.ID, got.ID, "%s: ID", what)
	require.Equalf(t, want.ProjectID, got.ProjectID, "%s: ProjectID", what)
	require.Equalf(t, want.Email, got.Email, "%s: Email (kept as given)", what)
	require.Equalf(t, want.PasswordHash, got.PasswordHash, "%s: PasswordHash", what)
	require.NotNilf(t, got.Tags, "%s: Tags = nil, want a non-nil slice", what)
	wantTags := want.Tags
	if wantTags == nil {
		wantTags = []string{}
	}
	require.Equalf(t, wantTags, got.Tags, "%s: Tags", what)
	wantTime(t, want.CreatedAt, got.CreatedAt, "%s: CreatedAt", what)
	wantTime(t, want.DisabledAt, got.DisabledAt, "%s: DisabledAt", what)
}

func mustGetUser(t *testing.T, s store.UserStore, project, id string) store.User {
	t.Helper()
	u, err := s.GetUser(t.Context(), project, id)
	require.NoErrorf(t, err, "GetUser(%q, %q)", project, id)
	return u
}

// CreateUser stores every field; GetUser and GetUserByEmail return it, the
// email as given, the time in UTC truncated to microseconds.
func testUserCreateGet(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := store.User{
		ID:           store.NewID(store.PrefixUser),
		ProjectID:    projA,
		Email:        "Alice.Smith@Example.COM",
		PasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$YWJjZGVmZ2hpamtsbW5vcA$MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI",
		Tags:         []string{"admin", "support"},
		CreatedAt:    base.In(elsewhere),
	}
	require.NoErrorf(t, s.CreateUser(t.Context(), u), "CreateUser(%q)", u.Email)

	got, err := s.GetUser(t.Context(), projA, u.ID)
	require.NoErrorf(t, err, "GetUser(%q, %q)", projA, u.ID)
	wantUser(t, u, got, "GetUser")
	require.True(t, got.HasTag("admin"), "GetUser(...).HasTag(admin)")

	got, err = s.GetUserByEmail(t.Context(), projA, u.Email)
	require.NoErrorf(t, err, "GetUserByEmail(%q, %q)", projA, u.Email)
	wantUser(t, u, got, "GetUserByEmail")

	// A second user does not disturb the first.
	v := mustUser(t, s, projA, "bob@example.com")
	got, err = s.GetUser(t.Context(), projA, v.ID)
	require.NoErrorf(t, err, "GetUser(%q, %q)", projA, v.ID)
	wantUser(t, v, got, "GetUser of the second user")
	got, err = s.GetUser(t.Context(), projA, u.ID)
	require.NoErrorf(t, err, "GetUser(%q, %q)", projA, u.ID)
	wantUser(t, u, got, "GetUser of the first user after a second create")
}

// GetUserByEmail compares emails case-insensitively in NormalizeEmail form
// (trimmed, lower-cased, Unicode included).
func testUserGetByEmailAnyCase(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "Carol@Example.com")
	for _, email := range []string{"carol@example.com", "CAROL@EXAMPLE.COM", "cArOl@eXaMpLe.CoM", "  Carol@Example.com\t", "Carol@Example.com"} {
		got, err := s.GetUserByEmail(t.Context(), projA, email)
		require.NoErrorf(t, err, "GetUserByEmail(%q, %q)", projA, email)
		require.Equalf(t, u.ID, got.ID, "GetUserByEmail(%q).ID", email)
		require.Equalf(t, "Carol@Example.com", got.Email, "GetUserByEmail(%q).Email, kept as given", email)
	}
	w := mustUser(t, s, projA, "ZOË@Example.com")
	got, err := s.GetUserByEmail(t.Context(), projA, "zoë@example.com")
	require.NoErrorf(t, err, "GetUserByEmail(%q, %q)", projA, "zoë@example.com")
	require.Equal(t, w.ID, got.ID, "GetUserByEmail of a non-ASCII email in another case")

	for _, email := range []string{"carol@example.co", "carol@example.comm", "carol", "xcarol@example.com"} {
		_, err := s.GetUserByEmail(t.Context(), projA, email)
		require.ErrorIsf(t, err, store.ErrNotFound, "GetUserByEmail(%q, %q)", projA, email)
	}
}

// CreateUser returns ErrConflict when another user of the project has the
// same email compared case-insensitively, and stores nothing.
func testUserDuplicateEmail(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "dave@example.com")
	for _, email := range []string{"dave@example.com", "DAVE@example.com", "Dave@Example.Com", "dAVE@EXAMPLE.COM"} {
		dup := newUser(projA, email)
		err := s.CreateUser(t.Context(), dup)
		require.ErrorIsf(t, err, store.ErrConflict, "CreateUser(%q) after %q", email, u.Email)
		_, err = s.GetUser(t.Context(), projA, dup.ID)
		require.ErrorIsf(t, err, store.ErrNotFound, "GetUser(%q) of a user whose create conflicted", dup.ID)
	}
	// The same email with white space around it is not an address
	// (CheckEmail): ErrInvalid, whatever exists.
	spaced := newUser(projA, " dave@example.com ")
	require.ErrorIsf(t, s.CreateUser(t.Context(), spaced), store.ErrInvalid, "CreateUser(%q)", spaced.Email)
	_, err := s.GetUser(t.Context(), projA, spaced.ID)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetUser(%q) of a user whose create was refused", spaced.ID)
	got, err := s.GetUserByEmail(t.Context(), projA, "DAVE@EXAMPLE.COM")
	require.NoErrorf(t, err, "GetUserByEmail(%q)", "DAVE@EXAMPLE.COM")
	require.Equal(t, u.ID, got.ID, "the first user keeps the email")

	// Non-ASCII letters compare case-insensitively too.
	mustUser(t, s, projA, "émile@example.com")
	err = s.CreateUser(t.Context(), newUser(projA, "ÉMILE@EXAMPLE.COM"))
	require.ErrorIsf(t, err, store.ErrConflict, "CreateUser(%q) after %q", "ÉMILE@EXAMPLE.COM", "émile@example.com")
}

// CreateUser returns ErrConflict when the id exists, even with another
// email, and keeps the first user.
func testUserDuplicateID(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "erin@example.com")
	dup := newUser(projA, "someone-else@example.com")
	dup.ID = u.ID
	require.ErrorIsf(t, s.CreateUser(t.Context(), dup), store.ErrConflict, "CreateUser(%q) with an existing id", dup.ID)
	got, err := s.GetUser(t.Context(), projA, u.ID)
	require.NoErrorf(t, err, "GetUser(%q)", u.ID)
	require.Equal(t, u.Email, got.Email, "the first user is kept")
	_, err = s.GetUserByEmail(t.Context(), projA, dup.Email)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetUserByEmail(%q) of a user whose create conflicted", dup.Email)
}

// The same email in two projects is two users.
func testUserSameEmailTwoProjects(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	a := mustUser(t, s, projA, "frank@example.com")
	b := mustUser(t, s, projB, "Frank@Example.com")
	require.NotEqual(t, a.ID, b.ID)
	got, err := s.GetUserByEmail(t.Context(), projA, "FRANK@example.com")
	require.NoErrorf(t, err, "GetUserByEmail(%q, ...)", projA)
	require.Equal(t, a.ID, got.ID, "project A's user")
	got, err = s.GetUserByEmail(t.Context(), projB, "frank@EXAMPLE.com")
	require.NoErrorf(t, err, "GetUserByEmail(%q, ...)", projB)
	require.Equal(t, b.ID, got.ID, "project B's user")
	require.Equal(t, "Frank@Example.com", got.Email)
}

// Tags round-trip as a list: order kept, nil and empty both read back as a
// non-nil empty slice, and every tag CheckTags accepts kept as given
// (letters of any script, digits, "-", "_", ".", ":" after the first
// character, MaxTags tags, tags of MaxTagLen characters).
func testUserTags(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	cases := []struct {
		name string
		tags []string
		want []string
	}{
		{"nil", nil, []string{}},
		{"empty", []string{}, []string{}},
		{"one", []string{"admin"}, []string{"admin"}},
		{"order kept", []string{"zeta", "admin", "beta"}, []string{"zeta", "admin", "beta"}},
		{"awkward but valid", []string{"ünïcödé", "null", "a:b", "v1.2", "x_y-z", "0day", "Admin", "admin", "日本語", "true"},
			[]string{"ünïcödé", "null", "a:b", "v1.2", "x_y-z", "0day", "Admin", "admin", "日本語", "true"}},
		{"longest tag", []string{strings.Repeat("é", store.MaxTagLen)}, []string{strings.Repeat("é", store.MaxTagLen)}},
		{"most tags", manyTags(store.MaxTags), manyTags(store.MaxTags)},
	}
	for i, c := range cases {
		u := newUser(projA, "tags"+string(rune('a'+i))+"@example.com")
		u.Tags = c.tags
		require.NoErrorf(t, s.CreateUser(t.Context(), u), "CreateUser with tags %q", c.tags)
		got := mustGetUser(t, s, projA, u.ID)
		require.NotNilf(t, got.Tags, "tags %s: GetUser(...).Tags = nil, want a non-nil slice", c.name)
		require.Equalf(t, c.want, got.Tags, "tags %s: GetUser(...).Tags", c.name)
		got, err := s.GetUserByEmail(t.Context(), projA, u.Email)
		require.NoErrorf(t, err, "GetUserByEmail(%q)", u.Email)
		require.Equalf(t, c.want, got.Tags, "tags %s: GetUserByEmail(...).Tags", c.name)
		listed := userList(s, projA, u.Email).all(t)
		require.Lenf(t, listed, 1, "ListUsers(%q, %q)", projA, u.Email)
		require.Equalf(t, c.want, listed[0].Tags, "tags %s: ListUsers(...)[0].Tags", c.name)
	}
}

// manyTags returns n distinct valid tags.
func manyTags(n int) []string {
	tags := make([]string, n)
	for i := range tags {
		tags[i] = fmt.Sprintf("tag-%02d", i)
	}
	return tags
}

// refusedTags are tag lists CheckTags refuses: by design, tags hold no
// white space, commas, quotes or brackets, start with a letter or digit,
// are not repeated, and are bounded in length and number.
var refusedTags = []struct {
	name string
	tags []string
}{
	{"space", []string{"spa ce"}},
	{"comma", []string{"a,b"}},
	{"quote", []string{`quote"d`}},
	{"brackets", []string{"[x]"}},
	{"empty tag", []string{"admin", ""}},
	{"leading dash", []string{"-admin"}},
	{"leading colon", []string{":admin"}},
	{"repeated", []string{"admin", "ops", "admin"}},
	{"too long", []string{strings.Repeat("a", store.MaxTagLen+1)}},
	{"too many", manyTags(store.MaxTags + 1)},
	{"invalid UTF-8", []string{"ad\xffmin"}},
	{"control character", []string{"ad\nmin"}},
	{"bidi control", []string{"ad\u202emin"}},
}

// CreateUser and SetUserTags refuse tags that CheckTags refuses with
// ErrInvalid, and store nothing.
func testUserTagsRefused(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "tagged@example.com")
	require.NoError(t, s.SetUserTags(t.Context(), projA, u.ID, []string{"admin"}), "SetUserTags(admin)")
	u.Tags = []string{"admin"}
	for i, c := range refusedTags {
		require.Errorf(t, store.CheckTags(c.tags), "precondition: CheckTags refuses tags with %s", c.name)
		nu := newUser(projA, fmt.Sprintf("refused%d@example.com", i))
		nu.Tags = c.tags
		require.ErrorIsf(t, s.CreateUser(t.Context(), nu), store.ErrInvalid, "CreateUser with tags with %s (%q)", c.name, c.tags)
		_, err := s.GetUser(t.Context(), projA, nu.ID)
		require.ErrorIsf(t, err, store.ErrNotFound, "GetUser of a user whose create was refused (tags with %s)", c.name)
		require.ErrorIsf(t, s.SetUserTags(t.Context(), projA, u.ID, c.tags), store.ErrInvalid, "SetUserTags with %s (%q)", c.name, c.tags)
		wantUser(t, u, mustGetUser(t, s, projA, u.ID), "GetUser after a refused SetUserTags")
	}
}

// SetUserTags replaces the user's tags, keeping their order, and changes
// nothing else and no other user; nil and empty clear them.
func testUserSetTags(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	u := mustUser(t, s, projA, "settags@example.com")
	v := newUser(projA, "bystander@example.com")
	v.Tags = []string{"ops"}
	require.NoError(t, s.CreateUser(t.Context(), v), "CreateUser")
	for _, tags := range [][]string{{"admin"}, {"zeta", "admin", "beta"}, nil, {"support"}, {}, manyTags(store.MaxTags)} {
		require.NoErrorf(t, s.SetUserTags(t.Context(), projA, u.ID, tags), "SetUserTags(%q, %q, %q)", projA, u.ID, tags)
		u.Tags = tags
		wantUser(t, u, mustGetUser(t, s, projA, u.ID), fmt.Sprintf("GetUser after SetUserTags(%q)", tags))
		wantUser(t, v, mustGetUser(t, s, projA, v.ID), "another user after SetUserTags")
	}
	require.NoError(t, s.SetUserTags(t.Context(), projA, u.ID, []string{"admin"}), "SetUserTags(admin)")
	u.Tags = []string{"admin"}
	require.True(t, mustGetUser(t, s, projA, u.ID).HasTag("admin"), "HasTag(admin) after SetUserTags")

	// The caller's slice is not kept: changing it afterwards changes
	// nothing stored.
	tags := []string{"first", "second"}
	require.NoError(t, s.SetUserTags(t.Context(), projA, u.ID, tags), "SetUserTags(first, second)")
	tags[0] = "changed"
	u.Tags = []string{"first", "second"}
	wantUser(t, u, mustGetUser(t, s, projA, u.ID), "GetUser after the caller changed its slice")

	require.ErrorIs(t, s.SetUserTags(t.Context(), projA, store.NewID(store.PrefixUser), []string{"x"}), store.ErrNotFound, "SetUserTags of an unknown user")
	require.ErrorIs(t, s.SetUserTags(t.Context(), projB, u.ID, []string{"x"}), store.ErrNotFound, "SetUserTags through another project")
	require.ErrorIs(t, s.SetUserTags(t.Context(), "no-such-project", u.ID, []string{"x"}), store.ErrNotFound, "SetUserTags in an unknown project")
	require.ErrorIs(t, s.SetUserTags(t.Context(), projA, "", []string{"x"}), store.ErrInvalid, "SetUserTags of an empty id")
	require.ErrorIs(t, s.SetUserTags(t.Context(), "Bad Project", u.ID, []string{"x"}), store.ErrInvalid, "SetUserTags in an invalid project")
	wantUser(t, u, mustGetUser(t, s, projA, u.ID), "GetUser after refused SetUserTags calls")
}

// SetPasswordHash replaces the hash and nothing else; an unknown user is
// ErrNotFound, an empty hash ErrInvalid (and changes nothing).
func testUserSetPasswordHash(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "grace@example.com")
	v := mustUser(t, s, projA, "heidi@example.com")
	const hash = "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"
	require.NoErrorf(t, s.SetPasswordHash(t.Context(), projA, u.ID, hash), "SetPasswordHash(%q)", u.ID)
	got, err := s.GetUser(t.Context(), projA, u.ID)
	require.NoErrorf(t, err, "GetUser(%q)", u.ID)
	u.PasswordHash = hash
	wantUser(t, u, got, "GetUser after SetPasswordHash")
	got, err = s.GetUser(t.Context(), projA, v.ID)
	require.NoErrorf(t, err, "GetUser(%q)", v.ID)
	wantUser(t, v, got, "GetUser of another user after SetPasswordHash")

	err = s.SetPasswordHash(t.Context(), projA, store.NewID(store.PrefixUser), hash)
	require.ErrorIsf(t, err, store.ErrNotFound, "SetPasswordHash of an unknown user")
	err = s.SetPasswordHash(t.Context(), "no-such-project", u.ID, hash)
	require.ErrorIsf(t, err, store.ErrNotFound, "SetPasswordHash(%q, %q) in an unknown project", "no-such-project", u.ID)
	err = s.SetPasswordHash(t.Context(), projA, "", hash)
	require.ErrorIsf(t, err, store.ErrInvalid, "SetPasswordHash(%q, \"\")", projA)
	err = s.SetPasswordHash(t.Context(), projA, u.ID, "")
	require.ErrorIsf(t, err, store.ErrInvalid, "SetPasswordHash(%q, %q) with an empty hash", projA, u.ID)
	got, err = s.GetUser(t.Context(), projA, u.ID)
	require.NoErrorf(t, err, "GetUser(%q)", u.ID)
	wantUser(t, u, got, "GetUser after SetPasswordHash with an empty hash")
}

// ReplacePasswordHash replaces the hash only while it is the old one given:
// a hash set meanwhile is ErrConflict and stays; an unknown user is
// ErrNotFound, an empty old or new hash ErrInvalid, each changing nothing.
func testUserReplacePasswordHash(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "judy@example.com")
	v := mustUser(t, s, projA, "kim@example.com")
	const (
		upgraded = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U"
		reset    = "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"
	)
	ctx := t.Context()
	require.NoErrorf(t, s.ReplacePasswordHash(ctx, projA, u.ID, u.PasswordHash, upgraded), "ReplacePasswordHash(%q) from its hash", u.ID)
	u.PasswordHash = upgraded
	wantUser(t, u, mustGetUser(t, s, projA, u.ID), "GetUser after ReplacePasswordHash")
	wantUser(t, v, mustGetUser(t, s, projA, v.ID), "GetUser of another user after ReplacePasswordHash")

	// The hash changes (a reset); a replacement from the hash read before
	// it changes nothing.
	require.NoErrorf(t, s.SetPasswordHash(ctx, projA, u.ID, reset), "SetPasswordHash(%q)", u.ID)
	u.PasswordHash = reset
	err := s.ReplacePasswordHash(ctx, projA, u.ID, upgraded, "$2a$10$staleStaleStaleStaleStaleStaleStaleStaleStaleStaleStale")
	require.ErrorIsf(t, err, store.ErrConflict, "ReplacePasswordHash(%q) from a hash it no longer has", u.ID)
	wantUser(t, u, mustGetUser(t, s, projA, u.ID), "GetUser after a refused ReplacePasswordHash")

	err = s.ReplacePasswordHash(ctx, projA, store.NewID(store.PrefixUser), reset, upgraded)
	require.ErrorIsf(t, err, store.ErrNotFound, "ReplacePasswordHash of an unknown user")
	err = s.ReplacePasswordHash(ctx, "no-such-project", u.ID, reset, upgraded)
	require.ErrorIsf(t, err, store.ErrNotFound, "ReplacePasswordHash in an unknown project")
	require.ErrorIsf(t, s.ReplacePasswordHash(ctx, projA, u.ID, "", upgraded), store.ErrInvalid, "ReplacePasswordHash from an empty hash")
	require.ErrorIsf(t, s.ReplacePasswordHash(ctx, projA, u.ID, reset, ""), store.ErrInvalid, "ReplacePasswordHash to an empty hash")
	require.ErrorIsf(t, s.ReplacePasswordHash(ctx, projA, "", reset, upgraded), store.ErrInvalid, "ReplacePasswordHash of an empty id")
	wantUser(t, u, mustGetUser(t, s, projA, u.ID), "GetUser after refused ReplacePasswordHash calls")
}

// GetUser and GetUserByEmail return ErrNotFound for a user that does not
// exist, in a known or an unknown project.
func testUserUnknown(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustUser(t, s, projA, "ivan@example.com")
	id := store.NewID(store.PrefixUser)
	_, err := s.GetUser(t.Context(), projA, id)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetUser(%q, %q)", projA, id)
	_, err = s.GetUserByEmail(t.Context(), projA, "judy@example.com")
	require.ErrorIsf(t, err, store.ErrNotFound, "GetUserByEmail(%q, %q)", projA, "judy@example.com")
	_, err = s.GetUser(t.Context(), "no-such-project", id)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetUser(%q, %q)", "no-such-project", id)
	_, err = s.GetUserByEmail(t.Context(), "no-such-project", "ivan@example.com")
	require.ErrorIsf(t, err, store.ErrNotFound, "GetUserByEmail(%q, %q)", "no-such-project", "ivan@example.com")
}

// Empty ids, empty emails and invalid project ids are ErrInvalid, for
// writes and reads, and change nothing.
func testUserInvalid(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "kim@example.com")

	noID := newUser(projA, "noid@example.com")
	noID.ID = ""
	require.ErrorIsf(t, s.CreateUser(t.Context(), noID), store.ErrInvalid, "CreateUser with an empty id")
	_, err := s.GetUserByEmail(t.Context(), projA, noID.Email)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetUserByEmail(%q) after a rejected create", noID.Email)

	for _, email := range []string{"", "   ", "\t"} {
		noEmail := newUser(projA, email)
		require.ErrorIsf(t, s.CreateUser(t.Context(), noEmail), store.ErrInvalid, "CreateUser with email %q", email)
		_, err = s.GetUser(t.Context(), projA, noEmail.ID)
		require.ErrorIsf(t, err, store.ErrNotFound, "GetUser(%q) after a rejected create", noEmail.ID)
	}

	for _, p := range []string{"", "Bad Project"} {
		bad := newUser(p, "lee@example.com")
		require.ErrorIsf(t, s.CreateUser(t.Context(), bad), store.ErrInvalid, "CreateUser in project %q", p)
		_, err = s.GetUser(t.Context(), p, u.ID)
		require.ErrorIsf(t, err, store.ErrInvalid, "GetUser(%q, %q)", p, u.ID)
		_, err = s.GetUserByEmail(t.Context(), p, u.Email)
		require.ErrorIsf(t, err, store.ErrInvalid, "GetUserByEmail(%q, %q)", p, u.Email)
		require.ErrorIsf(t, s.SetPasswordHash(t.Context(), p, u.ID, "x"), store.ErrInvalid, "SetPasswordHash(%q, %q)", p, u.ID)
	}

	_, err = s.GetUser(t.Context(), projA, "")
	require.ErrorIsf(t, err, store.ErrInvalid, "GetUser(%q, \"\")", projA)
	_, err = s.GetUserByEmail(t.Context(), projA, "")
	require.ErrorIsf(t, err, store.ErrInvalid, "GetUserByEmail(%q, \"\")", projA)

	got, err := s.GetUser(t.Context(), projA, u.ID)
	require.NoErrorf(t, err, "GetUser(%q)", u.ID)
	wantUser(t, u, got, "GetUser after rejected calls")
}

// CreateUser in an unknown (well-formed) project is ErrNotFound.
func testUserUnknownProject(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := newUser("no-such-project", "mallory@example.com")
	require.ErrorIsf(t, s.CreateUser(t.Context(), u), store.ErrNotFound, "CreateUser in unknown project %q", u.ProjectID)
	_, err := s.GetUser(t.Context(), projA, u.ID)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetUser(%q, %q) of a user whose create failed", projA, u.ID)
	mustProject(t, s, "no-such-project")
	_, err = s.GetUserByEmail(t.Context(), "no-such-project", u.Email)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetUserByEmail after the project is created: the failed create must have left no row")
}

// Another project's user is reported exactly as a missing one, by id and by
// email, and SetPasswordHash cannot reach it.
func testUserOtherProject(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	u := mustUser(t, s, projA, "niaj@example.com")
	_, err := s.GetUser(t.Context(), projB, u.ID)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetUser(%q, %q) of project %q's user", projB, u.ID, projA)
	_, err = s.GetUserByEmail(t.Context(), projB, u.Email)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetUserByEmail(%q, %q) of project %q's user", projB, u.Email, projA)
	err = s.SetPasswordHash(t.Context(), projB, u.ID, "changed")
	require.ErrorIsf(t, err, store.ErrNotFound, "SetPasswordHash(%q, %q) of project %q's user", projB, u.ID, projA)
	got, err := s.GetUser(t.Context(), projA, u.ID)
	require.NoErrorf(t, err, "GetUser(%q, %q)", projA, u.ID)
	wantUser(t, u, got, "GetUser after another project's SetPasswordHash")
}

// userAt returns a new user of project with the given id, email and
// CreatedAt.
func userAt(project, id, email string, at time.Time) store.User {
	u := newUser(project, email)
	u.ID = id
	u.CreatedAt = at
	return u
}

// mustUsers creates us in order and returns them in list order: by
// CreatedAt truncated to microseconds, then id byte by byte.
func mustUsers(t *testing.T, s store.UserStore, us ...store.User) []store.User {
	t.Helper()
	for _, u := range us {
		require.NoErrorf(t, s.CreateUser(t.Context(), u), "CreateUser(%q, %q)", u.ProjectID, u.Email)
	}
	return inListOrder(us, userPos, false)
}

// wantUsers fails unless got holds exactly the users of want, in order,
// with equal fields.
func wantUsers(t *testing.T, want, got []store.User, what string) {
	t.Helper()
	require.Equalf(t, userIDs(want), userIDs(got), "%s: ids in order", what)
	for i := range want {
		wantUser(t, want[i], got[i], fmt.Sprintf("%s: user %q", what, want[i].ID))
	}
}

func userIDs(us []store.User) []string {
	return idsOf(us, func(u store.User) string { return u.ID })
}

// ListUsers lists in ascending (CreatedAt, ID) order, ids compared byte by
// byte, whatever the order of creation, with every field.
func testUserListOrder(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	at := base.Add(time.Hour)
	tagged := userAt(projA, "usr_a", "a@example.com", at)
	tagged.Tags = []string{"admin", "ops"}
	want := mustUsers(t, s,
		tagged,
		userAt(projA, "usr_z", "z@example.com", base.In(elsewhere)),
		userAt(projA, "usr_B", "b@example.com", at.Add(-300*time.Nanosecond)), // same microsecond as at
		userAt(projA, "usr_Z", "zz@example.com", base),
		userAt(projA, "usr_0", "zero@example.com", base.Add(-time.Minute)),
		userAt(projA, "usr_a0", "a0@example.com", at),
	)
	require.Equal(t, []string{"usr_0", "usr_Z", "usr_z", "usr_B", "usr_a", "usr_a0"}, userIDs(want), "precondition: list order")
	wantUsers(t, want, userList(s, projA, "").all(t), "ListUsers")
}

// Paging with any page size returns every user exactly once, in order,
// also when users share a microsecond.
func testUserListPages(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	var us []store.User
	for i := range 23 {
		at := base.Add(time.Duration(i/4) * time.Second).Add(time.Duration(i%4) * 100 * time.Nanosecond)
		us = append(us, userAt(projA, store.NewID(store.PrefixUser), fmt.Sprintf("page%02d@example.com", i), at))
	}
	want := mustUsers(t, s, us...)
	for _, limit := range []int{1, 2, 3, 4, 5, 22, 23, 24, 100} {
		wantUsers(t, want, userList(s, projA, "").walk(t, limit, nil), fmt.Sprintf("walk of ListUsers with limit %d", limit))
	}
}

// ListUsers reads one item ahead: with exactly limit users left HasMore is
// false, with one more it is true.
func testUserListLookAhead(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	var us []store.User
	for i := range 5 {
		us = append(us, userAt(projA, store.NewID(store.PrefixUser), fmt.Sprintf("la%d@example.com", i), base.Add(time.Duration(i)*time.Minute)))
	}
	all := mustUsers(t, s, us...)
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
			req.After = textCursor(t, userPos(all[c.after]))
			start = c.after + 1
		}
		page := userList(s, projA, "").page(t, req)
		what := fmt.Sprintf("ListUsers(limit %d, after %q)", c.limit, req.After.String())
		wantUsers(t, all[start:start+c.want], page.Items, what)
		require.Equalf(t, c.hasMore, page.HasMore, "%s.HasMore", what)
	}
	// A cursor need not name a user.
	page := userList(s, projA, "").page(t, paginate.Request{Limit: 10, After: paginate.Cursor{ID: "usr_~", CreatedAt: store.Truncate(all[2].CreatedAt)}})
	wantUsers(t, all[3:], page.Items, "ListUsers after a position naming no user")
}

// Users created while a client pages, created later than the users that
// existed, appear after them, and none is repeated or skipped.
func testUserListAddedWhilePaging(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	var us []store.User
	for i := range 10 {
		us = append(us, userAt(projA, store.NewID(store.PrefixUser), fmt.Sprintf("old%02d@example.com", i), base.Add(time.Duration(i)*time.Second)))
	}
	want := mustUsers(t, s, us...)
	n := 0
	got := userList(s, projA, "").walk(t, 3, func(int, store.User) {
		u := userAt(projA, store.NewID(store.PrefixUser), fmt.Sprintf("new%02d@example.com", n), base.Add(time.Hour+time.Duration(n)*time.Second))
		n++
		want = append(want, mustUsers(t, s, u)...)
	})
	wantUsers(t, want, got, "walk of ListUsers with users created between pages")
}

// The email prefix is compared in NormalizeEmail form (case-insensitive,
// trimmed) with each user's normalized email.
func testUserListEmailPrefix(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	emails := []string{"Ann@Example.com", "anna@example.com", "ANDY@example.com", "bob@example.com", "ZOË@example.com", "zoe@example.com", "o'neil@example.com"}
	byEmail := map[string]store.User{}
	var us []store.User
	for i, e := range emails {
		u := userAt(projA, store.NewID(store.PrefixUser), e, base.Add(time.Duration(i)*time.Second))
		us = append(us, u)
		byEmail[e] = u
	}
	mustUsers(t, s, us...)
	pick := func(emails ...string) []store.User {
		var out []store.User
		for _, e := range emails {
			out = append(out, byEmail[e])
		}
		return out
	}
	cases := []struct {
		prefix string
		want   []store.User
	}{
		{"", us},
		{"   ", us},
		{"an", pick("Ann@Example.com", "anna@example.com", "ANDY@example.com")},
		{"AN", pick("Ann@Example.com", "anna@example.com", "ANDY@example.com")},
		{"Ann", pick("Ann@Example.com", "anna@example.com")},
		{"  ann\t", pick("Ann@Example.com", "anna@example.com")},
		{"ann@example.com", pick("Ann@Example.com")},
		{"ANN@EXAMPLE.COM", pick("Ann@Example.com")},
		{"ann@example.comx", nil},
		{"zoë", pick("ZOË@example.com")},
		{"ZOË", pick("ZOË@example.com")},
		{"zo", pick("ZOË@example.com", "zoe@example.com")},
		{"o'", pick("o'neil@example.com")},
		{"x", nil},
		{"example.com", nil},
	}
	for _, c := range cases {
		for _, limit := range []int{1, 2, 100} {
			wantUsers(t, c.want, userList(s, projA, c.prefix).walk(t, limit, nil), fmt.Sprintf("ListUsers(%q, %q) with limit %d", projA, c.prefix, limit))
		}
	}
	// The page that holds the last match says that no more follow.
	page, err := s.ListUsers(t.Context(), projA, "an", paginate.Request{Limit: 3})
	require.NoError(t, err)
	require.Len(t, page.Items, 3, `ListUsers(%q, "an") with limit 3`, projA)
	require.False(t, page.HasMore, `ListUsers(%q, "an") with limit 3: HasMore on the page that holds the last match`, projA)
}

// The email prefix is literal: "%", "_", "\", "*", "[" and quotes match
// only themselves, never as wildcards or syntax.
func testUserListPrefixLiteral(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	emails := []string{"a_b@example.com", "axb@example.com", "a%c@example.com", "abc@example.com", "a*d@example.com", "%x@example.com", "_y@example.com"}
	byEmail := map[string]store.User{}
	var us []store.User
	for i, e := range emails {
		u := userAt(projA, store.NewID(store.PrefixUser), e, base.Add(time.Duration(i)*time.Second))
		us = append(us, u)
		byEmail[e] = u
	}
	mustUsers(t, s, us...)
	cases := []struct {
		prefix string
		want   []string
	}{
		{"a_", []string{"a_b@example.com"}},
		{"a%", []string{"a%c@example.com"}},
		{"a*", []string{"a*d@example.com"}},
		{"%", []string{"%x@example.com"}},
		{"_", []string{"_y@example.com"}},
		{"a", []string{"a_b@example.com", "axb@example.com", "a%c@example.com", "abc@example.com", "a*d@example.com"}},
		{"a_b@example.co_", nil},
		{"a%@", nil},
		{`\`, nil},
		{`a\_`, nil},
		{`a\%`, nil},
		{"[", nil},
		{"a[", nil},
		{"'", nil},
		{`"`, nil},
		{"a'; --", nil},
	}
	for _, c := range cases {
		var want []store.User
		for _, e := range c.want {
			want = append(want, byEmail[e])
		}
		wantUsers(t, want, userList(s, projA, c.prefix).all(t), fmt.Sprintf("ListUsers(%q, %q)", projA, c.prefix))
	}
}

// Another project's users never appear, whatever the prefix or cursor.
func testUserListOtherProject(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	var as, bs []store.User
	for i := range 4 {
		as = append(as, userAt(projA, store.NewID(store.PrefixUser), fmt.Sprintf("user%d@example.com", i), base.Add(time.Duration(2*i)*time.Second)))
		bs = append(bs, userAt(projB, store.NewID(store.PrefixUser), fmt.Sprintf("user%d@example.com", i), base.Add(time.Duration(2*i+1)*time.Second)))
	}
	wantA, wantB := mustUsers(t, s, as...), mustUsers(t, s, bs...)
	wantUsers(t, wantA, userList(s, projA, "").walk(t, 3, nil), "walk of project A's users")
	wantUsers(t, wantB, userList(s, projB, "user").walk(t, 3, nil), "walk of project B's users")
	page := userList(s, projB, "").page(t, paginate.Request{Limit: 100, After: textCursor(t, userPos(wantA[1]))})
	wantUsers(t, wantB[1:], page.Items, "project B's users after a cursor of project A")
}

// An unknown project lists as empty.
func testUserListUnknownProject(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustUser(t, s, projA, "someone@example.com")
	for _, prefix := range []string{"", "some"} {
		page := userList(s, "no-such-project", prefix).page(t, paginate.Request{Limit: 10})
		require.Emptyf(t, page.Items, "ListUsers(%q, %q)", "no-such-project", prefix)
		require.False(t, page.HasMore)
	}
}

// A limit below 1 or an invalid project id is ErrInvalid.
func testUserListInvalid(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustUser(t, s, projA, "someone@example.com")
	for _, limit := range []int{0, -1} {
		_, err := s.ListUsers(t.Context(), projA, "", paginate.Request{Limit: limit})
		require.ErrorIsf(t, err, store.ErrInvalid, "ListUsers(%q, limit %d)", projA, limit)
	}
	for _, p := range []string{"", "Proj A", "-x"} {
		_, err := s.ListUsers(t.Context(), p, "", paginate.Request{Limit: 10})
		require.ErrorIsf(t, err, store.ErrInvalid, "ListUsers(%q)", p)
	}
}

// DisableUser sets DisabledAt and, in the same write, revokes at that time
// every session of the user that is not revoked, expired ones included, and
// deletes the user's console sessions; sessions revoked before keep their
// time; other users' sessions are not touched.
func testUserDisable(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "disabled@example.com")
	v := mustUser(t, s, projA, "bystander@example.com")
	live := mustFamilyOf(t, s, u, base, 24*time.Hour)
	rotated := mustFamilyOf(t, s, u, base, 24*time.Hour)
	rotatedNow := rotate(t, s, rotated, 0, rotateParams(base.Add(time.Minute))).Family
	revoked := mustFamilyOf(t, s, u, base, 24*time.Hour)
	require.NoError(t, s.RevokeRefreshFamily(t.Context(), projA, revoked.ID, base.Add(2*time.Minute)), "RevokeRefreshFamily")
	revoked.RevokedAt = base.Add(2 * time.Minute)
	expired := mustFamilyOf(t, s, u, base, time.Minute)
	ended := newFamily(projA, u.ID, base, 24*time.Hour)
	ended.EndsAt = base.Add(10 * time.Minute)
	require.NoError(t, s.CreateRefreshFamily(t.Context(), ended, userHash), "CreateRefreshFamily with EndsAt")
	other := mustFamilyOf(t, s, v, base, 24*time.Hour)
	console := mustConsoleSession(t, s, projA, "disabled-console", u.ID, base)
	otherConsole := mustConsoleSession(t, s, projA, "bystander-console", v.ID, base)

	at := base.Add(time.Hour).In(elsewhere)
	require.NoErrorf(t, s.DisableUser(t.Context(), projA, u.ID, at), "DisableUser(%q, %q)", projA, u.ID)
	want := u
	want.DisabledAt = at
	got := mustGetUser(t, s, projA, u.ID)
	wantUser(t, want, got, "GetUser after DisableUser")
	require.True(t, got.Disabled(), "Disabled() after DisableUser")
	byEmail, err := s.GetUserByEmail(t.Context(), projA, u.Email)
	require.NoError(t, err, "GetUserByEmail")
	wantUser(t, want, byEmail, "GetUserByEmail after DisableUser")
	wantUsers(t, []store.User{want}, userList(s, projA, u.Email).all(t), "ListUsers after DisableUser")
	wantUser(t, v, mustGetUser(t, s, projA, v.ID), "another user after DisableUser")

	for _, f := range []store.RefreshFamily{live, rotatedNow, expired, ended} {
		f.RevokedAt = at
		wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "a session of the disabled user")
	}
	wantFamily(t, revoked, mustGetFamily(t, s, projA, revoked.ID), "a session of the disabled user revoked before (its time is kept)")
	wantFamily(t, other, mustGetFamily(t, s, projA, other.ID), "another user's session")
	rotate(t, s, other, 0, rotateParams(at.Add(time.Minute)))
	_, err = s.GetConsoleSession(t.Context(), projA, console.ID)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetConsoleSession of the disabled user's console session")
	_, err = s.GetConsoleSession(t.Context(), projA, otherConsole.ID)
	require.NoError(t, err, "GetConsoleSession of another user's console session")
}

// Disabling a disabled user succeeds and changes nothing: the first
// DisabledAt stays, and sessions keep their revocation time.
func testUserDisableTwice(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "twice@example.com")
	f := mustFamilyOf(t, s, u, base, 24*time.Hour)
	at := base.Add(time.Hour)
	require.NoError(t, s.DisableUser(t.Context(), projA, u.ID, at), "DisableUser")
	for _, again := range []time.Time{at.Add(time.Hour), at, at.Add(-time.Minute)} {
		require.NoErrorf(t, s.DisableUser(t.Context(), projA, u.ID, again), "DisableUser of a disabled user at %s", again.Format(time.RFC3339Nano))
		wantTime(t, at, mustGetUser(t, s, projA, u.ID).DisabledAt, "DisabledAt after disabling again")
		wantTime(t, at, mustGetFamily(t, s, projA, f.ID).RevokedAt, "the session's RevokedAt after disabling again")
	}
}

// EnableUser clears DisabledAt; the sessions DisableUser ended stay ended,
// and new ones may start. Enabling an enabled user succeeds.
func testUserEnable(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "enable@example.com")
	require.NoError(t, s.EnableUser(t.Context(), projA, u.ID), "EnableUser of a user never disabled")
	wantUser(t, u, mustGetUser(t, s, projA, u.ID), "GetUser after enabling an enabled user")
	f := mustFamilyOf(t, s, u, base, 24*time.Hour)
	at := base.Add(time.Hour)
	require.NoError(t, s.DisableUser(t.Context(), projA, u.ID, at), "DisableUser")
	require.NoError(t, s.EnableUser(t.Context(), projA, u.ID), "EnableUser")
	got := mustGetUser(t, s, projA, u.ID)
	wantUser(t, u, got, "GetUser after EnableUser")
	require.False(t, got.Disabled(), "Disabled() after EnableUser")
	require.NoError(t, s.EnableUser(t.Context(), projA, u.ID), "EnableUser again")
	wantUser(t, u, mustGetUser(t, s, projA, u.ID), "GetUser after EnableUser again")

	f.RevokedAt = at
	wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "a session ended by DisableUser, after EnableUser")
	_, err := s.RotateRefresh(t.Context(), projA, f.ID, 0, rotateParams(at.Add(time.Minute)))
	require.ErrorIs(t, err, store.ErrRevoked, "RotateRefresh of a session ended by DisableUser, after EnableUser")

	g := mustFamilyOf(t, s, u, at.Add(time.Minute), 24*time.Hour)
	rotate(t, s, g, 0, rotateParams(at.Add(2*time.Minute)))
}

// DisableUser and EnableUser of an unknown user, or of another project's,
// are ErrNotFound; an invalid project, an empty id or a zero time is
// ErrInvalid; none changes anything.
func testUserDisableUnknown(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	u := mustUser(t, s, projA, "known@example.com")
	f := mustFamilyOf(t, s, u, base, 24*time.Hour)
	at := base.Add(time.Hour)
	for _, c := range []struct{ project, id string }{
		{projA, store.NewID(store.PrefixUser)},
		{projB, u.ID},
		{"no-such-project", u.ID},
	} {
		require.ErrorIsf(t, s.DisableUser(t.Context(), c.project, c.id, at), store.ErrNotFound, "DisableUser(%q, %q)", c.project, c.id)
		require.ErrorIsf(t, s.EnableUser(t.Context(), c.project, c.id), store.ErrNotFound, "EnableUser(%q, %q)", c.project, c.id)
	}
	for _, c := range []struct{ project, id string }{{"", u.ID}, {"Bad Project", u.ID}, {projA, ""}} {
		require.ErrorIsf(t, s.DisableUser(t.Context(), c.project, c.id, at), store.ErrInvalid, "DisableUser(%q, %q)", c.project, c.id)
		require.ErrorIsf(t, s.EnableUser(t.Context(), c.project, c.id), store.ErrInvalid, "EnableUser(%q, %q)", c.project, c.id)
	}
	require.ErrorIs(t, s.DisableUser(t.Context(), projA, u.ID, time.Time{}), store.ErrInvalid, "DisableUser with a zero time")
	wantUser(t, u, mustGetUser(t, s, projA, u.ID), "the user after refused calls")
	wantFamily(t, f, mustGetFamily(t, s, projA, f.ID), "the user's session after refused calls")
	require.Empty(t, feedList(s, projA).all(t), "project A's feed after refused calls")
}
