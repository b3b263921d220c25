package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

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
		{"SetPasswordHash", testUserSetPasswordHash},
		{"Unknown", testUserUnknown},
		{"Invalid", testUserInvalid},
		{"UnknownProject", testUserUnknownProject},
		{"OtherProject", testUserOtherProject},
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
	noErr(t, s.CreateUser(t.Context(), u), "CreateUser(%q)", u.Email)

	got, err := s.GetUser(t.Context(), projA, u.ID)
	noErr(t, err, "GetUser(%q, %q)", projA, u.ID)
	wantUser(t, u, got, "GetUser")
	require.True(t, got.HasTag("admin"), "GetUser(...).HasTag(admin)")

	got, err = s.GetUserByEmail(t.Context(), projA, u.Email)
	noErr(t, err, "GetUserByEmail(%q, %q)", projA, u.Email)
	wantUser(t, u, got, "GetUserByEmail")

	// A second user does not disturb the first.
	v := mustUser(t, s, projA, "bob@example.com")
	got, err = s.GetUser(t.Context(), projA, v.ID)
	noErr(t, err, "GetUser(%q, %q)", projA, v.ID)
	wantUser(t, v, got, "GetUser of the second user")
	got, err = s.GetUser(t.Context(), projA, u.ID)
	noErr(t, err, "GetUser(%q, %q)", projA, u.ID)
	wantUser(t, u, got, "GetUser of the first user after a second create")
}

// GetUserByEmail compares emails case-insensitively in NormalizeEmail form
// (trimmed, lower-cased, Unicode included).
func testUserGetByEmailAnyCase(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "Carol@Example.com")
	for _, email := range []string{"carol@example.com", "CAROL@EXAMPLE.COM", "cArOl@eXaMpLe.CoM", "  Carol@Example.com\t", "Carol@Example.com"} {
		got, err := s.GetUserByEmail(t.Context(), projA, email)
		noErr(t, err, "GetUserByEmail(%q, %q)", projA, email)
		require.Equalf(t, u.ID, got.ID, "GetUserByEmail(%q).ID", email)
		require.Equalf(t, "Carol@Example.com", got.Email, "GetUserByEmail(%q).Email, kept as given", email)
	}
	w := mustUser(t, s, projA, "ZOË@Example.com")
	got, err := s.GetUserByEmail(t.Context(), projA, "zoë@example.com")
	noErr(t, err, "GetUserByEmail(%q, %q)", projA, "zoë@example.com")
	require.Equal(t, w.ID, got.ID, "GetUserByEmail of a non-ASCII email in another case")

	for _, email := range []string{"carol@example.co", "carol@example.comm", "carol", "xcarol@example.com"} {
		_, err := s.GetUserByEmail(t.Context(), projA, email)
		wantErr(t, err, store.ErrNotFound, "GetUserByEmail(%q, %q)", projA, email)
	}
}

// CreateUser returns ErrConflict when another user of the project has the
// same email compared case-insensitively, and stores nothing.
func testUserDuplicateEmail(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "dave@example.com")
	for _, email := range []string{"dave@example.com", "DAVE@example.com", "Dave@Example.Com", " dave@example.com "} {
		dup := newUser(projA, email)
		err := s.CreateUser(t.Context(), dup)
		wantErr(t, err, store.ErrConflict, "CreateUser(%q) after %q", email, u.Email)
		_, err = s.GetUser(t.Context(), projA, dup.ID)
		wantErr(t, err, store.ErrNotFound, "GetUser(%q) of a user whose create conflicted", dup.ID)
	}
	got, err := s.GetUserByEmail(t.Context(), projA, "DAVE@EXAMPLE.COM")
	noErr(t, err, "GetUserByEmail(%q)", "DAVE@EXAMPLE.COM")
	require.Equal(t, u.ID, got.ID, "the first user keeps the email")

	// Non-ASCII letters compare case-insensitively too.
	mustUser(t, s, projA, "émile@example.com")
	err = s.CreateUser(t.Context(), newUser(projA, "ÉMILE@EXAMPLE.COM"))
	wantErr(t, err, store.ErrConflict, "CreateUser(%q) after %q", "ÉMILE@EXAMPLE.COM", "émile@example.com")
}

// CreateUser returns ErrConflict when the id exists, even with another
// email, and keeps the first user.
func testUserDuplicateID(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "erin@example.com")
	dup := newUser(projA, "someone-else@example.com")
	dup.ID = u.ID
	wantErr(t, s.CreateUser(t.Context(), dup), store.ErrConflict, "CreateUser(%q) with an existing id", dup.ID)
	got, err := s.GetUser(t.Context(), projA, u.ID)
	noErr(t, err, "GetUser(%q)", u.ID)
	require.Equal(t, u.Email, got.Email, "the first user is kept")
	_, err = s.GetUserByEmail(t.Context(), projA, dup.Email)
	wantErr(t, err, store.ErrNotFound, "GetUserByEmail(%q) of a user whose create conflicted", dup.Email)
}

// The same email in two projects is two users.
func testUserSameEmailTwoProjects(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	a := mustUser(t, s, projA, "frank@example.com")
	b := mustUser(t, s, projB, "Frank@Example.com")
	require.NotEqual(t, a.ID, b.ID)
	got, err := s.GetUserByEmail(t.Context(), projA, "FRANK@example.com")
	noErr(t, err, "GetUserByEmail(%q, ...)", projA)
	require.Equal(t, a.ID, got.ID, "project A's user")
	got, err = s.GetUserByEmail(t.Context(), projB, "frank@EXAMPLE.com")
	noErr(t, err, "GetUserByEmail(%q, ...)", projB)
	require.Equal(t, b.ID, got.ID, "project B's user")
	require.Equal(t, "Frank@Example.com", got.Email)
}

// Tags round-trip as a list: order kept, duplicates and awkward characters
// kept, nil and empty both read back as a non-nil empty slice.
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
		{"awkward", []string{"a,b", `quote"d`, "spa ce", "ünïcödé", "[x]", "null"}, []string{"a,b", `quote"d`, "spa ce", "ünïcödé", "[x]", "null"}},
	}
	for i, c := range cases {
		u := newUser(projA, "tags"+string(rune('a'+i))+"@example.com")
		u.Tags = c.tags
		noErr(t, s.CreateUser(t.Context(), u), "CreateUser with tags %q", c.tags)
		for _, get := range []func() (store.User, error){
			func() (store.User, error) { return s.GetUser(t.Context(), projA, u.ID) },
			func() (store.User, error) { return s.GetUserByEmail(t.Context(), projA, u.Email) },
		} {
			got, err := get()
			noErr(t, err, "get user with tags %s", c.name)
			require.NotNilf(t, got.Tags, "tags %s: Tags = nil, want a non-nil slice", c.name)
			require.Equalf(t, c.want, got.Tags, "tags %s", c.name)
		}
	}
}

// SetPasswordHash replaces the hash and nothing else; an unknown user is
// ErrNotFound.
func testUserSetPasswordHash(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "grace@example.com")
	v := mustUser(t, s, projA, "heidi@example.com")
	const hash = "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"
	noErr(t, s.SetPasswordHash(t.Context(), projA, u.ID, hash), "SetPasswordHash(%q)", u.ID)
	got, err := s.GetUser(t.Context(), projA, u.ID)
	noErr(t, err, "GetUser(%q)", u.ID)
	u.PasswordHash = hash
	wantUser(t, u, got, "GetUser after SetPasswordHash")
	got, err = s.GetUser(t.Context(), projA, v.ID)
	noErr(t, err, "GetUser(%q)", v.ID)
	wantUser(t, v, got, "GetUser of another user after SetPasswordHash")

	err = s.SetPasswordHash(t.Context(), projA, store.NewID(store.PrefixUser), hash)
	wantErr(t, err, store.ErrNotFound, "SetPasswordHash of an unknown user")
	err = s.SetPasswordHash(t.Context(), "no-such-project", u.ID, hash)
	wantErr(t, err, store.ErrNotFound, "SetPasswordHash(%q, %q) in an unknown project", "no-such-project", u.ID)
	err = s.SetPasswordHash(t.Context(), projA, "", hash)
	wantErr(t, err, store.ErrInvalid, "SetPasswordHash(%q, \"\")", projA)
}

// GetUser and GetUserByEmail return ErrNotFound for a user that does not
// exist, in a known or an unknown project.
func testUserUnknown(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustUser(t, s, projA, "ivan@example.com")
	id := store.NewID(store.PrefixUser)
	_, err := s.GetUser(t.Context(), projA, id)
	wantErr(t, err, store.ErrNotFound, "GetUser(%q, %q)", projA, id)
	_, err = s.GetUserByEmail(t.Context(), projA, "judy@example.com")
	wantErr(t, err, store.ErrNotFound, "GetUserByEmail(%q, %q)", projA, "judy@example.com")
	_, err = s.GetUser(t.Context(), "no-such-project", id)
	wantErr(t, err, store.ErrNotFound, "GetUser(%q, %q)", "no-such-project", id)
	_, err = s.GetUserByEmail(t.Context(), "no-such-project", "ivan@example.com")
	wantErr(t, err, store.ErrNotFound, "GetUserByEmail(%q, %q)", "no-such-project", "ivan@example.com")
}

// Empty ids, empty emails and invalid project ids are ErrInvalid, for
// writes and reads, and change nothing.
func testUserInvalid(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "kim@example.com")

	noID := newUser(projA, "noid@example.com")
	noID.ID = ""
	wantErr(t, s.CreateUser(t.Context(), noID), store.ErrInvalid, "CreateUser with an empty id")
	_, err := s.GetUserByEmail(t.Context(), projA, noID.Email)
	wantErr(t, err, store.ErrNotFound, "GetUserByEmail(%q) after a rejected create", noID.Email)

	for _, email := range []string{"", "   ", "\t"} {
		noEmail := newUser(projA, email)
		wantErr(t, s.CreateUser(t.Context(), noEmail), store.ErrInvalid, "CreateUser with email %q", email)
		_, err = s.GetUser(t.Context(), projA, noEmail.ID)
		wantErr(t, err, store.ErrNotFound, "GetUser(%q) after a rejected create", noEmail.ID)
	}

	for _, p := range []string{"", "Bad Project"} {
		bad := newUser(p, "lee@example.com")
		wantErr(t, s.CreateUser(t.Context(), bad), store.ErrInvalid, "CreateUser in project %q", p)
		_, err = s.GetUser(t.Context(), p, u.ID)
		wantErr(t, err, store.ErrInvalid, "GetUser(%q, %q)", p, u.ID)
		_, err = s.GetUserByEmail(t.Context(), p, u.Email)
		wantErr(t, err, store.ErrInvalid, "GetUserByEmail(%q, %q)", p, u.Email)
		wantErr(t, s.SetPasswordHash(t.Context(), p, u.ID, "x"), store.ErrInvalid, "SetPasswordHash(%q, %q)", p, u.ID)
	}

	_, err = s.GetUser(t.Context(), projA, "")
	wantErr(t, err, store.ErrInvalid, "GetUser(%q, \"\")", projA)
	_, err = s.GetUserByEmail(t.Context(), projA, "")
	wantErr(t, err, store.ErrInvalid, "GetUserByEmail(%q, \"\")", projA)

	got, err := s.GetUser(t.Context(), projA, u.ID)
	noErr(t, err, "GetUser(%q)", u.ID)
	wantUser(t, u, got, "GetUser after rejected calls")
}

// CreateUser in an unknown (well-formed) project is ErrNotFound.
func testUserUnknownProject(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := newUser("no-such-project", "mallory@example.com")
	wantErr(t, s.CreateUser(t.Context(), u), store.ErrNotFound, "CreateUser in unknown project %q", u.ProjectID)
	_, err := s.GetUser(t.Context(), projA, u.ID)
	wantErr(t, err, store.ErrNotFound, "GetUser(%q, %q) of a user whose create failed", projA, u.ID)
	mustProject(t, s, "no-such-project")
	_, err = s.GetUserByEmail(t.Context(), "no-such-project", u.Email)
	wantErr(t, err, store.ErrNotFound, "GetUserByEmail after the project is created: the failed create must have left no row")
}

// Another project's user is reported exactly as a missing one, by id and by
// email, and SetPasswordHash cannot reach it.
func testUserOtherProject(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	u := mustUser(t, s, projA, "niaj@example.com")
	_, err := s.GetUser(t.Context(), projB, u.ID)
	wantErr(t, err, store.ErrNotFound, "GetUser(%q, %q) of project %q's user", projB, u.ID, projA)
	_, err = s.GetUserByEmail(t.Context(), projB, u.Email)
	wantErr(t, err, store.ErrNotFound, "GetUserByEmail(%q, %q) of project %q's user", projB, u.Email, projA)
	err = s.SetPasswordHash(t.Context(), projB, u.ID, "changed")
	wantErr(t, err, store.ErrNotFound, "SetPasswordHash(%q, %q) of project %q's user", projB, u.ID, projA)
	got, err := s.GetUser(t.Context(), projA, u.ID)
	noErr(t, err, "GetUser(%q, %q)", projA, u.ID)
	wantUser(t, u, got, "GetUser after another project's SetPasswordHash")
}
