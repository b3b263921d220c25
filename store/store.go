package store

import (
	"context"
	"time"

	"github.com/latchkey-dev/latchkey/paginate"
)

// ProjectStore creates and finds projects.
type ProjectStore interface {
	// CreateProject creates p. It must return an error matching ErrInvalid
	// for an id that is not a slug and ErrConflict when the id exists.
	CreateProject(ctx context.Context, p Project) error
	// GetProject returns the project, or an error matching ErrNotFound.
	GetProject(ctx context.Context, id string) (Project, error)
	// ListProjects returns every project ordered by id.
	ListProjects(ctx context.Context) ([]Project, error)
}

// UserStore creates, finds, lists and changes users.
type UserStore interface {
	// CreateUser creates u. It must return ErrInvalid when CheckUser
	// refuses u, ErrNotFound for an unknown project, and ErrConflict when
	// the id exists or another user of the project has the same email
	// compared case-insensitively. The same email in two projects is fine.
	CreateUser(ctx context.Context, u User) error
	// GetUser returns the project's user with the given id, or an error
	// matching ErrNotFound.
	GetUser(ctx context.Context, projectID, id string) (User, error)
	// GetUserByEmail returns the project's user whose email equals email
	// case-insensitively, or an error matching ErrNotFound. An email that
	// NormalizeEmail makes empty is ErrInvalid.
	GetUserByEmail(ctx context.Context, projectID, email string) (User, error)
	// ListUsers returns at most req.Limit users of the project whose
	// normalized email starts with NormalizeEmail(emailPrefix) (every user
	// when it is empty) and that sort strictly after req.After, in
	// ascending (CreatedAt, ID) order with ids compared byte by byte, and
	// whether more such users follow (a prefix that cannot be stored, not
	// valid UTF-8 or with a NUL byte, is ErrInvalid: CheckPrefix). A
	// cursor's time is a user's CreatedAt. An unknown project lists as
	// empty. (Unlike contacts, users are not raised to sort after the
	// newest: a user created with an earlier CreatedAt, by an instance
	// whose clock is behind, may sort before a cursor already handed out.
	// The list is for administrators, who page it again.)
	ListUsers(ctx context.Context, projectID, emailPrefix string, req paginate.Request) (paginate.Page[User], error)
	// SetPasswordHash replaces the user's password hash, or returns an
	// error matching ErrNotFound. An empty hash is ErrInvalid.
	SetPasswordHash(ctx context.Context, projectID, id, hash string) error
	// ReplacePasswordHash sets the user's password hash to hash only if it
	// is old now, atomically across every handle (a compare-and-swap), so
	// that a hash upgraded at sign-in never overwrites one set meanwhile.
	// It returns an error matching ErrConflict, and changes nothing, when
	// the user's hash is not old, and ErrNotFound for an unknown user. An
	// empty old or hash is ErrInvalid.
	ReplacePasswordHash(ctx context.Context, projectID, id, old, hash string) error
	// SetUserTags replaces the user's tags (CheckTags), or returns an error
	// matching ErrNotFound.
	SetUserTags(ctx context.Context, projectID, id string, tags []string) error
	// DisableUser disables the user at at, in one atomic write: DisabledAt
	// becomes at, every session of the user that is not revoked is revoked
	// at at (see RefreshStore), every console session of the user is
	// deleted (ConsoleSessionStore), and one revocation of kind RevokedUser
	// is added to the project's feed. Disabling a disabled user succeeds and
	// changes nothing (the first DisabledAt stays). It returns an error
	// matching ErrNotFound for an unknown user.
	//
	// No session of the user is live afterwards, whatever runs
	// concurrently: a CreateRefreshFamily or RotateRefresh racing with
	// DisableUser either completes before it (and its family is revoked)
	// or fails with ErrDisabled.
	DisableUser(ctx context.Context, projectID, id string, at time.Time) error
	// EnableUser clears the user's DisabledAt, so that the user may sign
	// in again; sessions ended by DisableUser stay ended. Enabling an
	// enabled user succeeds. It returns an error matching ErrNotFound for
	// an unknown user.
	EnableUser(ctx context.Context, projectID, id string) error
	// EndUserSessions ends every session of the user at at, in one atomic
	// write, as DisableUser does but leaving the user enabled: every
	// session of the user that is not revoked is revoked at at, every
	// console session of the user is deleted, and one revocation of kind
	// RevokedSession is added to the project's feed for each session it
	// revoked (so that verifiers following the feed refuse those
	// sessions' login tokens, and no other: a session started afterwards
	// is live everywhere at once). It returns an error matching
	// ErrNotFound for an unknown user and ErrInvalid for a zero at, and
	// adds nothing then.
	EndUserSessions(ctx context.Context, projectID, id string, at time.Time) error
}

// ContactStore creates and lists contacts.
type ContactStore interface {
	// CreateContact creates c (CheckContact) and returns it as stored. The stored
	// CreatedAt is c.CreatedAt truncated to microseconds, raised if needed
	// so that the new contact sorts after every contact the project already
	// has: contacts added while a client pages appear after the items that
	// existed, never before its cursor. It must return ErrInvalid for an
	// empty id, ErrNotFound for an unknown project and ErrConflict for an
	// existing id.
	CreateContact(ctx context.Context, c Contact) (Contact, error)
	// CreateContacts inserts many contacts of one project in one atomic
	// write, with the same CreatedAt rule as CreateContact applied to each.
	// Contacts in cs may share a CreatedAt. Each contact's ProjectID must
	// be projectID or empty (then projectID). It is the bulk path; on any
	// error nothing is inserted.
	CreateContacts(ctx context.Context, projectID string, cs []Contact) error
	// ListContacts returns at most req.Limit contacts of the project that
	// sort strictly after req.After, in ascending (CreatedAt, ID) order with
	// ids compared byte by byte, and whether more follow. A page costs the
	// same at any depth (keyset on an index, never OFFSET). An unknown
	// project lists as empty.
	ListContacts(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[Contact], error)
	// DeleteContact deletes the contact, or returns an error matching
	// ErrNotFound. Cursors naming it stay valid.
	DeleteContact(ctx context.Context, projectID, id string) error
}

// APIKeyStore keeps the records of permanent API keys.
type APIKeyStore interface {
	// CreateAPIKey records k. It must return ErrInvalid when CheckAPIKey
	// refuses k, ErrNotFound for an unknown project and ErrConflict for an
	// existing id. CreatedBy and SigningKeyID are kept as given.
	CreateAPIKey(ctx context.Context, k APIKey) error
	// GetAPIKey returns the key's record, or an error matching ErrNotFound.
	// A revocation committed by any handle on the database is visible to
	// the next GetAPIKey of every handle.
	GetAPIKey(ctx context.Context, projectID, id string) (APIKey, error)
	// ListAPIKeys returns the project's keys, revoked ones included, in
	// ascending (CreatedAt, ID) order.
	ListAPIKeys(ctx context.Context, projectID string) ([]APIKey, error)
	// ListAPIKeysPage returns at most req.Limit keys of the project whose
	// name starts with namePrefix (every key when it is empty), revoked
	// ones included, that sort strictly after req.After, in ascending
	// (CreatedAt, ID) order, and whether more such keys follow (a prefix
	// that cannot be stored, not valid UTF-8 or with a NUL byte, is
	// ErrInvalid: CheckPrefix). A cursor's time is a key's CreatedAt. An
	// unknown project lists as empty.
	ListAPIKeysPage(ctx context.Context, projectID, namePrefix string, req paginate.Request) (paginate.Page[APIKey], error)
	// RevokeAPIKey sets the key's RevokedAt to at and adds one revocation
	// of kind RevokedAPIKey to the project's feed, in one atomic write.
	// Revoking a revoked key succeeds, keeps the first revocation time and
	// adds nothing. A key whose scheduled revocation (RevokesAt, a roll's
	// overlap) is after at is revoked at at instead: RevokesAt is cleared
	// and its scheduled feed item is replaced by the one at at. A key whose
	// scheduled revocation is at or before at is revoked already: nothing
	// changes. It returns an error matching ErrNotFound
	// for an unknown key and ErrInvalid for a zero at.
	RevokeAPIKey(ctx context.Context, projectID, id string, at time.Time) error
	// RollAPIKey replaces the key id by its successor next, in one atomic
	// write: next is recorded as CreateAPIKey records it, with RolledFrom
	// id; the old key's RolledTo becomes next.ID. When revokeAt is after
	// next.CreatedAt the old key's revocation is scheduled: its RevokesAt
	// becomes revokeAt, it stays valid until then, and one revocation of
	// kind RevokedAPIKey with RevokedAt revokeAt joins the project's feed
	// when it falls due (see ListRevocations); otherwise the old key is
	// revoked at once, as RevokeAPIKey does at revokeAt. It returns the old
	// key as it is after the roll.
	//
	// next must carry the old key's Name and Scopes. It returns an error
	// matching ErrInvalid when CheckRoll refuses its arguments or next's
	// name or scopes differ, ErrNotFound for an unknown key, ErrConflict
	// when the key has been rolled already (of any number of concurrent
	// rolls of one key, by any handles, exactly one succeeds and the others
	// get ErrConflict), ErrRevoked when the key is revoked at
	// next.CreatedAt, ErrExpired when it has expired then, and ErrConflict
	// for an existing next.ID. On any error nothing is changed.
	RollAPIKey(ctx context.Context, projectID, id string, next APIKey, revokeAt time.Time) (APIKey, error)
	// TouchAPIKey sets the key's LastUsedAt to at unless it is already at
	// or after at. It returns an error matching ErrNotFound for an unknown
	// key and ErrInvalid for a zero at.
	TouchAPIKey(ctx context.Context, projectID, id string, at time.Time) error
}

// SigningKeyStore keeps the records of project signing keys.
type SigningKeyStore interface {
	// CreateSigningKey records k, which becomes the project's active key
	// if it is the newest unretired one. It must return ErrInvalid when
	// CheckSigningKey refuses k, ErrNotFound for an unknown project and
	// ErrConflict for an existing id.
	CreateSigningKey(ctx context.Context, k SigningKey) error
	// GetSigningKey returns the project's key with the given id, retired or
	// not, with the Algorithm and PublicKey it was created with, or an
	// error matching ErrNotFound. A key of another project is not found.
	GetSigningKey(ctx context.Context, projectID, id string) (SigningKey, error)
	// ActiveSigningKey returns the project's newest unretired key, by
	// (CreatedAt, ID), or an error matching ErrNotFound when there is none.
	ActiveSigningKey(ctx context.Context, projectID string) (SigningKey, error)
	// ListSigningKeys returns the project's keys, retired ones included, in
	// ascending (CreatedAt, ID) order.
	ListSigningKeys(ctx context.Context, projectID string) ([]SigningKey, error)
	// RetireSigningKey sets the key's RetiredAt to at and adds one
	// revocation of kind RevokedSigningKey to the project's feed, in one
	// atomic write. It returns an error matching ErrNotFound for an unknown
	// key, ErrConflict when the key is the project's active key (rotate
	// first) and ErrInvalid for a zero at. Retiring a retired key succeeds,
	// keeps the first time and adds nothing.
	RetireSigningKey(ctx context.Context, projectID, id string, at time.Time) error
}

// RefreshStore keeps refresh-token families, the sessions, and enforces
// rotation.
type RefreshStore interface {
	// CreateRefreshFamily records f, which starts a session of a user
	// who signed in with the password whose stored hash is passwordHash.
	// It records f only while passwordHash is still the user's hash,
	// atomically across every handle, so that no session begins with a
	// password changed since it was checked: a CreateRefreshFamily racing
	// with a password change followed by EndUserSessions either completes
	// before EndUserSessions (and its family is revoked) or fails. It must
	// return ErrInvalid when CheckFamilyStart refuses f or passwordHash,
	// ErrNotFound for an unknown project or user, ErrDisabled for a
	// disabled user, and ErrConflict for an existing id or when the
	// user's hash is not passwordHash.
	CreateRefreshFamily(ctx context.Context, f RefreshFamily, passwordHash string) error
	// RotateRefresh exchanges generation gen of the family for its
	// successor, atomically, as a compare-and-swap that holds across every
	// handle on the database:
	//
	//   - gen is the current generation, unexpired, family not revoked: the
	//     generation becomes gen+1, issued at p.Now, expiring at p.Now+p.TTL
	//     or at EndsAt if that is earlier, and the result has Reused false.
	//     Of any number of concurrent calls with the same gen, exactly one
	//     does this.
	//   - gen is the generation just before the current one and was rotated
	//     no more than p.ReuseWindow before p.Now: nothing changes; the
	//     result is the current family with Reused true.
	//   - gen is any other earlier generation, or the predecessor after the
	//     window: the family is revoked at p.Now, one revocation of kind
	//     RevokedSession is added to the feed (if the family was not
	//     revoked before), and the error matches ErrReplayed.
	//
	// A result, fresh or Reused, carries the family's user (Rotation.User).
	//
	// It returns ErrNotFound for an unknown family or one of another
	// project (or a gen above the current one), ErrRevoked for a revoked
	// family, ErrExpired when the current generation has expired or p.Now
	// is at or past EndsAt (then every presentation, a reuse within the
	// window included, is ErrExpired), ErrDisabled when the family's user
	// is disabled (whatever the family's state), and ErrInvalid when
	// CheckRotate refuses gen or p.
	RotateRefresh(ctx context.Context, projectID, familyID string, gen int64, p RotateParams) (Rotation, error)
	// GetRefreshFamily returns the family, or an error matching
	// ErrNotFound. A revocation or rotation committed by any handle is
	// seen by the next GetRefreshFamily of every handle.
	GetRefreshFamily(ctx context.Context, projectID, familyID string) (RefreshFamily, error)
	// RevokeRefreshFamily ends the session: it revokes the family at at
	// and adds one revocation of kind RevokedSession to the feed, in one
	// atomic write. Revoking a revoked family succeeds, keeps the first
	// revocation time (a later or an earlier one changes nothing) and adds
	// nothing. It returns an error matching ErrNotFound for
	// an unknown family and ErrInvalid for a zero at.
	RevokeRefreshFamily(ctx context.Context, projectID, familyID string, at time.Time) error
	// ScheduleSessionEnd schedules the end of the session familyID, its
	// EndsAt, as a revocation of kind RevokedSession that enters the feed
	// at that time as a roll's scheduled revocation does
	// (RevocationStore.ListRevocations), so that verifiers that follow the
	// feed refuse the session's tokens from then on. Latchkey calls it
	// when it mints a login token that expires after the session ends.
	// Scheduling it again before it enters the feed adds nothing, and a
	// session with no EndsAt schedules nothing. It returns an error
	// matching ErrNotFound for an unknown family or one of another project.
	ScheduleSessionEnd(ctx context.Context, projectID, familyID string) error
	// PruneRefreshFamilies deletes every family, of every project, that
	// was revoked before before, or whose current generation expired
	// before before, or whose EndsAt is before before, and returns how
	// many it deleted. A deleted family's tokens stay refused: they name a
	// family that is not found.
	// A zero before is ErrInvalid, as for every Prune method.
	PruneRefreshFamilies(ctx context.Context, before time.Time) (int, error)
}

// RevocationStore lists the revocation feed: what stopped being valid, in
// the order it did. The items are added by the revoking methods
// (RevokeAPIKey, RetireSigningKey, RevokeRefreshFamily, RotateRefresh on a
// replay, DisableUser, EndUserSessions) in the same atomic write as the revocation.
type RevocationStore interface {
	// ListRevocations returns at most req.Limit revocations of the project
	// that sort strictly after req.After, in ascending (RevokedAt, ID)
	// order with ids compared byte by byte, and whether more follow. A
	// cursor's time is an item's RevokedAt. An item is never added before
	// an item already in the project's feed: once a reader has seen an
	// item, every later item sorts after it, whichever handle adds it, also
	// once that item is pruned (the floor is the newest position the feed
	// has ever held). An unknown project lists as empty.
	//
	// A revocation scheduled by RollAPIKey or ScheduleSessionEnd is not
	// listed before its time:
	// the first ListRevocations of the project, by any handle, at or after
	// that time by the listing process's clock (and any revocation added
	// at or after it) places it in the feed at its time, raised past the
	// floor only if an item already sorts after it. Scheduled items fall due
	// in (time, subject) order.
	ListRevocations(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[Revocation], error)
	// NextScheduledRevocation returns the time of the project's earliest
	// revocation scheduled by RollAPIKey or ScheduleSessionEnd that is not
	// in its feed yet, or
	// the zero time when there is none, so that a long poll of the feed
	// wakes when it falls due (a scheduled item commits nothing then, so
	// no RevocationWatcher wakes). A roll or a scheduled session end
	// committed by any handle is seen by the next call of every handle and
	// wakes the RevocationWatchers.
	NextScheduledRevocation(ctx context.Context, projectID string) (time.Time, error)
	// PruneSessionRevocations deletes every revocation of kind
	// RevokedSession, of every project, whose RevokedAt is before before,
	// and returns how many it deleted. Other kinds are kept.
	PruneSessionRevocations(ctx context.Context, before time.Time) (int, error)
}

// AuditStore keeps the audit log. Entries are only ever appended and,
// past their retention, pruned.
type AuditStore interface {
	// AppendAudit records e. It must return ErrInvalid when CheckAudit
	// refuses e, ErrNotFound for an unknown project and ErrConflict for an
	// existing id.
	AppendAudit(ctx context.Context, e AuditEntry) error
	// ListAudit returns at most req.Limit entries of the project that match
	// f and sort strictly before req.After (or from the newest, for the
	// zero cursor), newest first: descending (At, ID) order with ids
	// compared byte by byte; and whether more follow. A cursor's time is
	// an entry's At. An unknown project lists as empty.
	ListAudit(ctx context.Context, projectID string, f AuditFilter, req paginate.Request) (paginate.Page[AuditEntry], error)
	// PruneAudit deletes every entry, of every project, whose At is before
	// before, and returns how many it deleted.
	PruneAudit(ctx context.Context, before time.Time) (int, error)
}

// ConsoleSessionStore keeps the web console's sessions, so that every
// instance serving the console knows them.
type ConsoleSessionStore interface {
	// CreateConsoleSession records cs. It must return ErrInvalid when
	// CheckConsoleSession refuses cs, ErrNotFound for an unknown project
	// and ErrConflict for an existing id.
	CreateConsoleSession(ctx context.Context, cs ConsoleSession) error
	// GetConsoleSession returns the project's session with the given id,
	// or an error matching ErrNotFound (also for an id that is not a
	// SHA-256 in hex: no session has it). The id arguments of Get, Touch
	// and Delete are checked as CheckKey checks ids.
	GetConsoleSession(ctx context.Context, projectID, id string) (ConsoleSession, error)
	// TouchConsoleSession sets the session's LastSeenAt to at unless it is
	// already at or after at, or returns an error matching ErrNotFound.
	TouchConsoleSession(ctx context.Context, projectID, id string, at time.Time) error
	// DeleteConsoleSession ends the session. Deleting an unknown session
	// succeeds.
	DeleteConsoleSession(ctx context.Context, projectID, id string) error
	// PruneConsoleSessions deletes every session, of every project, last
	// seen before idleBefore or created before createdBefore, and returns
	// how many it deleted.
	PruneConsoleSessions(ctx context.Context, idleBefore, createdBefore time.Time) (int, error)
}

// ThrottleWindow is a key's current throttling window: its count of
// failures and when it ends (count 0 and a zero time when none is open).
type ThrottleWindow struct {
	Count   int
	ResetAt time.Time
}

// WindowAt returns the window, seen at now, of a key whose stored window
// counted count failures from started: that window while it is open
// (started after now minus window, both at microsecond precision), ending
// at started plus window; else the zero window. Every store reads its
// windows through it, so that they end alike.
func WindowAt(count int, started, now time.Time, window time.Duration) ThrottleWindow {
	window = window.Truncate(time.Microsecond)
	if count == 0 || !Truncate(started).After(Truncate(now).Add(-window)) {
		return ThrottleWindow{}
	}
	return ThrottleWindow{Count: count, ResetAt: Truncate(started).Add(window)}
}

// MaxThrottleKeys is the most keys one ThrottleStore.FailuresOf call reads.
const MaxThrottleKeys = 16

// ThrottleStore counts failed attempts in fixed windows, so that several
// server instances on one database throttle as one.
type ThrottleStore interface {
	// AddFailure counts one failure for key at now. If the key's window has
	// ended (it started window or more before now) a new window starts at
	// now. It returns the count in the current window and when that window
	// ends. It returns ErrInvalid when CheckThrottle refuses key and window,
	// or for a zero now.
	// A store that cannot count the failure returns an error (never a
	// count that was not recorded): callers refuse the attempt then.
	AddFailure(ctx context.Context, key string, now time.Time, window time.Duration) (count int, resetAt time.Time, err error)
	// Failures returns the count of key's current window and when it ends;
	// a key with no window open at now has count 0.
	Failures(ctx context.Context, key string, now time.Time, window time.Duration) (count int, resetAt time.Time, err error)
	// FailuresOf is Failures of each of keys in one call (one round trip
	// to a remote database): the i-th window is keys[i]'s. It returns
	// ErrInvalid when CheckThrottle refuses a key and window, for a zero
	// now, or for no keys or more than MaxThrottleKeys.
	FailuresOf(ctx context.Context, keys []string, now time.Time, window time.Duration) ([]ThrottleWindow, error)
	// ClearFailures forgets key's window. Clearing an unknown key succeeds.
	ClearFailures(ctx context.Context, key string) error
	// PruneThrottle deletes every window that ended at or before now, and
	// returns how many it deleted.
	PruneThrottle(ctx context.Context, now time.Time) (int, error)
}

// SettingStore keeps the deployment's settings: named values that every
// process on the database shares, such as the public URL its server
// recorded (SettingPublicURL).
type SettingStore interface {
	// SetSetting sets the setting name to value, replacing the value it
	// had. It must return ErrInvalid when CheckSetting refuses name or
	// value. A value set by any handle on the database is seen by the next
	// GetSetting of every handle.
	SetSetting(ctx context.Context, name, value string) error
	// GetSetting returns the value of the setting name, or an error
	// matching ErrNotFound when it was never set, and ErrInvalid for a name
	// CheckSettingName refuses.
	GetSetting(ctx context.Context, name string) (string, error)
}

// Store is everything a Latchkey deployment keeps, one database behind all
// of its role interfaces. Implementations are safe for concurrent use.
type Store interface {
	ProjectStore
	UserStore
	ContactStore
	APIKeyStore
	SigningKeyStore
	RefreshStore
	RevocationStore
	ThrottleStore
	AuditStore
	ConsoleSessionStore
	SettingStore
	// Close releases the store's resources. Calls after Close fail.
	Close() error
}
