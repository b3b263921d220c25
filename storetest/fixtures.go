package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// base is the time every case starts from. It carries nanoseconds, so that
// the microsecond truncation every store applies is exercised, and it is
// far from any real clock, so that a store that stamps its own time.Now()
// instead of the time given is caught.
var base = time.Date(2026, 11, 21, 10, 0, 0, 123456789, time.UTC)

// aligned is a time with no sub-microsecond part, for cases that probe a
// boundary and must not depend on how a store truncates.
var aligned = time.Date(2026, 11, 21, 10, 0, 0, 123456000, time.UTC)

// elsewhere is a zone far from UTC; times given in it must come back in UTC.
var elsewhere = time.FixedZone("UTC+05:30", 5*3600+30*60)

// Project ids used by the cases.
const (
	projA = "proj-a"
	projB = "proj-b"
)

// errSentinels names the store sentinels, for messages.
var errSentinels = []struct {
	err  error
	name string
}{
	{store.ErrNotFound, "ErrNotFound"},
	{store.ErrConflict, "ErrConflict"},
	{store.ErrInvalid, "ErrInvalid"},
	{store.ErrExpired, "ErrExpired"},
	{store.ErrRevoked, "ErrRevoked"},
	{store.ErrReplayed, "ErrReplayed"},
	{store.ErrDisabled, "ErrDisabled"},
	{store.ErrUnavailable, "ErrUnavailable"},
}

func sentinelName(target error) string {
	for _, s := range errSentinels {
		if s.err == target {
			return s.name
		}
	}
	return fmt.Sprint(target)
}

// isOneOf reports whether err matches one of targets.
func isOneOf(err error, targets ...error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// wantErrAny fails the test unless err matches one of targets, where the
// contract leaves the choice open, with a message such as
// `RotateRefresh(gen 0) = <nil>, want ErrRevoked or ErrReplayed`.
func wantErrAny(t *testing.T, err error, targets []error, call string, args ...any) {
	t.Helper()
	if isOneOf(err, targets...) {
		return
	}
	names := make([]string, len(targets))
	for i, target := range targets {
		names[i] = sentinelName(target)
	}
	require.Failf(t, "error does not match", "%s = %v, want %s", fmt.Sprintf(call, args...), err, strings.Join(names, " or "))
}

// wantTime fails the test unless got is in UTC and Equal to the microsecond
// truncation of want.
func wantTime(t *testing.T, want, got time.Time, what string, args ...any) {
	t.Helper()
	name := fmt.Sprintf(what, args...)
	w := store.Truncate(want)
	require.Truef(t, got.Equal(w), "%s = %s, want %s (the microsecond truncation of %s)",
		name, got.Format(time.RFC3339Nano), w.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	if want.IsZero() {
		return
	}
	require.Samef(t, time.UTC, got.Location(), "%s = %s is in location %q, want UTC", name, got.Format(time.RFC3339Nano), got.Location())
}

// wantZeroTime fails the test unless got is the zero time.
func wantZeroTime(t *testing.T, got time.Time, what string, args ...any) {
	t.Helper()
	require.Truef(t, got.IsZero(), "%s = %s, want the zero time", fmt.Sprintf(what, args...), got.Format(time.RFC3339Nano))
}

func mustProject(t *testing.T, s store.ProjectStore, id string) store.Project {
	t.Helper()
	p := store.Project{ID: id, CreatedAt: base}
	require.NoErrorf(t, s.CreateProject(t.Context(), p), "CreateProject(%q)", id)
	return p
}

// userHash is the password hash of the users newUser makes, the hash a
// sign-in starting their sessions has checked.
const userHash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g"

func newUser(project, email string) store.User {
	return store.User{
		ID:           store.NewID(store.PrefixUser),
		ProjectID:    project,
		Email:        email,
		PasswordHash: userHash,
		Tags:         []string{},
		CreatedAt:    base,
	}
}

func mustUser(t *testing.T, s store.UserStore, project, email string) store.User {
	t.Helper()
	u := newUser(project, email)
	require.NoErrorf(t, s.CreateUser(t.Context(), u), "CreateUser(%q, %q)", project, email)
	return u
}

func newContact(project, id string, at time.Time) store.Contact {
	return store.Contact{ID: id, ProjectID: project, Name: "Name of " + id, CreatedAt: at}
}

func mustContact(t *testing.T, s store.ContactStore, project, id string, at time.Time) store.Contact {
	t.Helper()
	got, err := s.CreateContact(t.Context(), newContact(project, id, at))
	require.NoErrorf(t, err, "CreateContact(%q, %q)", project, id)
	return got
}

func newAPIKey(project, id string, at time.Time) store.APIKey {
	return store.APIKey{ID: id, ProjectID: project, Name: "name of " + id, CreatedAt: at}
}

func mustAPIKey(t *testing.T, s store.APIKeyStore, project, id string, at time.Time) store.APIKey {
	t.Helper()
	k := newAPIKey(project, id, at)
	require.NoErrorf(t, s.CreateAPIKey(t.Context(), k), "CreateAPIKey(%q, %q)", project, id)
	return k
}

// publicKey returns 32 distinct bytes derived from seed.
func publicKey(seed byte) []byte {
	b := make([]byte, 32)
	for i := range b {
		b[i] = seed ^ byte(i*7)
	}
	return b
}

func newSigningKey(project, id string, at time.Time) store.SigningKey {
	seed := byte(len(id))
	for i := 0; i < len(id); i++ {
		seed = seed*31 + id[i]
	}
	return store.SigningKey{
		ID:                  id,
		ProjectID:           project,
		Algorithm:           store.AlgEdDSA,
		PublicKey:           publicKey(seed),
		EncryptedPrivateKey: append([]byte("sealed\x00\xff"), publicKey(seed+1)...),
		CreatedAt:           at,
	}
}

func mustSigningKey(t *testing.T, s store.SigningKeyStore, project, id string, at time.Time) store.SigningKey {
	t.Helper()
	k := newSigningKey(project, id, at)
	require.NoErrorf(t, s.CreateSigningKey(t.Context(), k), "CreateSigningKey(%q, %q)", project, id)
	return k
}

// newFamily returns generation 0 of a family issued at, living ttl.
func newFamily(project, userID string, at time.Time, ttl time.Duration) store.RefreshFamily {
	return store.RefreshFamily{
		ID:         store.NewID(store.PrefixFamily),
		ProjectID:  project,
		UserID:     userID,
		Generation: 0,
		IssuedAt:   at,
		ExpiresAt:  at.Add(ttl),
		CreatedAt:  at,
	}
}

// mustFamilyOf creates a family of user u, issued at, living ttl.
func mustFamilyOf(t *testing.T, s store.RefreshStore, u store.User, at time.Time, ttl time.Duration) store.RefreshFamily {
	t.Helper()
	f := newFamily(u.ProjectID, u.ID, at, ttl)
	require.NoErrorf(t, s.CreateRefreshFamily(t.Context(), f, u.PasswordHash), "CreateRefreshFamily(%q, %q) of user %q", f.ProjectID, f.ID, u.ID)
	return f
}

// mustFamily creates a project, a user in it and a family for the user,
// issued at base and living 30 days.
func mustFamily(t *testing.T, s store.Store, project string) store.RefreshFamily {
	t.Helper()
	if _, err := s.GetProject(t.Context(), project); err != nil {
		mustProject(t, s, project)
	}
	u := mustUser(t, s, project, "family-owner@example.com")
	f := newFamily(project, u.ID, base, 30*24*time.Hour)
	require.NoErrorf(t, s.CreateRefreshFamily(t.Context(), f, userHash), "CreateRefreshFamily(%q, %q)", project, f.ID)
	return f
}

// rotateParams are the production defaults: 30 days, a 10-second window.
func rotateParams(now time.Time) store.RotateParams {
	return store.RotateParams{Now: now, TTL: 30 * 24 * time.Hour, ReuseWindow: 10 * time.Second}
}

func mustGetFamily(t *testing.T, s store.RefreshStore, project, id string) store.RefreshFamily {
	t.Helper()
	f, err := s.GetRefreshFamily(t.Context(), project, id)
	require.NoErrorf(t, err, "GetRefreshFamily(%q, %q)", project, id)
	return f
}

// wantFamily compares two families field by field, times with Equal.
func wantFamily(t *testing.T, want, got store.RefreshFamily, what string) {
	t.Helper()
	require.Equalf(t, want.ID, got.ID, "%s: ID", what)
	require.Equalf(t, want.ProjectID, got.ProjectID, "%s: ProjectID", what)
	require.Equalf(t, want.UserID, got.UserID, "%s: UserID", what)
	require.Equalf(t, want.Generation, got.Generation, "%s: Generation", what)
	wantTime(t, want.IssuedAt, got.IssuedAt, "%s: IssuedAt", what)
	wantTime(t, want.ExpiresAt, got.ExpiresAt, "%s: ExpiresAt", what)
	wantTime(t, want.CreatedAt, got.CreatedAt, "%s: CreatedAt", what)
	wantTime(t, want.EndsAt, got.EndsAt, "%s: EndsAt", what)
	wantTime(t, want.RevokedAt, got.RevokedAt, "%s: RevokedAt", what)
}

// contactLess reports whether a sorts before b: by CreatedAt, then by id
// byte by byte.
func contactLess(a, b store.Contact) bool {
	return posLess(contactPos(a), contactPos(b))
}

func contactIDs(cs []store.Contact) []string {
	return idsOf(cs, func(c store.Contact) string { return c.ID })
}

// cursorOf is the cursor a client holds after seeing c, passed through its
// text form exactly as an HTTP client passes it back.
func cursorOf(t *testing.T, c store.Contact) paginate.Cursor {
	t.Helper()
	return textCursor(t, contactPos(c))
}

// listPage reads one page of the project's contacts and checks it (see
// keysetList.page).
func listPage(t *testing.T, s store.ContactStore, project string, req paginate.Request) paginate.Page[store.Contact] {
	t.Helper()
	return contactList(s, project).page(t, req)
}

// walk pages through the whole contact list of project with page size
// limit (see keysetList.walk).
func walk(t *testing.T, s store.ContactStore, project string, limit int, between func(page int, last store.Contact)) []store.Contact {
	t.Helper()
	return contactList(s, project).walk(t, limit, between)
}

// sortedContacts returns a copy of cs in list order.
func sortedContacts(cs []store.Contact) []store.Contact {
	return inListOrder(cs, contactPos, false)
}

// wantContacts fails unless got holds exactly the contacts of want, in
// order, with equal fields.
func wantContacts(t *testing.T, want, got []store.Contact, what string) {
	t.Helper()
	require.Equalf(t, contactIDs(want), contactIDs(got), "%s: ids in order", what)
	for i := range want {
		require.Equalf(t, want[i].ProjectID, got[i].ProjectID, "%s: ProjectID of %q", what, want[i].ID)
		require.Equalf(t, want[i].Name, got[i].Name, "%s: Name of %q", what, want[i].ID)
		wantTime(t, want[i].CreatedAt, got[i].CreatedAt, "%s: CreatedAt of %q", what, want[i].ID)
	}
}

// wantBytes fails unless got equals want byte for byte.
func wantBytes(t *testing.T, want, got []byte, what string, args ...any) {
	t.Helper()
	require.Truef(t, bytes.Equal(want, got), "%s = %x, want %x", fmt.Sprintf(what, args...), got, want)
}
