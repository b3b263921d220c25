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

// UserStore creates and finds users.
type UserStore interface {
	// CreateUser creates u. It must return ErrInvalid for an empty id or
	// email, ErrNotFound for an unknown project, and ErrConflict when the
	// id exists or another user of the project has the same email compared
	// case-insensitively. The same email in two projects is fine.
	CreateUser(ctx context.Context, u User) error
	// GetUser returns the project's user with the given id, or an error
	// matching ErrNotFound.
	GetUser(ctx context.Context, projectID, id string) (User, error)
	// GetUserByEmail returns the project's user whose email equals email
	// case-insensitively, or an error matching ErrNotFound.
	GetUserByEmail(ctx context.Context, projectID, email string) (User, error)
	// SetPasswordHash replaces the user's password hash, or returns an
	// error matching ErrNotFound.
	SetPasswordHash(ctx context.Context, projectID, id, hash string) error
}

// ContactStore creates and lists contacts.
type ContactStore interface {
	// CreateContact creates c and returns it as stored. The stored
	// CreatedAt is c.CreatedAt truncated to microseconds, raised if needed
	// so that the new contact sorts after every contact the project already
	// has: contacts added while a client pages appear after the items that
	// existed, never before its cursor. It must return ErrInvalid for an
	// empty id, ErrNotFound for an unknown project and ErrConflict for an
	// existing id.
	CreateContact(ctx context.Context, c Contact) (Contact, error)
	// CreateContacts inserts many contacts of one project in one atomic
	// write, with the same CreatedAt rule as CreateContact applied to each.
	// Contacts in cs may share a CreatedAt. It is the bulk path; on any
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
	// CreateAPIKey records k. It must return ErrInvalid for an empty id or
	// name, ErrNotFound for an unknown project and ErrConflict for an
	// existing id.
	CreateAPIKey(ctx context.Context, k APIKey) error
	// GetAPIKey returns the key's record, or an error matching ErrNotFound.
	// A revocation committed by any handle on the database is visible to
	// the next GetAPIKey of every handle.
	GetAPIKey(ctx context.Context, projectID, id string) (APIKey, error)
	// ListAPIKeys returns the project's keys, revoked ones included, in
	// ascending (CreatedAt, ID) order.
	ListAPIKeys(ctx context.Context, projectID string) ([]APIKey, error)
	// RevokeAPIKey sets the key's RevokedAt to at. Revoking a revoked key
	// succeeds and keeps the first revocation time. It returns an error
	// matching ErrNotFound for an unknown key.
	RevokeAPIKey(ctx context.Context, projectID, id string, at time.Time) error
	// TouchAPIKey sets the key's LastUsedAt to at unless it is already at
	// or after at. It returns an error matching ErrNotFound for an unknown
	// key.
	TouchAPIKey(ctx context.Context, projectID, id string, at time.Time) error
}

// SigningKeyStore keeps the records of project signing keys.
type SigningKeyStore interface {
	// CreateSigningKey records k, which becomes the project's active key
	// if it is the newest unretired one. It must return ErrInvalid for an
	// empty id or a public key that is not 32 bytes, ErrNotFound for an
	// unknown project and ErrConflict for an existing id.
	CreateSigningKey(ctx context.Context, k SigningKey) error
	// GetSigningKey returns the project's key with the given id, retired or
	// not, or an error matching ErrNotFound. A key of another project is not
	// found.
	GetSigningKey(ctx context.Context, projectID, id string) (SigningKey, error)
	// ActiveSigningKey returns the project's newest unretired key, by
	// (CreatedAt, ID), or an error matching ErrNotFound when there is none.
	ActiveSigningKey(ctx context.Context, projectID string) (SigningKey, error)
	// ListSigningKeys returns the project's keys, retired ones included, in
	// ascending (CreatedAt, ID) order.
	ListSigningKeys(ctx context.Context, projectID string) ([]SigningKey, error)
	// RetireSigningKey sets the key's RetiredAt to at. It returns an error
	// matching ErrNotFound for an unknown key and ErrConflict when the key
	// is the project's active key (rotate first). Retiring a retired key
	// succeeds and keeps the first time.
	RetireSigningKey(ctx context.Context, projectID, id string, at time.Time) error
}

// RefreshStore keeps refresh-token families and enforces rotation.
type RefreshStore interface {
	// CreateRefreshFamily records f, whose Generation must be 0. It must
	// return ErrInvalid for an empty id or user id, ErrNotFound for an
	// unknown project or user and ErrConflict for an existing id.
	CreateRefreshFamily(ctx context.Context, f RefreshFamily) error
	// RotateRefresh exchanges generation gen of the family for its
	// successor, atomically, as a compare-and-swap that holds across every
	// handle on the database:
	//
	//   - gen is the current generation, unexpired, family not revoked: the
	//     generation becomes gen+1, issued at p.Now, expiring at p.Now+p.TTL,
	//     and the result has Reused false. Of any number of concurrent calls
	//     with the same gen, exactly one does this.
	//   - gen is the generation just before the current one and was rotated
	//     no more than p.ReuseWindow before p.Now: nothing changes; the
	//     result is the current family with Reused true.
	//   - gen is any other earlier generation, or the predecessor after the
	//     window: the family is revoked at p.Now and the error matches
	//     ErrReplayed.
	//
	// It returns ErrNotFound for an unknown family or one of another
	// project (or a gen above the current one), ErrRevoked for a revoked
	// family and ErrExpired when the current generation has expired.
	RotateRefresh(ctx context.Context, projectID, familyID string, gen int64, p RotateParams) (Rotation, error)
	// GetRefreshFamily returns the family, or an error matching ErrNotFound.
	GetRefreshFamily(ctx context.Context, projectID, familyID string) (RefreshFamily, error)
	// RevokeRefreshFamily revokes the family at at (keeping an earlier
	// revocation time), or returns an error matching ErrNotFound.
	RevokeRefreshFamily(ctx context.Context, projectID, familyID string, at time.Time) error
}

// ThrottleStore counts failed attempts in fixed windows, so that several
// server instances on one database throttle as one.
type ThrottleStore interface {
	// AddFailure counts one failure for key at now. If the key's window has
	// ended (it started window or more before now) a new window starts at
	// now. It returns the count in the current window and when that window
	// ends. It returns ErrInvalid for an empty key or a non-positive
	// window.
	AddFailure(ctx context.Context, key string, now time.Time, window time.Duration) (count int, resetAt time.Time, err error)
	// Failures returns the count of key's current window and when it ends;
	// a key with no window open at now has count 0.
	Failures(ctx context.Context, key string, now time.Time, window time.Duration) (count int, resetAt time.Time, err error)
	// ClearFailures forgets key's window. Clearing an unknown key succeeds.
	ClearFailures(ctx context.Context, key string) error
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
	ThrottleStore
	// Close releases the store's resources. Calls after Close fail.
	Close() error
}
