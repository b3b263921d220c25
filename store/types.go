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
	// DisabledAt is when the user was disabled, or the zero time while the
	// user may sign in. A disabled user's sessions have all ended.
	DisabledAt time.Time
}

// Disabled reports whether u is disabled.
func (u User) Disabled() bool { return !u.DisabledAt.IsZero() }

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
	// CreatedBy names who created the key: a user id, an API key id or
	// "cli" (see AuditEntry.Actor); "" when unknown (keys created before
	// it was recorded).
	CreatedBy string
	// SigningKeyID is the id of the signing key that signed the key's
	// token; retiring that signing key ends the API key. "" when unknown
	// (keys created before it was recorded).
	SigningKeyID string
	// CreatedAt is when the key was created.
	CreatedAt time.Time
	// LastUsedAt is when the key last authenticated a request, or the zero
	// time if never.
	LastUsedAt time.Time
	// RevokedAt is when the key was revoked, or the zero time while it is
	// not. A revoked key is refused whatever the clock of the verifier.
	RevokedAt time.Time
	// RevokesAt is the key's scheduled revocation (the old key of a roll:
	// the end of the overlap), or the zero time. The key is refused from
	// that time on, by the clock of each verifier.
	RevokesAt time.Time
	// Scopes are what the key may do: a key with scopes may call an
	// endpoint only when it holds that endpoint's scope (CheckScopes). Nil
	// or empty means the key may do everything a key may do. Stores return
	// them in the order given, never nil.
	Scopes []string
	// ExpiresAt is when the key stops being valid (its token's exp), or
	// the zero time for a permanent key.
	ExpiresAt time.Time
	// RolledFrom is the id of the key this one succeeded by a roll, or "".
	RolledFrom string
	// RolledTo is the id of the key that succeeded this one by a roll, or
	// "". A key is rolled at most once.
	RolledTo string
}

// Revoked reports whether k has been revoked (RevokedAt). A scheduled
// revocation that has come is not seen here: callers that know the time use
// RevokedBy or ValidAt.
func (k APIKey) Revoked() bool { return !k.RevokedAt.IsZero() }

// RevokedBy reports whether k is revoked at now: it was revoked, or its
// scheduled revocation is not after now.
func (k APIKey) RevokedBy(now time.Time) bool {
	return !k.RevokedAt.IsZero() || !k.RevokesAt.IsZero() && !now.Before(k.RevokesAt)
}

// StopsAt is when k stops being valid by revocation: RevokedAt, else
// RevokesAt (either may be the zero time).
func (k APIKey) StopsAt() time.Time {
	if !k.RevokedAt.IsZero() {
		return k.RevokedAt
	}
	return k.RevokesAt
}

// ExpiredBy reports whether k has an expiry and it is not after now.
func (k APIKey) ExpiredBy(now time.Time) bool {
	return !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt)
}

// ValidAt reports whether k is neither revoked nor expired at now.
func (k APIKey) ValidAt(now time.Time) bool { return !k.RevokedBy(now) && !k.ExpiredBy(now) }

// RevocationScheduled reports whether k's revocation is scheduled after
// now (a roll's overlap is running).
func (k APIKey) RevocationScheduled(now time.Time) bool {
	return k.RevokedAt.IsZero() && now.Before(k.RevokesAt)
}

// The signing algorithms a project's key may use, by their JWS names
// (RFC 7518, RFC 8037).
const (
	// AlgEdDSA is Ed25519, the default.
	AlgEdDSA = "EdDSA"
	// AlgES256 is ECDSA on P-256 with SHA-256.
	AlgES256 = "ES256"
	// AlgRS256 is RSASSA-PKCS1-v1_5 with SHA-256, with keys of 2048 bits or
	// more.
	AlgRS256 = "RS256"
)

// SigningKey is one of a project's signing keys. Its private key is held
// only encrypted, by package keys; a store never sees it in plain text.
type SigningKey struct {
	// ID is the key id ("sk_..."), the kid of the tokens it signs.
	ID string
	// ProjectID is the project the key belongs to.
	ProjectID string
	// Algorithm is the key's algorithm, AlgEdDSA, AlgES256 or AlgRS256:
	// the only alg its tokens may name. Keys recorded before the
	// algorithm was are AlgEdDSA.
	Algorithm string
	// PublicKey is the public key, in the form of its algorithm: for
	// AlgEdDSA the 32-byte Ed25519 key, for AlgES256 the 65-byte
	// uncompressed P-256 point (SEC 1), for AlgRS256 the DER of a PKCS #1
	// RSAPublicKey.
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

// RefreshFamily is one chain of refresh tokens, started by a login: a
// session. Its ID is the session id ("sid") that the login tokens of the
// session carry. Only its newest token (Generation) may be exchanged; the
// store keeps no token text, only the generation counter, so it never holds
// a usable refresh token.
//
// The session is live while it is not revoked, its current generation has
// not expired and its absolute end has not passed (see Live).
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
	// EndsAt is the absolute end of the session, whatever its rotations:
	// no generation is exchanged, and ExpiresAt never moves, past it. The
	// zero time means no absolute end (families started before it
	// existed).
	EndsAt time.Time
	// RevokedAt is when the family was revoked (logout, replay, its user
	// disabled), or the zero time.
	RevokedAt time.Time
}

// Live reports whether the session is live at now: not revoked, its current
// generation not expired and its absolute end not passed.
func (f RefreshFamily) Live(now time.Time) bool {
	return f.RevokedAt.IsZero() && now.Before(f.ExpiresAt) && (f.EndsAt.IsZero() || now.Before(f.EndsAt))
}

// Rotation is the outcome of a successful RotateRefresh.
type Rotation struct {
	// Family is the family after the rotation; Family.Generation is the
	// successor's generation.
	Family RefreshFamily
	// Reused reports that the presented token had already been rotated
	// within the reuse window, so Family is the successor issued then.
	Reused bool
	// User is the family's user as GetUser returns it, read by the same
	// call (so a caller minting the successor's access token needs no
	// second read). It is never disabled: a disabled user's family is
	// ErrDisabled.
	User User
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

// RevocationKind says what a Revocation made invalid.
type RevocationKind string

// The kinds of revocation, as the revocation feed names them.
const (
	// RevokedAPIKey: a permanent API key was revoked; Subject is its id.
	RevokedAPIKey RevocationKind = "api_key"
	// RevokedSigningKey: a signing key was retired, ending every token and
	// API key it signed; Subject is its id (the tokens' kid).
	RevokedSigningKey RevocationKind = "signing_key"
	// RevokedSession: a session ended by logout, replay or
	// EndUserSessions (a password reset: one item per session it ended),
	// or its absolute end when a login token outlives it
	// (ScheduleSessionEnd); Subject is the family id (the login tokens'
	// sid).
	RevokedSession RevocationKind = "session"
	// RevokedUser: a user was disabled, ending every session of theirs and
	// every login token issued to them up to RevokedAt; Subject is the user
	// id.
	RevokedUser RevocationKind = "user"
)

// Revocation is one item of a project's revocation feed: something that
// stopped being valid. Stores append them in the same atomic write as the
// revocation itself, never otherwise.
type Revocation struct {
	// ID is "rev_" followed by an opaque string.
	ID string
	// ProjectID is the project of what was revoked.
	ProjectID string
	// Kind says what Subject names.
	Kind RevocationKind
	// Subject is the id of what was revoked.
	Subject string
	// RevokedAt is when it was revoked, and the item's position in the
	// feed, which is ordered by (RevokedAt, ID). It is the revocation time
	// given, raised if needed so that the item sorts after every item the
	// project's feed already has.
	RevokedAt time.Time
}

// AuditEntry is one record of the audit log: who did what to which target.
// It never holds a secret (a password, a token, an email of an unknown
// account).
type AuditEntry struct {
	// ID is "aud_" followed by an opaque string.
	ID string
	// ProjectID is the project the action happened in.
	ProjectID string
	// At is when it happened.
	At time.Time
	// Actor is who acted: a user id, an API key id, "cli" for the command
	// line, or "" when nobody was authenticated (a failed sign-in).
	Actor string
	// Action is what happened, one of the Action constants, for example
	// ActionAPIKeyRevoke.
	Action string
	// Target is the id of what was acted on (a key, a user, a session), or
	// "".
	Target string
	// ClientAddr is the client address of the request, or "" (the command
	// line).
	ClientAddr string
}

// AuditFilter selects audit entries. A zero field matches every entry.
type AuditFilter struct {
	// Action, when set, keeps entries with exactly this action.
	Action string
	// Target, when set, keeps entries with exactly this target.
	Target string
}

// ConsoleSession is a signed-in administrator of the web console. Only a
// hash of the session's secret is stored, so reading the store does not
// give a usable session.
type ConsoleSession struct {
	// ID is the SHA-256 of the session's secret, in lowercase hex.
	ID string
	// ProjectID is the project the session belongs to.
	ProjectID string
	// UserID is the signed-in user.
	UserID string
	// CreatedAt is when the user signed in.
	CreatedAt time.Time
	// LastSeenAt is when the session last served a request.
	LastSeenAt time.Time
}

// Audit actions.
const (
	ActionSignIn          = "console.signin"
	ActionSignInFailed    = "console.signin_failed"
	ActionSignOut         = "console.signout"
	ActionAPIKeyCreate    = "apikey.create"
	ActionAPIKeyRevoke    = "apikey.revoke"
	ActionAPIKeyRoll      = "apikey.roll"
	ActionSigningCreate   = "signingkey.create"
	ActionSigningRotate   = "signingkey.rotate"
	ActionSigningRetire   = "signingkey.retire"
	ActionUserCreate      = "user.create"
	ActionUserUpdate      = "user.update"
	ActionUserPassword    = "user.password"
	ActionUserDisable     = "user.disable"
	ActionUserEnable      = "user.enable"
	ActionSessionLogout   = "session.logout"
	ActionSessionReplayed = "session.replay"
)

// ActorCLI is the AuditEntry.Actor of actions taken on the command line.
const ActorCLI = "cli"
