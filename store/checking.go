package store

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey-dev/latchkey/paginate"
)

// Checked is the store a host uses: the portable layer over a backend. It
// runs the argument checks of every Store method (the Check functions of
// this package) once, before the backend is called, so that a backend only
// reads and writes, and a backend never sees an argument the contract
// refuses. A refused call returns an error matching ErrInvalid (an
// *ArgError saying what is wrong) and does not reach the backend.
//
// Create it with Check. latchkey.New, the example server and the
// conformance suite (storetest) put every store they are given behind it.
//
// Checked has only the methods of Store. An optional capability of the
// backend (ChangeVersioner, CheckedContactLister, RevocationWatcher, ...)
// is found through Unwrap, with As; the backend's capability methods check
// their own arguments with this package's Check functions (a capability
// method is not behind this layer).
type Checked struct {
	s Store
}

var _ Store = (*Checked)(nil)

// Check returns s behind the checking layer. A store that is a *Checked
// already is returned as it is. It panics for a nil s.
func Check(s Store) *Checked {
	if s == nil {
		panic("store: Check of a nil store")
	}
	if c, ok := s.(*Checked); ok {
		return c
	}
	return &Checked{s: s}
}

// Unwrap returns the store c checks the calls of.
func (c *Checked) Unwrap() Store { return c.s }

// refused returns err, a Check function's error, as the error of the
// operation op.
func refused(op string, err error) error {
	return fmt.Errorf("store: %s: %w", op, err)
}

// first returns the first non-nil of errs.
func first(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// CreateProject checks p (a slug id, CreatedAt set) and creates it.
func (c *Checked) CreateProject(ctx context.Context, p Project) error {
	if err := first(CheckProjectID(p.ID), CheckTime("created at", p.CreatedAt)); err != nil {
		return refused("create project", err)
	}
	return c.s.CreateProject(ctx, p)
}

// GetProject checks id and returns the project.
func (c *Checked) GetProject(ctx context.Context, id string) (Project, error) {
	if err := CheckProjectID(id); err != nil {
		return Project{}, refused("get project", err)
	}
	return c.s.GetProject(ctx, id)
}

// ListProjects returns every project.
func (c *Checked) ListProjects(ctx context.Context) ([]Project, error) {
	return c.s.ListProjects(ctx)
}

// CreateUser checks u (CheckUser) and creates it.
func (c *Checked) CreateUser(ctx context.Context, u User) error {
	if err := CheckUser(u); err != nil {
		return refused("create user", err)
	}
	return c.s.CreateUser(ctx, u)
}

// GetUser checks the key and returns the user.
func (c *Checked) GetUser(ctx context.Context, projectID, id string) (User, error) {
	if err := CheckKey(projectID, "user id", id); err != nil {
		return User{}, refused("get user", err)
	}
	return c.s.GetUser(ctx, projectID, id)
}

// GetUserByEmail checks the project id and that email does not normalize
// to empty, and returns the user.
func (c *Checked) GetUserByEmail(ctx context.Context, projectID, email string) (User, error) {
	if err := CheckProjectID(projectID); err != nil {
		return User{}, refused("get user by email", err)
	}
	if NormalizeEmail(email) == "" {
		return User{}, refused("get user by email", CheckEmail(""))
	}
	return c.s.GetUserByEmail(ctx, projectID, email)
}

// ListUsers checks the project id, the prefix (CheckPrefix) and the page,
// and lists.
func (c *Checked) ListUsers(ctx context.Context, projectID, emailPrefix string, req paginate.Request) (paginate.Page[User], error) {
	if err := first(CheckProjectID(projectID), CheckPrefix("email", emailPrefix), CheckPage(req)); err != nil {
		return paginate.Page[User]{}, refused("list users", err)
	}
	return c.s.ListUsers(ctx, projectID, emailPrefix, req)
}

// SetPasswordHash checks its arguments (CheckPasswordHash) and sets the
// hash.
func (c *Checked) SetPasswordHash(ctx context.Context, projectID, id, hash string) error {
	if err := CheckPasswordHash(projectID, id, hash); err != nil {
		return refused("set password hash", err)
	}
	return c.s.SetPasswordHash(ctx, projectID, id, hash)
}

// ReplacePasswordHash checks its arguments
// (CheckPasswordHashReplacement) and replaces the hash if it is old.
func (c *Checked) ReplacePasswordHash(ctx context.Context, projectID, id, old, hash string) error {
	if err := CheckPasswordHashReplacement(projectID, id, old, hash); err != nil {
		return refused("replace password hash", err)
	}
	return c.s.ReplacePasswordHash(ctx, projectID, id, old, hash)
}

// SetUserTags checks the key and the tags (CheckTags), and sets them.
func (c *Checked) SetUserTags(ctx context.Context, projectID, id string, tags []string) error {
	if err := first(CheckKey(projectID, "user id", id), CheckTags(tags)); err != nil {
		return refused("set user tags", err)
	}
	return c.s.SetUserTags(ctx, projectID, id, tags)
}

// DisableUser checks the key and at, and disables the user.
func (c *Checked) DisableUser(ctx context.Context, projectID, id string, at time.Time) error {
	if err := first(CheckKey(projectID, "user id", id), CheckTime("disabled at", at)); err != nil {
		return refused("disable user", err)
	}
	return c.s.DisableUser(ctx, projectID, id, at)
}

// EnableUser checks the key and enables the user.
func (c *Checked) EnableUser(ctx context.Context, projectID, id string) error {
	if err := CheckKey(projectID, "user id", id); err != nil {
		return refused("enable user", err)
	}
	return c.s.EnableUser(ctx, projectID, id)
}

// EndUserSessions checks the key and at, and ends the user's sessions.
func (c *Checked) EndUserSessions(ctx context.Context, projectID, id string, at time.Time) error {
	if err := first(CheckKey(projectID, "user id", id), CheckTime("at", at)); err != nil {
		return refused("end user sessions", err)
	}
	return c.s.EndUserSessions(ctx, projectID, id, at)
}

// CreateContact checks ct (CheckContact) and creates it.
func (c *Checked) CreateContact(ctx context.Context, ct Contact) (Contact, error) {
	if err := CheckContact(ct); err != nil {
		return Contact{}, refused("create contact", err)
	}
	return c.s.CreateContact(ctx, ct)
}

// CreateContacts checks the project id and each contact (CheckContact, in
// projectID or with an empty ProjectID), and creates them.
func (c *Checked) CreateContacts(ctx context.Context, projectID string, cs []Contact) error {
	const op = "create contacts"
	if err := CheckProjectID(projectID); err != nil {
		return refused(op, err)
	}
	for i, ct := range cs {
		if ct.ProjectID != "" && ct.ProjectID != projectID {
			return refused(op, invalidf("contact %d belongs to another project", i))
		}
		ct.ProjectID = projectID
		if err := CheckContact(ct); err != nil {
			return refused(fmt.Sprintf("%s: contact %d", op, i), err)
		}
	}
	return c.s.CreateContacts(ctx, projectID, cs)
}

// ListContacts checks the project id and the page, and lists.
func (c *Checked) ListContacts(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[Contact], error) {
	if err := CheckListContacts(projectID, req); err != nil {
		return paginate.Page[Contact]{}, refused("list contacts", err)
	}
	return c.s.ListContacts(ctx, projectID, req)
}

// CheckListContacts checks the arguments of ListContacts: a project id and
// a page of at least one item. The contacts-listing capabilities
// (CheckedContactLister, VersionedContactLister), which are not behind
// Checked, call it.
func CheckListContacts(projectID string, req paginate.Request) error {
	if err := CheckProjectID(projectID); err != nil {
		return err
	}
	return CheckPage(req)
}

// DeleteContact checks the key and deletes the contact.
func (c *Checked) DeleteContact(ctx context.Context, projectID, id string) error {
	if err := CheckKey(projectID, "contact id", id); err != nil {
		return refused("delete contact", err)
	}
	return c.s.DeleteContact(ctx, projectID, id)
}

// CreateAPIKey checks k (CheckAPIKey) and records it.
func (c *Checked) CreateAPIKey(ctx context.Context, k APIKey) error {
	if err := CheckAPIKey(k); err != nil {
		return refused("create API key", err)
	}
	return c.s.CreateAPIKey(ctx, k)
}

// GetAPIKey checks the key and returns the record.
func (c *Checked) GetAPIKey(ctx context.Context, projectID, id string) (APIKey, error) {
	if err := CheckKey(projectID, "API key id", id); err != nil {
		return APIKey{}, refused("get API key", err)
	}
	return c.s.GetAPIKey(ctx, projectID, id)
}

// ListAPIKeys checks the project id and lists.
func (c *Checked) ListAPIKeys(ctx context.Context, projectID string) ([]APIKey, error) {
	if err := CheckProjectID(projectID); err != nil {
		return nil, refused("list API keys", err)
	}
	return c.s.ListAPIKeys(ctx, projectID)
}

// ListAPIKeysPage checks the project id, the prefix (CheckPrefix) and the
// page, and lists.
func (c *Checked) ListAPIKeysPage(ctx context.Context, projectID, namePrefix string, req paginate.Request) (paginate.Page[APIKey], error) {
	if err := first(CheckProjectID(projectID), CheckPrefix("name", namePrefix), CheckPage(req)); err != nil {
		return paginate.Page[APIKey]{}, refused("list API keys page", err)
	}
	return c.s.ListAPIKeysPage(ctx, projectID, namePrefix, req)
}

// RevokeAPIKey checks the key and at, and revokes.
func (c *Checked) RevokeAPIKey(ctx context.Context, projectID, id string, at time.Time) error {
	if err := first(CheckKey(projectID, "API key id", id), CheckTime("revoked at", at)); err != nil {
		return refused("revoke API key", err)
	}
	return c.s.RevokeAPIKey(ctx, projectID, id, at)
}

// RollAPIKey checks its arguments (CheckRoll) and rolls.
func (c *Checked) RollAPIKey(ctx context.Context, projectID, id string, next APIKey, revokeAt time.Time) (APIKey, error) {
	if err := CheckRoll(projectID, id, next, revokeAt); err != nil {
		return APIKey{}, refused("roll API key", err)
	}
	return c.s.RollAPIKey(ctx, projectID, id, next, revokeAt)
}

// TouchAPIKey checks the key and at, and touches.
func (c *Checked) TouchAPIKey(ctx context.Context, projectID, id string, at time.Time) error {
	if err := first(CheckKey(projectID, "API key id", id), CheckTime("last used at", at)); err != nil {
		return refused("touch API key", err)
	}
	return c.s.TouchAPIKey(ctx, projectID, id, at)
}

// CreateSigningKey checks k (CheckSigningKey) and records it.
func (c *Checked) CreateSigningKey(ctx context.Context, k SigningKey) error {
	if err := CheckSigningKey(k); err != nil {
		return refused("create signing key", err)
	}
	return c.s.CreateSigningKey(ctx, k)
}

// GetSigningKey checks the key and returns the record.
func (c *Checked) GetSigningKey(ctx context.Context, projectID, id string) (SigningKey, error) {
	if err := CheckKey(projectID, "signing key id", id); err != nil {
		return SigningKey{}, refused("get signing key", err)
	}
	return c.s.GetSigningKey(ctx, projectID, id)
}

// ActiveSigningKey checks the project id and returns the active key.
func (c *Checked) ActiveSigningKey(ctx context.Context, projectID string) (SigningKey, error) {
	if err := CheckProjectID(projectID); err != nil {
		return SigningKey{}, refused("active signing key", err)
	}
	return c.s.ActiveSigningKey(ctx, projectID)
}

// ListSigningKeys checks the project id and lists.
func (c *Checked) ListSigningKeys(ctx context.Context, projectID string) ([]SigningKey, error) {
	if err := CheckProjectID(projectID); err != nil {
		return nil, refused("list signing keys", err)
	}
	return c.s.ListSigningKeys(ctx, projectID)
}

// RetireSigningKey checks the key and at, and retires.
func (c *Checked) RetireSigningKey(ctx context.Context, projectID, id string, at time.Time) error {
	if err := first(CheckKey(projectID, "signing key id", id), CheckTime("retired at", at)); err != nil {
		return refused("retire signing key", err)
	}
	return c.s.RetireSigningKey(ctx, projectID, id, at)
}

// CreateRefreshFamily checks f and passwordHash (CheckFamilyStart) and
// records f.
func (c *Checked) CreateRefreshFamily(ctx context.Context, f RefreshFamily, passwordHash string) error {
	if err := CheckFamilyStart(f, passwordHash); err != nil {
		return refused("create refresh family", err)
	}
	return c.s.CreateRefreshFamily(ctx, f, passwordHash)
}

// RotateRefresh checks the key, gen and p (CheckRotate), and rotates.
func (c *Checked) RotateRefresh(ctx context.Context, projectID, familyID string, gen int64, p RotateParams) (Rotation, error) {
	if err := first(CheckKey(projectID, "family id", familyID), CheckRotate(gen, p)); err != nil {
		return Rotation{}, refused("rotate refresh", err)
	}
	return c.s.RotateRefresh(ctx, projectID, familyID, gen, p)
}

// GetRefreshFamily checks the key and returns the family.
func (c *Checked) GetRefreshFamily(ctx context.Context, projectID, familyID string) (RefreshFamily, error) {
	if err := CheckKey(projectID, "family id", familyID); err != nil {
		return RefreshFamily{}, refused("get refresh family", err)
	}
	return c.s.GetRefreshFamily(ctx, projectID, familyID)
}

// RevokeRefreshFamily checks the key and at, and revokes.
func (c *Checked) RevokeRefreshFamily(ctx context.Context, projectID, familyID string, at time.Time) error {
	if err := first(CheckKey(projectID, "family id", familyID), CheckTime("revoked at", at)); err != nil {
		return refused("revoke refresh family", err)
	}
	return c.s.RevokeRefreshFamily(ctx, projectID, familyID, at)
}

// ScheduleSessionEnd checks the key and schedules.
func (c *Checked) ScheduleSessionEnd(ctx context.Context, projectID, familyID string) error {
	if err := CheckKey(projectID, "family id", familyID); err != nil {
		return refused("schedule session end", err)
	}
	return c.s.ScheduleSessionEnd(ctx, projectID, familyID)
}

// PruneRefreshFamilies checks before and prunes.
func (c *Checked) PruneRefreshFamilies(ctx context.Context, before time.Time) (int, error) {
	if err := CheckTime("before", before); err != nil {
		return 0, refused("prune refresh families", err)
	}
	return c.s.PruneRefreshFamilies(ctx, before)
}

// ListRevocations checks the project id and the page, and lists.
func (c *Checked) ListRevocations(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[Revocation], error) {
	if err := first(CheckProjectID(projectID), CheckPage(req)); err != nil {
		return paginate.Page[Revocation]{}, refused("list revocations", err)
	}
	return c.s.ListRevocations(ctx, projectID, req)
}

// NextScheduledRevocation checks the project id and returns the time.
func (c *Checked) NextScheduledRevocation(ctx context.Context, projectID string) (time.Time, error) {
	if err := CheckProjectID(projectID); err != nil {
		return time.Time{}, refused("next scheduled revocation", err)
	}
	return c.s.NextScheduledRevocation(ctx, projectID)
}

// PruneSessionRevocations checks before and prunes.
func (c *Checked) PruneSessionRevocations(ctx context.Context, before time.Time) (int, error) {
	if err := CheckTime("before", before); err != nil {
		return 0, refused("prune session revocations", err)
	}
	return c.s.PruneSessionRevocations(ctx, before)
}

// AddFailure checks key, window (CheckThrottle) and now, and counts.
func (c *Checked) AddFailure(ctx context.Context, key string, now time.Time, window time.Duration) (int, time.Time, error) {
	if err := first(CheckThrottle(key, window), CheckTime("now", now)); err != nil {
		return 0, time.Time{}, refused("add failure", err)
	}
	return c.s.AddFailure(ctx, key, now, window)
}

// Failures checks key, window (CheckThrottle) and now, and reads.
func (c *Checked) Failures(ctx context.Context, key string, now time.Time, window time.Duration) (int, time.Time, error) {
	if err := first(CheckThrottle(key, window), CheckTime("now", now)); err != nil {
		return 0, time.Time{}, refused("failures", err)
	}
	return c.s.Failures(ctx, key, now, window)
}

// FailuresOf checks its arguments (CheckThrottleKeys) and reads.
func (c *Checked) FailuresOf(ctx context.Context, keys []string, now time.Time, window time.Duration) ([]ThrottleWindow, error) {
	if err := CheckThrottleKeys(keys, now, window); err != nil {
		return nil, refused("failures of", err)
	}
	return c.s.FailuresOf(ctx, keys, now, window)
}

// ClearFailures checks key and clears it.
func (c *Checked) ClearFailures(ctx context.Context, key string) error {
	// Any positive window: ClearFailures takes none.
	if err := CheckThrottle(key, time.Second); err != nil {
		return refused("clear failures", err)
	}
	return c.s.ClearFailures(ctx, key)
}

// PruneThrottle checks now and prunes.
func (c *Checked) PruneThrottle(ctx context.Context, now time.Time) (int, error) {
	if err := CheckTime("now", now); err != nil {
		return 0, refused("prune throttle", err)
	}
	return c.s.PruneThrottle(ctx, now)
}

// AppendAudit checks e (CheckAudit) and appends it.
func (c *Checked) AppendAudit(ctx context.Context, e AuditEntry) error {
	if err := CheckAudit(e); err != nil {
		return refused("append audit", err)
	}
	return c.s.AppendAudit(ctx, e)
}

// ListAudit checks the project id and the page, and lists.
func (c *Checked) ListAudit(ctx context.Context, projectID string, f AuditFilter, req paginate.Request) (paginate.Page[AuditEntry], error) {
	if err := first(CheckProjectID(projectID), CheckPage(req)); err != nil {
		return paginate.Page[AuditEntry]{}, refused("list audit", err)
	}
	return c.s.ListAudit(ctx, projectID, f, req)
}

// PruneAudit checks before and prunes.
func (c *Checked) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	if err := CheckTime("before", before); err != nil {
		return 0, refused("prune audit", err)
	}
	return c.s.PruneAudit(ctx, before)
}

// CreateConsoleSession checks cs (CheckConsoleSession) and records it.
func (c *Checked) CreateConsoleSession(ctx context.Context, cs ConsoleSession) error {
	if err := CheckConsoleSession(cs); err != nil {
		return refused("create console session", err)
	}
	return c.s.CreateConsoleSession(ctx, cs)
}

// GetConsoleSession checks the key and returns the session.
func (c *Checked) GetConsoleSession(ctx context.Context, projectID, id string) (ConsoleSession, error) {
	if err := CheckKey(projectID, "console session id", id); err != nil {
		return ConsoleSession{}, refused("get console session", err)
	}
	return c.s.GetConsoleSession(ctx, projectID, id)
}

// TouchConsoleSession checks the key and at, and touches.
func (c *Checked) TouchConsoleSession(ctx context.Context, projectID, id string, at time.Time) error {
	if err := first(CheckKey(projectID, "console session id", id), CheckTime("last seen at", at)); err != nil {
		return refused("touch console session", err)
	}
	return c.s.TouchConsoleSession(ctx, projectID, id, at)
}

// DeleteConsoleSession checks the key and deletes the session.
func (c *Checked) DeleteConsoleSession(ctx context.Context, projectID, id string) error {
	if err := CheckKey(projectID, "console session id", id); err != nil {
		return refused("delete console session", err)
	}
	return c.s.DeleteConsoleSession(ctx, projectID, id)
}

// PruneConsoleSessions checks both times and prunes.
func (c *Checked) PruneConsoleSessions(ctx context.Context, idleBefore, createdBefore time.Time) (int, error) {
	if err := first(CheckTime("idle before", idleBefore), CheckTime("created before", createdBefore)); err != nil {
		return 0, refused("prune console sessions", err)
	}
	return c.s.PruneConsoleSessions(ctx, idleBefore, createdBefore)
}

// SetSetting checks name and value (CheckSetting) and sets.
func (c *Checked) SetSetting(ctx context.Context, name, value string) error {
	if err := CheckSetting(name, value); err != nil {
		return refused("set setting", err)
	}
	return c.s.SetSetting(ctx, name, value)
}

// GetSetting checks name (CheckSettingName) and returns the value.
func (c *Checked) GetSetting(ctx context.Context, name string) (string, error) {
	if err := CheckSettingName(name); err != nil {
		return "", refused("get setting", err)
	}
	return c.s.GetSetting(ctx, name)
}

// Close closes the store underneath.
func (c *Checked) Close() error { return c.s.Close() }
