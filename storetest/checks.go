package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// The shared argument checks: every method given what a store.Check
// function refuses returns ErrInvalid and changes nothing, and the values
// the checks accept at their edges round-trip.

func checkCases() []testCase {
	return []testCase{
		{"ProjectArguments", testChecksProjectArguments},
		{"RowIDs", testChecksRowIDs},
		{"ZeroTimes", testChecksZeroTimes},
		{"PageLimits", testChecksPageLimits},
		{"NewUsers", testChecksNewUsers},
		{"NewContacts", testChecksNewContacts},
		{"NewAPIKeys", testChecksNewAPIKeys},
		{"NewSigningKeys", testChecksNewSigningKeys},
		{"NewFamilies", testChecksNewFamilies},
		{"Rotations", testChecksRotations},
		{"ValidEdges", testChecksValidEdges},
		{"LaterMethods", testChecksLaterMethods},
		{"ListPrefixes", testChecksListPrefixes},
		{"OtherProjectRows", testChecksOtherProjectRows},
	}
}

// Malformed project ids and row ids, each refused by CheckProjectID or
// CheckID.
var (
	badProjects = []string{"", "Proj-A", "-proj", "proj_a", "proj a", "proj-a\n", "prój", strings.Repeat("p", 64)}
	badIDs      = []string{"", "id with space", "tab\tid", "new\nline", "nul\x00", "é-not-ascii", "del\x7f", strings.Repeat("x", store.MaxIDLen+1)}
)

// world is one of everything in project A (and an empty project B), so
// that a refused call has something it could wrongly change.
type world struct {
	user    store.User
	family  store.RefreshFamily
	apiKey  store.APIKey
	contact store.Contact
	console store.ConsoleSession
}

// refusedID is the id every refused create uses, so that a snapshot sees a
// row a refused create left behind.
const refusedID = "refused_id"

func newWorld(t *testing.T, s store.Store) world {
	t.Helper()
	mustProject(t, s, projA)
	mustProject(t, s, projB)
	var w world
	w.user = mustUser(t, s, projA, "world@example.com")
	w.family = mustFamilyOf(t, s, w.user, base, 24*time.Hour)
	w.apiKey = mustAPIKey(t, s, projA, "key_world", base)
	revoked := mustAPIKey(t, s, projA, "key_revoked", base)
	require.NoError(t, s.RevokeAPIKey(t.Context(), projA, revoked.ID, base.Add(time.Minute)), "RevokeAPIKey")
	mustSigningKey(t, s, projA, "sk_old", base)
	mustSigningKey(t, s, projA, "sk_new", base.Add(time.Second))
	w.contact = mustContact(t, s, projA, "ct_world", base)
	mustAudit(t, s, newAudit(projA, "aud_world", base, store.ActionSignIn, w.user.ID))
	w.console = mustConsoleSession(t, s, projA, "world", w.user.ID, base)
	addFailure(t, s, "k", base, time.Hour)
	return w
}

// snapshot is everything readable about the world.
type snapshot struct {
	Projects    []store.Project
	Users       map[string][]store.User
	Contacts    map[string][]store.Contact
	APIKeys     map[string][]store.APIKey
	SigningKeys map[string][]store.SigningKey
	Feed        map[string][]store.Revocation
	Audit       map[string][]store.AuditEntry
	Family      store.RefreshFamily
	Console     store.ConsoleSession
	Found       map[string]bool // whether a lookup of refusedID finds a row
	Failures    int
}

func (w world) snapshot(t *testing.T, s store.Store) snapshot {
	t.Helper()
	ctx := t.Context()
	sn := snapshot{
		Users: map[string][]store.User{}, Contacts: map[string][]store.Contact{}, APIKeys: map[string][]store.APIKey{},
		SigningKeys: map[string][]store.SigningKey{}, Feed: map[string][]store.Revocation{}, Audit: map[string][]store.AuditEntry{},
		Found: map[string]bool{},
	}
	var err error
	sn.Projects, err = s.ListProjects(ctx)
	require.NoError(t, err, "ListProjects")
	for _, p := range []string{projA, projB} {
		sn.Users[p] = userList(s, p, "").all(t)
		sn.Contacts[p] = contactList(s, p).all(t)
		sn.APIKeys[p], err = s.ListAPIKeys(ctx, p)
		require.NoError(t, err, "ListAPIKeys")
		sn.SigningKeys[p], err = s.ListSigningKeys(ctx, p)
		require.NoError(t, err, "ListSigningKeys")
		sn.Feed[p] = feedList(s, p).all(t)
		sn.Audit[p] = auditList(s, p, store.AuditFilter{}).all(t)
	}
	sn.Family = mustGetFamily(t, s, projA, w.family.ID)
	sn.Console = mustGetConsoleSession(t, s, projA, w.console.ID)
	lookups := map[string]error{}
	_, lookups["user"] = s.GetUser(ctx, projA, refusedID)
	_, lookups["family"] = s.GetRefreshFamily(ctx, projA, refusedID)
	_, lookups["console"] = s.GetConsoleSession(ctx, projA, consoleID(refusedID))
	for what, err := range lookups {
		sn.Found[what] = !errors.Is(err, store.ErrNotFound)
	}
	sn.Failures, _ = failures(t, s, "k", base.Add(time.Minute), time.Hour)
	return sn
}

// refusal is one call that must be refused with ErrInvalid.
type refusal struct {
	name string
	call func(ctx context.Context) error
}

// refuseAll makes each call, checks that it returns ErrInvalid and that
// the world is as it was.
func refuseAll(t *testing.T, s store.Store, w world, calls []refusal) {
	t.Helper()
	before := w.snapshot(t, s)
	for _, c := range calls {
		require.ErrorIsf(t, c.call(t.Context()), store.ErrInvalid, "%s", c.name)
		require.Equalf(t, before, w.snapshot(t, s), "the store after %s, which was refused: want nothing changed", c.name)
	}
}

// errOf and errOf3 keep only the error of a call's results.
func errOf[T any](_ T, err error) error { return err }

func errOf3[A, B any](_ A, _ B, err error) error { return err }

// Every method taking a project id refuses one that is not a slug.
func testChecksProjectArguments(t *testing.T, s store.Store) {
	w := newWorld(t, s)
	var calls []refusal
	for _, p := range badProjects {
		add := func(name string, call func(ctx context.Context) error) {
			calls = append(calls, refusal{fmt.Sprintf("%s in project %q", name, p), call})
		}
		add("CreateProject", func(ctx context.Context) error { return s.CreateProject(ctx, store.Project{ID: p, CreatedAt: base}) })
		add("GetProject", func(ctx context.Context) error { return errOf(s.GetProject(ctx, p)) })
		add("CreateUser", func(ctx context.Context) error {
			u := newUser(p, "new@example.com")
			u.ID = refusedID
			return s.CreateUser(ctx, u)
		})
		add("GetUser", func(ctx context.Context) error { return errOf(s.GetUser(ctx, p, w.user.ID)) })
		add("GetUserByEmail", func(ctx context.Context) error { return errOf(s.GetUserByEmail(ctx, p, w.user.Email)) })
		add("ListUsers", func(ctx context.Context) error { return errOf(s.ListUsers(ctx, p, "", paginate.Request{Limit: 10})) })
		add("SetPasswordHash", func(ctx context.Context) error { return s.SetPasswordHash(ctx, p, w.user.ID, "changed") })
		add("ReplacePasswordHash", func(ctx context.Context) error {
			return s.ReplacePasswordHash(ctx, p, w.user.ID, w.user.PasswordHash, "changed")
		})
		add("SetUserTags", func(ctx context.Context) error { return s.SetUserTags(ctx, p, w.user.ID, []string{"changed"}) })
		add("DisableUser", func(ctx context.Context) error { return s.DisableUser(ctx, p, w.user.ID, base.Add(time.Hour)) })
		add("EnableUser", func(ctx context.Context) error { return s.EnableUser(ctx, p, w.user.ID) })
		add("CreateContact", func(ctx context.Context) error { return errOf(s.CreateContact(ctx, newContact(p, "ct_new", base))) })
		add("CreateContacts", func(ctx context.Context) error {
			return s.CreateContacts(ctx, p, []store.Contact{newContact(p, "ct_new", base)})
		})
		add("ListContacts", func(ctx context.Context) error { return errOf(s.ListContacts(ctx, p, paginate.Request{Limit: 10})) })
		add("DeleteContact", func(ctx context.Context) error { return s.DeleteContact(ctx, p, w.contact.ID) })
		add("CreateAPIKey", func(ctx context.Context) error { return s.CreateAPIKey(ctx, newAPIKey(p, "key_new", base)) })
		add("GetAPIKey", func(ctx context.Context) error { return errOf(s.GetAPIKey(ctx, p, w.apiKey.ID)) })
		add("ListAPIKeys", func(ctx context.Context) error { return errOf(s.ListAPIKeys(ctx, p)) })
		add("RevokeAPIKey", func(ctx context.Context) error { return s.RevokeAPIKey(ctx, p, w.apiKey.ID, base.Add(time.Hour)) })
		add("TouchAPIKey", func(ctx context.Context) error { return s.TouchAPIKey(ctx, p, w.apiKey.ID, base.Add(time.Hour)) })
		add("CreateSigningKey", func(ctx context.Context) error {
			return s.CreateSigningKey(ctx, newSigningKey(p, "sk_newest", base.Add(time.Hour)))
		})
		add("GetSigningKey", func(ctx context.Context) error { return errOf(s.GetSigningKey(ctx, p, "sk_old")) })
		add("ActiveSigningKey", func(ctx context.Context) error { return errOf(s.ActiveSigningKey(ctx, p)) })
		add("ListSigningKeys", func(ctx context.Context) error { return errOf(s.ListSigningKeys(ctx, p)) })
		add("RetireSigningKey", func(ctx context.Context) error { return s.RetireSigningKey(ctx, p, "sk_old", base.Add(time.Hour)) })
		add("CreateRefreshFamily", func(ctx context.Context) error {
			f := newFamily(p, w.user.ID, base, time.Hour)
			f.ID = refusedID
			return s.CreateRefreshFamily(ctx, f, userHash)
		})
		add("RotateRefresh", func(ctx context.Context) error {
			return errOf(s.RotateRefresh(ctx, p, w.family.ID, 0, rotateParams(base.Add(time.Minute))))
		})
		add("GetRefreshFamily", func(ctx context.Context) error { return errOf(s.GetRefreshFamily(ctx, p, w.family.ID)) })
		add("RevokeRefreshFamily", func(ctx context.Context) error {
			return s.RevokeRefreshFamily(ctx, p, w.family.ID, base.Add(time.Hour))
		})
		add("ScheduleSessionEnd", func(ctx context.Context) error { return s.ScheduleSessionEnd(ctx, p, w.family.ID) })
		add("ListRevocations", func(ctx context.Context) error { return errOf(s.ListRevocations(ctx, p, paginate.Request{Limit: 10})) })
		add("AppendAudit", func(ctx context.Context) error {
			return s.AppendAudit(ctx, newAudit(p, "aud_new", base, store.ActionSignIn, ""))
		})
		add("ListAudit", func(ctx context.Context) error {
			return errOf(s.ListAudit(ctx, p, store.AuditFilter{}, paginate.Request{Limit: 10}))
		})
		add("CreateConsoleSession", func(ctx context.Context) error {
			return s.CreateConsoleSession(ctx, newConsoleSession(p, refusedID, w.user.ID, base))
		})
		add("GetConsoleSession", func(ctx context.Context) error { return errOf(s.GetConsoleSession(ctx, p, w.console.ID)) })
		add("TouchConsoleSession", func(ctx context.Context) error {
			return s.TouchConsoleSession(ctx, p, w.console.ID, base.Add(time.Hour))
		})
		add("DeleteConsoleSession", func(ctx context.Context) error { return s.DeleteConsoleSession(ctx, p, w.console.ID) })
	}
	refuseAll(t, s, w, calls)
}

// Every method naming a row refuses an id that CheckID refuses: empty,
// longer than MaxIDLen, or holding a byte that is not printable ASCII.
func testChecksRowIDs(t *testing.T, s store.Store) {
	w := newWorld(t, s)
	var calls []refusal
	for _, id := range badIDs {
		add := func(name string, call func(ctx context.Context) error) {
			calls = append(calls, refusal{fmt.Sprintf("%s(%q, %q)", name, projA, id), call})
		}
		add("GetUser", func(ctx context.Context) error { return errOf(s.GetUser(ctx, projA, id)) })
		add("SetPasswordHash", func(ctx context.Context) error { return s.SetPasswordHash(ctx, projA, id, "changed") })
		add("ReplacePasswordHash", func(ctx context.Context) error { return s.ReplacePasswordHash(ctx, projA, id, "old", "changed") })
		add("SetUserTags", func(ctx context.Context) error { return s.SetUserTags(ctx, projA, id, []string{"changed"}) })
		add("DisableUser", func(ctx context.Context) error { return s.DisableUser(ctx, projA, id, base.Add(time.Hour)) })
		add("EnableUser", func(ctx context.Context) error { return s.EnableUser(ctx, projA, id) })
		add("DeleteContact", func(ctx context.Context) error { return s.DeleteContact(ctx, projA, id) })
		add("GetAPIKey", func(ctx context.Context) error { return errOf(s.GetAPIKey(ctx, projA, id)) })
		add("RevokeAPIKey", func(ctx context.Context) error { return s.RevokeAPIKey(ctx, projA, id, base.Add(time.Hour)) })
		add("TouchAPIKey", func(ctx context.Context) error { return s.TouchAPIKey(ctx, projA, id, base.Add(time.Hour)) })
		add("GetSigningKey", func(ctx context.Context) error { return errOf(s.GetSigningKey(ctx, projA, id)) })
		add("RetireSigningKey", func(ctx context.Context) error { return s.RetireSigningKey(ctx, projA, id, base.Add(time.Hour)) })
		add("RotateRefresh", func(ctx context.Context) error {
			return errOf(s.RotateRefresh(ctx, projA, id, 0, rotateParams(base.Add(time.Minute))))
		})
		add("GetRefreshFamily", func(ctx context.Context) error { return errOf(s.GetRefreshFamily(ctx, projA, id)) })
		add("RevokeRefreshFamily", func(ctx context.Context) error { return s.RevokeRefreshFamily(ctx, projA, id, base.Add(time.Hour)) })
		add("ScheduleSessionEnd", func(ctx context.Context) error { return s.ScheduleSessionEnd(ctx, projA, id) })
		add("GetConsoleSession", func(ctx context.Context) error { return errOf(s.GetConsoleSession(ctx, projA, id)) })
		add("TouchConsoleSession", func(ctx context.Context) error { return s.TouchConsoleSession(ctx, projA, id, base.Add(time.Hour)) })
		add("DeleteConsoleSession", func(ctx context.Context) error { return s.DeleteConsoleSession(ctx, projA, id) })
		// New rows with the id.
		add("CreateUser", func(ctx context.Context) error {
			u := newUser(projA, "new@example.com")
			u.ID = id
			return s.CreateUser(ctx, u)
		})
		add("CreateContact", func(ctx context.Context) error { return errOf(s.CreateContact(ctx, newContact(projA, id, base))) })
		add("CreateContacts", func(ctx context.Context) error {
			return s.CreateContacts(ctx, projA, []store.Contact{newContact(projA, "ct_fine", base), newContact(projA, id, base)})
		})
		add("CreateAPIKey", func(ctx context.Context) error { return s.CreateAPIKey(ctx, newAPIKey(projA, id, base)) })
		add("CreateSigningKey", func(ctx context.Context) error {
			return s.CreateSigningKey(ctx, newSigningKey(projA, id, base.Add(time.Hour)))
		})
		add("CreateRefreshFamily (family id)", func(ctx context.Context) error {
			f := newFamily(projA, w.user.ID, base, time.Hour)
			f.ID = id
			return s.CreateRefreshFamily(ctx, f, userHash)
		})
		add("CreateRefreshFamily (user id)", func(ctx context.Context) error {
			f := newFamily(projA, id, base, time.Hour)
			f.ID = refusedID
			return s.CreateRefreshFamily(ctx, f, userHash)
		})
		add("AppendAudit", func(ctx context.Context) error {
			return s.AppendAudit(ctx, newAudit(projA, id, base, store.ActionSignIn, ""))
		})
		add("CreateConsoleSession (user id)", func(ctx context.Context) error {
			return s.CreateConsoleSession(ctx, newConsoleSession(projA, refusedID, id, base))
		})
	}
	refuseAll(t, s, w, calls)
}

// Every write refuses a zero time (CheckTime: every time a write is given
// must be set), prunes included.
func testChecksZeroTimes(t *testing.T, s store.Store) {
	w := newWorld(t, s)
	var zero time.Time
	later := base.Add(time.Hour)
	refuseAll(t, s, w, []refusal{
		{"CreateProject with a zero CreatedAt", func(ctx context.Context) error {
			return s.CreateProject(ctx, store.Project{ID: "proj-new", CreatedAt: zero})
		}},
		{"DisableUser at the zero time", func(ctx context.Context) error { return s.DisableUser(ctx, projA, w.user.ID, zero) }},
		{"RevokeAPIKey at the zero time", func(ctx context.Context) error { return s.RevokeAPIKey(ctx, projA, w.apiKey.ID, zero) }},
		{"TouchAPIKey at the zero time", func(ctx context.Context) error { return s.TouchAPIKey(ctx, projA, w.apiKey.ID, zero) }},
		{"RetireSigningKey at the zero time", func(ctx context.Context) error { return s.RetireSigningKey(ctx, projA, "sk_old", zero) }},
		{"RevokeRefreshFamily at the zero time", func(ctx context.Context) error {
			return s.RevokeRefreshFamily(ctx, projA, w.family.ID, zero)
		}},
		{"RotateRefresh at the zero time", func(ctx context.Context) error {
			return errOf(s.RotateRefresh(ctx, projA, w.family.ID, 0, store.RotateParams{TTL: time.Hour}))
		}},
		{"TouchConsoleSession at the zero time", func(ctx context.Context) error {
			return s.TouchConsoleSession(ctx, projA, w.console.ID, zero)
		}},
		{"AddFailure at the zero time", func(ctx context.Context) error { return errOf3(s.AddFailure(ctx, "k", zero, time.Hour)) }},
		{"PruneRefreshFamilies(zero)", func(ctx context.Context) error { return errOf(s.PruneRefreshFamilies(ctx, zero)) }},
		{"PruneSessionRevocations(zero)", func(ctx context.Context) error { return errOf(s.PruneSessionRevocations(ctx, zero)) }},
		{"PruneAudit(zero)", func(ctx context.Context) error { return errOf(s.PruneAudit(ctx, zero)) }},
		{"PruneConsoleSessions(zero, later)", func(ctx context.Context) error { return errOf(s.PruneConsoleSessions(ctx, zero, later)) }},
		{"PruneConsoleSessions(later, zero)", func(ctx context.Context) error { return errOf(s.PruneConsoleSessions(ctx, later, zero)) }},
		{"PruneThrottle(zero)", func(ctx context.Context) error { return errOf(s.PruneThrottle(ctx, zero)) }},
	})
}

// Every list refuses a limit below 1 (CheckPage).
func testChecksPageLimits(t *testing.T, s store.Store) {
	w := newWorld(t, s)
	var calls []refusal
	for _, limit := range []int{0, -1, -1 << 31} {
		req := paginate.Request{Limit: limit}
		calls = append(calls,
			refusal{fmt.Sprintf("ListUsers with limit %d", limit), func(ctx context.Context) error { return errOf(s.ListUsers(ctx, projA, "", req)) }},
			refusal{fmt.Sprintf("ListContacts with limit %d", limit), func(ctx context.Context) error { return errOf(s.ListContacts(ctx, projA, req)) }},
			refusal{fmt.Sprintf("ListRevocations with limit %d", limit), func(ctx context.Context) error { return errOf(s.ListRevocations(ctx, projA, req)) }},
			refusal{fmt.Sprintf("ListAudit with limit %d", limit), func(ctx context.Context) error {
				return errOf(s.ListAudit(ctx, projA, store.AuditFilter{}, req))
			}},
		)
	}
	refuseAll(t, s, w, calls)
}

// userRefusals are changes to a valid new user that CheckUser refuses.
var userRefusals = []struct {
	name   string
	change func(u *store.User)
}{
	{"empty email", func(u *store.User) { u.Email = "" }},
	{"email without @", func(u *store.User) { u.Email = "ann.example.com" }},
	{"email without a domain", func(u *store.User) { u.Email = "ann@" }},
	{"email without a local part", func(u *store.User) { u.Email = "@example.com" }},
	{"email with a display name", func(u *store.User) { u.Email = "Ann <ann@example.com>" }},
	{"email in angle brackets", func(u *store.User) { u.Email = "<ann@example.com>" }},
	{"email with a leading space", func(u *store.User) { u.Email = " ann@example.com" }},
	{"email with a trailing newline", func(u *store.User) { u.Email = "ann@example.com\n" }},
	{"two emails", func(u *store.User) { u.Email = "ann@example.com, bob@example.com" }},
	{"email with two dots", func(u *store.User) { u.Email = "ann..x@example.com" }},
	{"email over MaxEmailLen", func(u *store.User) {
		u.Email = strings.Repeat("a", 64) + "@" + strings.Repeat("b", store.MaxEmailLen-64-4) + ".com"
	}},
	{"empty password hash", func(u *store.User) { u.PasswordHash = "" }},
	{"tags with a space", func(u *store.User) { u.Tags = []string{"spa ce"} }},
	{"a tag twice", func(u *store.User) { u.Tags = []string{"admin", "admin"} }},
	{"zero CreatedAt", func(u *store.User) { u.CreatedAt = time.Time{} }},
	{"DisabledAt set", func(u *store.User) { u.DisabledAt = base }},
}

// CreateUser refuses every user CheckUser refuses, and GetUserByEmail an
// email NormalizeEmail makes empty.
func testChecksNewUsers(t *testing.T, s store.Store) {
	w := newWorld(t, s)
	var calls []refusal
	for _, c := range userRefusals {
		u := newUser(projA, "new@example.com")
		u.ID = refusedID
		c.change(&u)
		require.Errorf(t, store.CheckUser(u), "precondition: CheckUser refuses a user with %s", c.name)
		calls = append(calls, refusal{fmt.Sprintf("CreateUser with %s (%q)", c.name, u.Email), func(ctx context.Context) error { return s.CreateUser(ctx, u) }})
	}
	for _, email := range []string{"", " ", "\t\n"} {
		calls = append(calls, refusal{fmt.Sprintf("GetUserByEmail(%q)", email), func(ctx context.Context) error {
			return errOf(s.GetUserByEmail(ctx, projA, email))
		}})
	}
	refuseAll(t, s, w, calls)
}

// refusedNames are names CheckName refuses.
var refusedNames = []struct{ name, value string }{
	{"an empty name", ""},
	{"a leading space", " name"},
	{"a trailing space", "name "},
	{"a tab", "na\tme"},
	{"a newline", "na\nme"},
	{"a NUL", "na\x00me"},
	{"a DEL", "na\x7fme"},
	{"a C1 control", "na\u0085me"},
	{"invalid UTF-8", "na\xffme"},
	{"U+202E RIGHT-TO-LEFT OVERRIDE", "invoice\u202Efdp.exe"},
	{"U+202A LEFT-TO-RIGHT EMBEDDING", "a\u202Ab"},
	{"U+2066 LEFT-TO-RIGHT ISOLATE", "a\u2066b"},
	{"U+2069 POP DIRECTIONAL ISOLATE", "a\u2069b"},
	{"U+200E LEFT-TO-RIGHT MARK", "a\u200Eb"},
	{"U+200F RIGHT-TO-LEFT MARK", "a\u200Fb"},
	{"U+061C ARABIC LETTER MARK", "a\u061Cb"},
	{"MaxNameLen+1 characters", strings.Repeat("é", store.MaxNameLen+1)},
}

// CreateContact and CreateContacts refuse every contact CheckContact
// refuses; a batch with one such contact inserts nothing.
func testChecksNewContacts(t *testing.T, s store.Store) {
	w := newWorld(t, s)
	var calls []refusal
	for _, c := range refusedNames {
		bad := newContact(projA, "ct_new", base.Add(time.Hour))
		bad.Name = c.value
		require.Errorf(t, store.CheckContact(bad), "precondition: CheckContact refuses a name with %s", c.name)
		calls = append(calls,
			refusal{fmt.Sprintf("CreateContact with %s (%q)", c.name, c.value), func(ctx context.Context) error { return errOf(s.CreateContact(ctx, bad)) }},
			refusal{fmt.Sprintf("CreateContacts with one name with %s", c.name), func(ctx context.Context) error {
				return s.CreateContacts(ctx, projA, []store.Contact{newContact(projA, "ct_ok1", base), bad, newContact(projA, "ct_ok2", base)})
			}},
		)
	}
	noTime := newContact(projA, "ct_new", time.Time{})
	calls = append(calls,
		refusal{"CreateContact with a zero CreatedAt", func(ctx context.Context) error { return errOf(s.CreateContact(ctx, noTime)) }},
		refusal{"CreateContacts with a zero CreatedAt", func(ctx context.Context) error {
			return s.CreateContacts(ctx, projA, []store.Contact{newContact(projA, "ct_ok1", base), noTime})
		}},
	)
	refuseAll(t, s, w, calls)
}

// CreateAPIKey refuses every record CheckAPIKey refuses.
func testChecksNewAPIKeys(t *testing.T, s store.Store) {
	w := newWorld(t, s)
	var calls []refusal
	for _, c := range refusedNames {
		k := newAPIKey(projA, "key_new", base)
		k.Name = c.value
		calls = append(calls, refusal{fmt.Sprintf("CreateAPIKey with %s (%q)", c.name, c.value), func(ctx context.Context) error { return s.CreateAPIKey(ctx, k) }})
	}
	for _, c := range []struct {
		name   string
		change func(k *store.APIKey)
	}{
		{"zero CreatedAt", func(k *store.APIKey) { k.CreatedAt = time.Time{} }},
		{"LastUsedAt set", func(k *store.APIKey) { k.LastUsedAt = base }},
		{"RevokedAt set", func(k *store.APIKey) { k.RevokedAt = base }},
	} {
		k := newAPIKey(projA, "key_new", base)
		c.change(&k)
		require.Errorf(t, store.CheckAPIKey(k), "precondition: CheckAPIKey refuses a key with %s", c.name)
		calls = append(calls, refusal{"CreateAPIKey with " + c.name, func(ctx context.Context) error { return s.CreateAPIKey(ctx, k) }})
	}
	refuseAll(t, s, w, calls)
}

// CreateSigningKey refuses every record CheckSigningKey refuses.
func testChecksNewSigningKeys(t *testing.T, s store.Store) {
	w := newWorld(t, s)
	var calls []refusal
	for _, c := range []struct {
		name   string
		change func(k *store.SigningKey)
	}{
		{"a 31-byte public key", func(k *store.SigningKey) { k.PublicKey = k.PublicKey[:31] }},
		{"a 33-byte public key", func(k *store.SigningKey) { k.PublicKey = append(k.PublicKey, 0) }},
		{"no public key", func(k *store.SigningKey) { k.PublicKey = nil }},
		{"no sealed private key", func(k *store.SigningKey) { k.EncryptedPrivateKey = nil }},
		{"an empty sealed private key", func(k *store.SigningKey) { k.EncryptedPrivateKey = []byte{} }},
		{"zero CreatedAt", func(k *store.SigningKey) { k.CreatedAt = time.Time{} }},
		{"RetiredAt set", func(k *store.SigningKey) { k.RetiredAt = base }},
	} {
		k := newSigningKey(projA, "sk_newest", base.Add(time.Hour))
		c.change(&k)
		require.Errorf(t, store.CheckSigningKey(k), "precondition: CheckSigningKey refuses a key with %s", c.name)
		calls = append(calls, refusal{"CreateSigningKey with " + c.name, func(ctx context.Context) error { return s.CreateSigningKey(ctx, k) }})
	}
	refuseAll(t, s, w, calls)
}

// CreateRefreshFamily refuses every family CheckFamily refuses, and an
// empty password hash.
func testChecksNewFamilies(t *testing.T, s store.Store) {
	w := newWorld(t, s)
	var calls []refusal
	for _, c := range []struct {
		name   string
		change func(f *store.RefreshFamily)
	}{
		{"Generation 1", func(f *store.RefreshFamily) { f.Generation = 1 }},
		{"Generation -1", func(f *store.RefreshFamily) { f.Generation = -1 }},
		{"zero IssuedAt", func(f *store.RefreshFamily) { f.IssuedAt = time.Time{} }},
		{"zero ExpiresAt", func(f *store.RefreshFamily) { f.ExpiresAt = time.Time{} }},
		{"zero CreatedAt", func(f *store.RefreshFamily) { f.CreatedAt = time.Time{} }},
		{"RevokedAt set", func(f *store.RefreshFamily) { f.RevokedAt = base }},
	} {
		f := newFamily(projA, w.user.ID, base, time.Hour)
		f.ID = refusedID
		c.change(&f)
		require.Errorf(t, store.CheckFamily(f), "precondition: CheckFamily refuses a family with %s", c.name)
		calls = append(calls, refusal{"CreateRefreshFamily with " + c.name, func(ctx context.Context) error { return s.CreateRefreshFamily(ctx, f, userHash) }})
	}
	noHash := newFamily(projA, w.user.ID, base, time.Hour)
	noHash.ID = refusedID
	calls = append(calls, refusal{"CreateRefreshFamily with an empty password hash", func(ctx context.Context) error {
		return s.CreateRefreshFamily(ctx, noHash, "")
	}})
	refuseAll(t, s, w, calls)
}

// RotateRefresh refuses every generation and parameters CheckRotate
// refuses.
func testChecksRotations(t *testing.T, s store.Store) {
	w := newWorld(t, s)
	now := base.Add(time.Minute)
	var calls []refusal
	for _, c := range []struct {
		name string
		gen  int64
		p    store.RotateParams
	}{
		{"gen -1", -1, rotateParams(now)},
		{"a zero Now", 0, store.RotateParams{TTL: time.Hour}},
		{"TTL 0", 0, store.RotateParams{Now: now}},
		{"a negative TTL", 0, store.RotateParams{Now: now, TTL: -time.Hour}},
		{"a negative window", 0, store.RotateParams{Now: now, TTL: time.Hour, ReuseWindow: -time.Nanosecond}},
	} {
		require.Errorf(t, store.CheckRotate(c.gen, c.p), "precondition: CheckRotate refuses %s", c.name)
		calls = append(calls, refusal{"RotateRefresh with " + c.name, func(ctx context.Context) error {
			return errOf(s.RotateRefresh(ctx, projA, w.family.ID, c.gen, c.p))
		}})
	}
	refuseAll(t, s, w, calls)
}

// edgeID returns an id of exactly MaxIDLen bytes that starts with prefix
// and holds every printable ASCII byte but ':' (which a cursor's text form
// cannot carry in an id), quotes, backslash, "%" and "_" included.
func edgeID(prefix string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for c := byte('!'); c <= '~' && b.Len() < store.MaxIDLen; c++ {
		if c != ':' {
			b.WriteByte(c)
		}
	}
	for b.Len() < store.MaxIDLen {
		b.WriteByte('x')
	}
	return b.String()
}

// Values the checks accept at their edges are stored and read back as
// given: ids of MaxIDLen bytes of any printable ASCII, emails of
// MaxEmailLen bytes and unusual but valid ones, names of MaxNameLen
// characters, names with inner spaces, quotes and emoji, audit fields of
// MaxIDLen bytes.
func testChecksValidEdges(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	ctx := t.Context()

	longEmail := strings.Repeat("a", 64) + "@" + strings.Repeat("b", store.MaxEmailLen-64-5) + ".com"
	require.Len(t, longEmail, store.MaxEmailLen, "precondition: email length")
	for i, email := range []string{longEmail, "o'neil+tag%x_y@example.com", "x@y", "ÉMILE@exämple.com", "a@[192.0.2.1]"} {
		u := newUser(projA, email)
		if i == 0 {
			u.ID = edgeID("usr_")
		}
		require.NoErrorf(t, store.CheckUser(u), "precondition: CheckUser accepts %q", email)
		require.NoErrorf(t, s.CreateUser(ctx, u), "CreateUser(%q, id %q)", email, u.ID)
		wantUser(t, u, mustGetUser(t, s, projA, u.ID), fmt.Sprintf("GetUser of a user with email %q", email))
		got, err := s.GetUserByEmail(ctx, projA, strings.ToUpper(email))
		require.NoErrorf(t, err, "GetUserByEmail(%q)", strings.ToUpper(email))
		wantUser(t, u, got, fmt.Sprintf("GetUserByEmail of %q", email))
		wantUsers(t, []store.User{u}, userList(s, projA, email).all(t), fmt.Sprintf("ListUsers(%q)", email))
	}

	names := []string{
		strings.Repeat("é", store.MaxNameLen),
		strings.Repeat("x", store.MaxNameLen),
		`Ada "the Countess" O'Lovelace \ 100% _done_`,
		"<script>alert(1)</script>",
		"👩‍💻 team — ünïcödé 日本語",
		"a  b", // inner spaces are not around the name
		"null",
	}
	tr := newTracker(s, projA)
	for i, name := range names {
		c := newContact(projA, fmt.Sprintf("ct_%d", i), base.Add(time.Duration(i)*time.Second))
		if i == 0 {
			c.ID = edgeID("ct_")
		}
		c.Name = name
		require.NoErrorf(t, store.CheckContact(c), "precondition: CheckContact accepts %q", name)
		got, err := s.CreateContact(ctx, c)
		require.NoErrorf(t, err, "CreateContact with name %q", name)
		require.Equalf(t, name, got.Name, "CreateContact(...).Name")
		tr.note(got)
		tr.created = append(tr.created, got)

		k := newAPIKey(projA, fmt.Sprintf("key_%d", i), base)
		if i == 0 {
			k.ID = edgeID("key_")
		}
		k.Name = name
		require.NoErrorf(t, s.CreateAPIKey(ctx, k), "CreateAPIKey with name %q", name)
		wantAPIKey(t, k, mustGetAPIKey(t, s, projA, k.ID), fmt.Sprintf("GetAPIKey of a key named %q", name))
	}
	wantContacts(t, tr.created, listAll(t, s, projA), "ListContacts of contacts with edge names")

	long := edgeID("")
	e := store.AuditEntry{ID: edgeID("aud_"), ProjectID: projA, At: base, Actor: long, Action: long, Target: long, ClientAddr: long}
	want := mustAudit(t, s, e)
	wantAuditEntries(t, want, auditList(s, projA, store.AuditFilter{Action: long, Target: long}).all(t), "ListAudit of an entry with MaxIDLen-byte fields")

	sk := newSigningKey(projA, edgeID("sk_"), base)
	require.NoError(t, s.CreateSigningKey(ctx, sk), "CreateSigningKey with a MaxIDLen-byte id")
	wantSigningKey(t, sk, mustGetSigningKey(t, s, projA, sk.ID), "GetSigningKey of a key with a MaxIDLen-byte id")

	u := mustUser(t, s, projA, "family@example.com")
	f := newFamily(projA, u.ID, base, time.Hour)
	f.ID = edgeID("rf_")
	require.NoError(t, s.CreateRefreshFamily(ctx, f, userHash), "CreateRefreshFamily with a MaxIDLen-byte id")
	rotate(t, s, f, 0, rotateParams(base.Add(time.Minute)))
}

// The methods the lists above do not name (EndUserSessions, RollAPIKey,
// ListAPIKeysPage, NextScheduledRevocation) refuse a project id that is not
// a slug, a row id CheckID refuses, a zero time and a limit below 1, as
// every method does; and CreateContacts refuses a contact of another
// project. Each refusal changes nothing.
func testChecksLaterMethods(t *testing.T, s store.Store) {
	w := newWorld(t, s)
	later := base.Add(time.Hour)
	next := func(p string) store.APIKey { n := successorOf(w.apiKey, "key_next", later); n.ProjectID = p; return n }
	var calls []refusal
	for _, p := range badProjects {
		calls = append(calls,
			refusal{fmt.Sprintf("EndUserSessions in project %q", p), func(ctx context.Context) error {
				return s.EndUserSessions(ctx, p, w.user.ID, later)
			}},
			refusal{fmt.Sprintf("RollAPIKey in project %q", p), func(ctx context.Context) error {
				return errOf(s.RollAPIKey(ctx, p, w.apiKey.ID, next(p), later))
			}},
			refusal{fmt.Sprintf("ListAPIKeysPage in project %q", p), func(ctx context.Context) error {
				return errOf(s.ListAPIKeysPage(ctx, p, "", paginate.Request{Limit: 10}))
			}},
			refusal{fmt.Sprintf("NextScheduledRevocation in project %q", p), func(ctx context.Context) error {
				return errOf(s.NextScheduledRevocation(ctx, p))
			}},
		)
	}
	for _, id := range badIDs {
		calls = append(calls,
			refusal{fmt.Sprintf("EndUserSessions(%q, %q)", projA, id), func(ctx context.Context) error {
				return s.EndUserSessions(ctx, projA, id, later)
			}},
			refusal{fmt.Sprintf("RollAPIKey(%q, %q)", projA, id), func(ctx context.Context) error {
				return errOf(s.RollAPIKey(ctx, projA, id, next(projA), later))
			}},
			refusal{fmt.Sprintf("RollAPIKey to a successor with id %q", id), func(ctx context.Context) error {
				n := next(projA)
				n.ID = id
				return errOf(s.RollAPIKey(ctx, projA, w.apiKey.ID, n, later))
			}},
		)
	}
	for _, limit := range []int{0, -1} {
		calls = append(calls, refusal{fmt.Sprintf("ListAPIKeysPage with limit %d", limit), func(ctx context.Context) error {
			return errOf(s.ListAPIKeysPage(ctx, projA, "", paginate.Request{Limit: limit}))
		}})
	}
	calls = append(calls,
		refusal{"EndUserSessions at the zero time", func(ctx context.Context) error {
			return s.EndUserSessions(ctx, projA, w.user.ID, time.Time{})
		}},
		refusal{"RollAPIKey with a zero revocation time", func(ctx context.Context) error {
			return errOf(s.RollAPIKey(ctx, projA, w.apiKey.ID, next(projA), time.Time{}))
		}},
		refusal{"FailuresOf at the zero time", func(ctx context.Context) error {
			return errOf(s.FailuresOf(ctx, []string{"k"}, time.Time{}, time.Hour))
		}},
		refusal{"CreateContacts with a contact of another project", func(ctx context.Context) error {
			return s.CreateContacts(ctx, projA, []store.Contact{newContact(projA, "ct_ok1", base), newContact(projB, "ct_ok2", base)})
		}},
	)
	refuseAll(t, s, w, calls)
}

// The lists filtered by a prefix (ListUsers by email, ListAPIKeysPage by
// name) refuse a prefix that no stored value can start with because it
// cannot be stored: one that is not valid UTF-8, or holds a NUL byte.
func testChecksListPrefixes(t *testing.T, s store.Store) {
	w := newWorld(t, s)
	var calls []refusal
	for _, prefix := range []string{"\xff", "an\xc3", "a\x00", "\x00"} {
		calls = append(calls,
			refusal{fmt.Sprintf("ListUsers with the email prefix %q", prefix), func(ctx context.Context) error {
				return errOf(s.ListUsers(ctx, projA, prefix, paginate.Request{Limit: 10}))
			}},
			refusal{fmt.Sprintf("ListAPIKeysPage with the name prefix %q", prefix), func(ctx context.Context) error {
				return errOf(s.ListAPIKeysPage(ctx, projA, prefix, paginate.Request{Limit: 10}))
			}},
		)
	}
	refuseAll(t, s, w, calls)
}

// A row of another project is reported exactly as a missing row is: every
// method given project B and the id of a row of project A returns an error
// matching ErrNotFound (deleting a console session, which succeeds for a
// missing one, succeeds) and changes nothing.
func testChecksOtherProjectRows(t *testing.T, s store.Store) {
	w := newWorld(t, s)
	before := w.snapshot(t, s)
	later := base.Add(time.Hour)
	ctx := t.Context()
	for name, call := range map[string]func() error{
		"GetUser":             func() error { return errOf(s.GetUser(ctx, projB, w.user.ID)) },
		"GetUserByEmail":      func() error { return errOf(s.GetUserByEmail(ctx, projB, w.user.Email)) },
		"SetPasswordHash":     func() error { return s.SetPasswordHash(ctx, projB, w.user.ID, "changed") },
		"ReplacePasswordHash": func() error { return s.ReplacePasswordHash(ctx, projB, w.user.ID, w.user.PasswordHash, "changed") },
		"SetUserTags":         func() error { return s.SetUserTags(ctx, projB, w.user.ID, []string{"changed"}) },
		"DisableUser":         func() error { return s.DisableUser(ctx, projB, w.user.ID, later) },
		"EnableUser":          func() error { return s.EnableUser(ctx, projB, w.user.ID) },
		"EndUserSessions":     func() error { return s.EndUserSessions(ctx, projB, w.user.ID, later) },
		"DeleteContact":       func() error { return s.DeleteContact(ctx, projB, w.contact.ID) },
		"GetAPIKey":           func() error { return errOf(s.GetAPIKey(ctx, projB, w.apiKey.ID)) },
		"RevokeAPIKey":        func() error { return s.RevokeAPIKey(ctx, projB, w.apiKey.ID, later) },
		"TouchAPIKey":         func() error { return s.TouchAPIKey(ctx, projB, w.apiKey.ID, later) },
		"GetSigningKey":       func() error { return errOf(s.GetSigningKey(ctx, projB, "sk_old")) },
		"RetireSigningKey":    func() error { return s.RetireSigningKey(ctx, projB, "sk_old", later) },
		"GetRefreshFamily":    func() error { return errOf(s.GetRefreshFamily(ctx, projB, w.family.ID)) },
		"RevokeRefreshFamily": func() error { return s.RevokeRefreshFamily(ctx, projB, w.family.ID, later) },
		"ScheduleSessionEnd":  func() error { return s.ScheduleSessionEnd(ctx, projB, w.family.ID) },
		"RotateRefresh": func() error {
			return errOf(s.RotateRefresh(ctx, projB, w.family.ID, 0, rotateParams(base.Add(time.Minute))))
		},
		"GetConsoleSession":   func() error { return errOf(s.GetConsoleSession(ctx, projB, w.console.ID)) },
		"TouchConsoleSession": func() error { return s.TouchConsoleSession(ctx, projB, w.console.ID, later) },
		"RollAPIKey": func() error {
			n := successorOf(w.apiKey, "key_next", later)
			n.ProjectID = projB
			return errOf(s.RollAPIKey(ctx, projB, w.apiKey.ID, n, later))
		},
	} {
		require.ErrorIsf(t, call(), store.ErrNotFound, "%s through project %q of a row of project %q", name, projB, projA)
		require.Equalf(t, before, w.snapshot(t, s), "the store after %s through another project: want nothing changed", name)
	}
	require.NoError(t, s.DeleteConsoleSession(ctx, projB, w.console.ID), "DeleteConsoleSession through another project")
	require.Equal(t, before, w.snapshot(t, s), "the store after DeleteConsoleSession through another project: want nothing changed")
}
