package store

import "time"

// Project is a tenant: its own users, contacts, API keys and signing keys.
type Project struct {
	// ID is the project's slug, [a-z0-9][a-z0-9-]{0,62}.
	ID string
	// CreatedAt is when the project was created.
	CreatedAt time.Time
}

// User is an account that can log in to one project.
type User struct {
	// ID is "usr_" followed by an opaque string.
	ID string
	// ProjectID is the project the user belongs to.
	ProjectID string
	// Email is the address as it was given. It is unique within a project,
	// compared case-insensitively (see NormalizeEmail).
	Email string
	// PasswordHash is a PHC string (argon2id) or a bcrypt hash. Stores keep
	// it as an opaque string.
	PasswordHash string
	// Tags are labels such as "admin". Stores return a non-nil slice, in
	// the order given.
	Tags []string
	// CreatedAt is when the user was created.
	CreatedAt time.Time
}

// HasTag reports whether u carries tag.
func (u User) HasTag(tag string) bool {
	for _, t := range u.Tags {
		if t == tag {
			return true
		}
	}
	return false
}

// Contact is one entry of a project's contacts list.
type Contact struct {
	// ID is "ct_" followed by an opaque string.
	ID string
	// ProjectID is the project the contact belongs to.
	ProjectID string
	// Name is the contact's display name.
	Name string
	// CreatedAt orders the list; stores keep microseconds.
	CreatedAt time.Time
}

// APIKey is the record of a permanent API key. The token itself (a JWT whose
// subject is ID) is never stored.
type APIKey struct {
	// ID is "key_" followed by an opaque string; it is the token's subject.
	ID string
	// ProjectID is the project the key belongs to.
	ProjectID string
	// Name is a label chosen by whoever created the key.
	Name string
	// CreatedAt is when the key was created.
	CreatedAt time.Time
	// LastUsedAt is when the key last authenticated a request, or the zero
	// time if never.
	LastUsedAt time.Time
	// RevokedAt is when the key was revoked, or the zero time while it is
	// valid.
	RevokedAt time.Time
}

// Revoked reports whether k has been revoked.
func (k APIKey) Revoked() bool { return !k.RevokedAt.IsZero() }

// SigningKey is one of a project's Ed25519 signing keys. Its private key is
// held only encrypted, by package keys; a store never sees it in plain text.
type SigningKey struct {
	// ID is the key id ("sk_..."), the kid of the tokens it signs.
	ID string
	// ProjectID is the project the key belongs to.
	ProjectID string
	// PublicKey is the 32-byte Ed25519 public key.
	PublicKey []byte
	// EncryptedPrivateKey is the sealed private key, opaque to the store.
	EncryptedPrivateKey []byte
	// CreatedAt is when the key was created. The newest key that is not
	// retired is the project's active key.
	CreatedAt time.Time
	// RetiredAt is when the key was retired, or the zero time while it
	// verifies.
	RetiredAt time.Time
}

// Retired reports whether k has been retired.
func (k SigningKey) Retired() bool { return !k.RetiredAt.IsZero() }

// RefreshFamily is one chain of refresh tokens, started by a login. Only its
// newest token (Generation) may be exchanged; the store keeps no token text,
// only the generation counter, so it never holds a usable refresh token.
type RefreshFamily struct {
	// ID is "rf_" followed by an opaque string.
	ID string
	// ProjectID is the project of the user the family belongs to.
	ProjectID string
	// UserID is the user the family's tokens act for.
	UserID string
	// Generation numbers the family's current token, starting at 0 and
	// increased by each rotation.
	Generation int64
	// IssuedAt is when the current generation was issued.
	IssuedAt time.Time
	// ExpiresAt is when the current generation stops being accepted.
	ExpiresAt time.Time
	// CreatedAt is when the family was started.
	CreatedAt time.Time
	// RevokedAt is when the family was revoked, or the zero time.
	RevokedAt time.Time
}

// Rotation is the outcome of a successful RotateRefresh.
type Rotation struct {
	// Family is the family after the rotation; Family.Generation is the
	// successor's generation.
	Family RefreshFamily
	// Reused reports that the presented token had already been rotated
	// within the reuse window, so Family is the successor issued then.
	Reused bool
}

// RotateParams are the rules RotateRefresh applies.
type RotateParams struct {
	// Now is the time of the exchange.
	Now time.Time
	// TTL is the lifetime of the successor token; it must be positive.
	TTL time.Duration
	// ReuseWindow is how long after its first use the immediate predecessor
	// of the current token is still answered with the current token.
	// Zero makes every reuse a replay.
	ReuseWindow time.Duration
}
