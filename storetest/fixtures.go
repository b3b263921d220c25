package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
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
}

func sentinelName(target error) string {
	for _, s := range errSentinels {
		if s.err == target {
			return s.name
		}
	}
	return fmt.Sprint(target)
}

// wantErr fails the test unless err matches target, with a message such as
// `GetUser("proj-a", "usr_x") = <nil>, want ErrNotFound`.
func wantErr(t *testing.T, err, target error, call string, args ...any) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s = %v, want %s", fmt.Sprintf(call, args...), err, sentinelName(target))
	}
}

// wantErrAny fails the test unless err matches one of targets.
func wantErrAny(t *testing.T, err error, targets []error, call string, args ...any) {
	t.Helper()
	names := ""
	for i, target := range targets {
		if errors.Is(err, target) {
			return
		}
		if i > 0 {
			names += " or "
		}
		names += sentinelName(target)
	}
	t.Fatalf("%s = %v, want %s", fmt.Sprintf(call, args...), err, names)
}

// noErr fails the test if err is not nil.
func noErr(t *testing.T, err error, call string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s = %v, want nil error", fmt.Sprintf(call, args...), err)
	}
}

// wantTime fails the test unless got is in UTC and Equal to the microsecond
// truncation of want.
func wantTime(t *testing.T, want, got time.Time, what string, args ...any) {
	t.Helper()
	name := fmt.Sprintf(what, args...)
	w := store.Truncate(want)
	if !got.Equal(w) {
		t.Fatalf("%s = %s, want %s (the microsecond truncation of %s)",
			name, got.Format(time.RFC3339Nano), w.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	}
	if want.IsZero() {
		return
	}
	if got.Location() != time.UTC {
		t.Fatalf("%s = %s is in location %q, want UTC", name, got.Format(time.RFC3339Nano), got.Location())
	}
}

// wantZeroTime fails the test unless got is the zero time.
func wantZeroTime(t *testing.T, got time.Time, what string, args ...any) {
	t.Helper()
	if !got.IsZero() {
		t.Fatalf("%s = %s, want the zero time", fmt.Sprintf(what, args...), got.Format(time.RFC3339Nano))
	}
}

func mustProject(t *testing.T, s store.ProjectStore, id string) store.Project {
	t.Helper()
	p := store.Project{ID: id, CreatedAt: base}
	noErr(t, s.CreateProject(t.Context(), p), "CreateProject(%q)", id)
	return p
}

func newUser(project, email string) store.User {
	return store.User{
		ID:           store.NewID(store.PrefixUser),
		ProjectID:    project,
		Email:        email,
		PasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
		Tags:         []string{},
		CreatedAt:    base,
	}
}

func mustUser(t *testing.T, s store.UserStore, project, email string) store.User {
	t.Helper()
	u := newUser(project, email)
	noErr(t, s.CreateUser(t.Context(), u), "CreateUser(%q, %q)", project, email)
	return u
}

func newContact(project, id string, at time.Time) store.Contact {
	return store.Contact{ID: id, ProjectID: project, Name: "Name of " + id, CreatedAt: at}
}

func mustContact(t *testing.T, s store.ContactStore, project, id string, at time.Time) store.Contact {
	t.Helper()
	got, err := s.CreateContact(t.Context(), newContact(project, id, at))
	noErr(t, err, "CreateContact(%q, %q)", project, id)
	return got
}

func newAPIKey(project, id string, at time.Time) store.APIKey {
	return store.APIKey{ID: id, ProjectID: project, Name: "name of " + id, CreatedAt: at}
}

func mustAPIKey(t *testing.T, s store.APIKeyStore, project, id string, at time.Time) store.APIKey {
	t.Helper()
	k := newAPIKey(project, id, at)
	noErr(t, s.CreateAPIKey(t.Context(), k), "CreateAPIKey(%q, %q)", project, id)
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
		PublicKey:           publicKey(seed),
		EncryptedPrivateKey: append([]byte("sealed\x00\xff"), publicKey(seed+1)...),
		CreatedAt:           at,
	}
}

func mustSigningKey(t *testing.T, s store.SigningKeyStore, project, id string, at time.Time) store.SigningKey {
	t.Helper()
	k := newSigningKey(project, id, at)
	noErr(t, s.CreateSigningKey(t.Context(), k), "CreateSigningKey(%q, %q)", project, id)
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

// mustFamily creates a project, a user in it and a family for the user,
// issued at base and living 30 days.
func mustFamily(t *testing.T, s store.Store, project string) store.RefreshFamily {
	t.Helper()
	if _, err := s.GetProject(t.Context(), project); err != nil {
		mustProject(t, s, project)
	}
	u := mustUser(t, s, project, "family-owner@example.com")
	f := newFamily(project, u.ID, base, 30*24*time.Hour)
	noErr(t, s.CreateRefreshFamily(t.Context(), f), "CreateRefreshFamily(%q, %q)", project, f.ID)
	return f
}

// rotateParams are the production defaults: 30 days, a 10-second window.
func rotateParams(now time.Time) store.RotateParams {
	return store.RotateParams{Now: now, TTL: 30 * 24 * time.Hour, ReuseWindow: 10 * time.Second}
}

func mustGetFamily(t *testing.T, s store.RefreshStore, project, id string) store.RefreshFamily {
	t.Helper()
	f, err := s.GetRefreshFamily(t.Context(), project, id)
	noErr(t, err, "GetRefreshFamily(%q, %q)", project, id)
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
	wantTime(t, want.RevokedAt, got.RevokedAt, "%s: RevokedAt", what)
}

// contactLess reports whether a sorts before b: by CreatedAt, then by id
// byte by byte.
func contactLess(a, b store.Contact) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.Before(b.CreatedAt)
	}
	return a.ID < b.ID // Go compares strings byte by byte.
}

func contactIDs(cs []store.Contact) []string {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids
}

// cursorOf is the cursor a client holds after seeing c, passed through its
// text form exactly as an HTTP client passes it back.
func cursorOf(t *testing.T, c store.Contact) paginate.Cursor {
	t.Helper()
	text := paginate.Cursor{ID: c.ID, CreatedAt: c.CreatedAt}.String()
	cur, err := paginate.ParseCursor(text)
	require.NoErrorf(t, err, "ParseCursor(%q) of contact %q", text, c.ID)
	return cur
}

func listPage(t *testing.T, s store.ContactStore, project string, req paginate.Request) paginate.Page[store.Contact] {
	t.Helper()
	page, err := s.ListContacts(t.Context(), project, req)
	noErr(t, err, "ListContacts(%q, limit %d, after %q)", project, req.Limit, req.After.String())
	if page.Items == nil {
		t.Fatalf("ListContacts(%q, limit %d, after %q).Items = nil, want a non-nil slice", project, req.Limit, req.After.String())
	}
	if len(page.Items) > req.Limit {
		t.Fatalf("ListContacts(%q, limit %d, after %q) returned %d items, want at most %d",
			project, req.Limit, req.After.String(), len(page.Items), req.Limit)
	}
	if page.HasMore && len(page.Items) != req.Limit {
		t.Fatalf("ListContacts(%q, limit %d, after %q) returned %d items with HasMore true, want a full page (limit+1 look-ahead)",
			project, req.Limit, req.After.String(), len(page.Items))
	}
	for i, c := range page.Items {
		if c.ProjectID != project {
			t.Fatalf("ListContacts(%q) returned contact %q of project %q", project, c.ID, c.ProjectID)
		}
		if c.CreatedAt.Location() != time.UTC {
			t.Fatalf("ListContacts(%q) returned contact %q with CreatedAt in %q, want UTC", project, c.ID, c.CreatedAt.Location())
		}
		if !c.CreatedAt.Equal(store.Truncate(c.CreatedAt)) {
			t.Fatalf("ListContacts(%q) returned contact %q with CreatedAt %s, finer than microseconds",
				project, c.ID, c.CreatedAt.Format(time.RFC3339Nano))
		}
		if !req.After.IsZero() && !contactLess(store.Contact{ID: req.After.ID, CreatedAt: req.After.CreatedAt}, c) {
			t.Fatalf("ListContacts(%q, after %q) returned %q at %s, which does not sort strictly after the cursor",
				project, req.After.String(), c.ID, c.CreatedAt.Format(time.RFC3339Nano))
		}
		if i > 0 && !contactLess(page.Items[i-1], c) {
			t.Fatalf("ListContacts(%q) returned %q (%s) before %q (%s), want ascending (created_at, id) order",
				project, page.Items[i-1].ID, page.Items[i-1].CreatedAt.Format(time.RFC3339Nano),
				c.ID, c.CreatedAt.Format(time.RFC3339Nano))
		}
	}
	return page
}

// walk pages through the whole contact list of project with page size
// limit, checking every page, and returns the items in the order seen. Each
// cursor goes through its text form. between, if not nil, runs after each
// page but the last, with the page number (from 1) and the page's last item.
func walk(t *testing.T, s store.ContactStore, project string, limit int, between func(page int, last store.Contact)) []store.Contact {
	t.Helper()
	var all []store.Contact
	req := paginate.Request{Limit: limit}
	for n := 1; ; n++ {
		if n > 100000 {
			t.Fatalf("ListContacts(%q) did not reach the end after %d pages", project, n)
		}
		page := listPage(t, s, project, req)
		for _, c := range page.Items {
			if len(all) > 0 && !contactLess(all[len(all)-1], c) {
				t.Fatalf("page %d of ListContacts(%q, limit %d) repeats or goes back: %q (%s) after %q (%s)",
					n, project, limit, c.ID, c.CreatedAt.Format(time.RFC3339Nano),
					all[len(all)-1].ID, all[len(all)-1].CreatedAt.Format(time.RFC3339Nano))
			}
			all = append(all, c)
		}
		if !page.HasMore {
			return all
		}
		if between != nil {
			between(n, page.Items[len(page.Items)-1])
		}
		req.After = cursorOf(t, page.Items[len(page.Items)-1])
	}
}

// sortedContacts returns a copy of cs in list order.
func sortedContacts(cs []store.Contact) []store.Contact {
	out := append([]store.Contact(nil), cs...)
	sort.Slice(out, func(i, j int) bool { return contactLess(out[i], out[j]) })
	return out
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
	if !bytes.Equal(want, got) {
		t.Fatalf("%s = %x, want %x", fmt.Sprintf(what, args...), got, want)
	}
}
