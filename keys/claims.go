package keys

import (
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/latchkey-dev/latchkey/store"
)

// LoginTokenTTL is the lifetime of a login token: its exp is its iat plus
// 86400 seconds. The wire contract fixes it; login answers it as
// expires_in.
const LoginTokenTTL = 24 * time.Hour

// MaxTokenBytes is the longest token the verifier looks at. Longer tokens
// are refused before any decoding or store lookup.
const MaxTokenBytes = 8 << 10

// Bounds on identifiers read from an unverified token, checked before the
// store is asked about them.
const (
	maxKidLen     = 64
	maxSubjectLen = 64
)

var (
	userPrefix    = store.PrefixUser + "_"
	apiKeyPrefix  = store.PrefixAPIKey + "_"
	kidPrefix     = store.PrefixSigningKey + "_"
	sessionPrefix = store.PrefixFamily + "_"
)

// Claims are the claims of a verified Latchkey token, with the kid of its
// header. A Claims returned by Parse or a Verifier is shared and must not be
// modified.
type Claims struct {
	// KeyID is the header's kid: the signing key that signed the token.
	KeyID string
	// Issuer is iss: the project's base_url, or "" for tokens minted
	// without one.
	Issuer string
	// Subject is sub: "usr_..." for a login token, "key_..." for an API
	// key token.
	Subject string
	// Audience is aud: the project id.
	Audience string
	// IssuedAt is iat.
	IssuedAt time.Time
	// ExpiresAt is exp; the zero time for API key tokens, which have none.
	ExpiresAt time.Time
	// NotBefore is nbf, or the zero time when the token has none.
	NotBefore time.Time
	// ID is jti, the token's random id.
	ID string
	// SessionID is sid: the session (refresh family) a login token belongs
	// to, or "" for API key tokens. Every accepted login token has one.
	SessionID string
	// Tags are the user's tags when a login token was minted; nil for API
	// key tokens.
	Tags []string
	// Scopes are the scope claim of an API key token (space-separated, RFC
	// 8693 4.2), split; nil for a key with no scopes, which may do
	// everything, and for login tokens.
	Scopes []string
}

// Scope returns the scope claim as the token carries it: the scopes
// separated by spaces, or "".
func (c *Claims) Scope() string { return strings.Join(c.Scopes, " ") }

// Kind returns the principal kind named by the subject's prefix, or 0.
func (c *Claims) Kind() Kind {
	switch {
	case strings.HasPrefix(c.Subject, userPrefix) && len(c.Subject) > len(userPrefix):
		return KindUser
	case strings.HasPrefix(c.Subject, apiKeyPrefix) && len(c.Subject) > len(apiKeyPrefix):
		return KindAPIKey
	}
	return 0
}

// checkShape checks the rules of a token's claims that do not depend on the
// time or the project. It is pure: the same claims give the same answer at
// any time.
//
//   - sub is "usr_..." (a login token) or "key_..." (an API key token);
//   - a login token carries exp, and exp is at most iat + LoginTokenTTL,
//     and a sid "rf_...": a login token without one (minted before
//     sessions existed, long expired) would skip every session and user
//     check, so none is accepted; it carries no scope;
//   - an API key token carries no sid, and exp only after iat: a key
//     created without an expiry ends only by revocation or by retirement
//     of its signing key; its scope claim, when present, holds 1 to
//     store.MaxScopes scope names (store.ValidScope) separated by single
//     spaces;
//   - iat and jti are present.
func (c *Claims) checkShape() error {
	if len(c.Subject) > maxSubjectLen {
		return malformed("subject too long")
	}
	if c.IssuedAt.IsZero() {
		return malformed("missing iat")
	}
	if c.ID == "" {
		return malformed("missing jti")
	}
	switch c.Kind() {
	case KindUser:
		if c.ExpiresAt.IsZero() {
			return malformed("login token without exp")
		}
		if c.ExpiresAt.After(c.IssuedAt.Add(LoginTokenTTL)) {
			return malformed("login token lifetime too long")
		}
		if c.SessionID == "" {
			return malformed("login token without sid")
		}
		if !strings.HasPrefix(c.SessionID, sessionPrefix) || len(c.SessionID) > maxSubjectLen {
			return malformed("bad sid")
		}
		if c.Scopes != nil {
			return malformed("login token with scope")
		}
	case KindAPIKey:
		if !c.ExpiresAt.IsZero() && !c.ExpiresAt.After(c.IssuedAt) {
			return malformed("API key token with exp not after iat")
		}
		if c.SessionID != "" {
			return malformed("API key token with sid")
		}
		if c.Scopes != nil && store.CheckScopes(c.Scopes) != nil {
			return malformed("bad scope claim")
		}
	default:
		return malformed("unknown subject kind")
	}
	return nil
}

// CheckTime checks exp, nbf and iat against now, each give or take leeway:
// the token has not expired, is not used before its nbf, and was not issued
// in the future. The exp of an API key token is checked without leeway:
// its expiry is the key's, refused from that second on like a revocation.
// Parse makes this check; a verifier that keeps the claims of tokens it has
// parsed makes it again at each use. A refusal matches ErrTokenExpired.
func (c *Claims) CheckTime(now time.Time, leeway time.Duration) error {
	expLeeway := leeway
	if c.Kind() == KindAPIKey {
		expLeeway = 0
	}
	switch {
	case !c.ExpiresAt.IsZero() && !now.Before(c.ExpiresAt.Add(expLeeway)):
		return expired("expired")
	case !c.NotBefore.IsZero() && now.Add(leeway).Before(c.NotBefore):
		return expired("not valid yet")
	case now.Add(leeway).Before(c.IssuedAt):
		return expired("issued in the future")
	}
	return nil
}

// wireClaims is the claims set as golang-jwt decodes and encodes it.
type wireClaims struct {
	Audience  jwt.ClaimStrings `json:"aud"`
	Subject   string           `json:"sub"`
	Issuer    string           `json:"iss,omitempty"`
	IssuedAt  *jwt.NumericDate `json:"iat,omitempty"`
	ExpiresAt *jwt.NumericDate `json:"exp,omitempty"`
	NotBefore *jwt.NumericDate `json:"nbf,omitempty"`
	ID        string           `json:"jti"`
	SessionID string           `json:"sid,omitempty"`
	Tags      []string         `json:"tags,omitempty"`
	Scope     *string          `json:"scope,omitempty"`
}

func (c *wireClaims) GetExpirationTime() (*jwt.NumericDate, error) { return c.ExpiresAt, nil }
func (c *wireClaims) GetIssuedAt() (*jwt.NumericDate, error)       { return c.IssuedAt, nil }
func (c *wireClaims) GetNotBefore() (*jwt.NumericDate, error)      { return c.NotBefore, nil }
func (c *wireClaims) GetIssuer() (string, error)                   { return c.Issuer, nil }
func (c *wireClaims) GetSubject() (string, error)                  { return c.Subject, nil }
func (c *wireClaims) GetAudience() (jwt.ClaimStrings, error)       { return c.Audience, nil }

// claims returns c as Claims, with kid from the header. aud must hold
// exactly one audience.
func (c *wireClaims) claims(kid string) (*Claims, error) {
	if len(c.Audience) != 1 {
		return nil, wrongProject("not exactly one audience")
	}
	return &Claims{
		KeyID:     kid,
		Issuer:    c.Issuer,
		Subject:   c.Subject,
		Audience:  c.Audience[0],
		IssuedAt:  timeOf(c.IssuedAt),
		ExpiresAt: timeOf(c.ExpiresAt),
		NotBefore: timeOf(c.NotBefore),
		ID:        c.ID,
		SessionID: c.SessionID,
		Tags:      c.Tags,
		Scopes:    scopesOfClaim(c.Scope),
	}, nil
}

// scopesOfClaim splits a scope claim. An absent claim is nil; a present one
// is split at single spaces, so that an empty claim, or one with empty
// names, is refused by checkShape rather than read as no scopes.
func scopesOfClaim(scope *string) []string {
	if scope == nil {
		return nil
	}
	return strings.Split(*scope, " ")
}

func timeOf(d *jwt.NumericDate) time.Time {
	if d == nil {
		return time.Time{}
	}
	return d.Time
}

// mintClaims is the claims set the Keyring signs. Unlike wireClaims it
// writes aud as a single string, whatever jwt.MarshalSingleStringAsArray
// says.
type mintClaims struct {
	Issuer    string           `json:"iss,omitempty"`
	Audience  string           `json:"aud"`
	Subject   string           `json:"sub"`
	IssuedAt  *jwt.NumericDate `json:"iat"`
	ExpiresAt *jwt.NumericDate `json:"exp,omitempty"`
	ID        string           `json:"jti"`
	SessionID string           `json:"sid,omitempty"`
	// Tags is non-nil on login tokens (written even when empty) and nil,
	// so omitted, on API key tokens.
	Tags []string `json:"tags,omitzero"`
	// Scope is the scope claim of an API key with scopes.
	Scope string `json:"scope,omitempty"`
}

func (c *mintClaims) GetExpirationTime() (*jwt.NumericDate, error) { return c.ExpiresAt, nil }
func (c *mintClaims) GetIssuedAt() (*jwt.NumericDate, error)       { return c.IssuedAt, nil }
func (c *mintClaims) GetNotBefore() (*jwt.NumericDate, error)      { return nil, nil }
func (c *mintClaims) GetIssuer() (string, error)                   { return c.Issuer, nil }
func (c *mintClaims) GetSubject() (string, error)                  { return c.Subject, nil }
func (c *mintClaims) GetAudience() (jwt.ClaimStrings, error) {
	return jwt.ClaimStrings{c.Audience}, nil
}
