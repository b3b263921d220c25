package keys

import (
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/latchkey-dev/latchkey/store"
)

// LoginTokenTTL is the lifetime of a login token: its exp is its iat plus
// 86400 seconds.
const LoginTokenTTL = 24 * time.Hour

// MaxTokenBytes is the longest token the verifier looks at. Longer tokens
// are rejected before any decoding or store lookup.
const MaxTokenBytes = 8 << 10

// Bounds on identifiers read from an unverified token, checked before the
// store is asked about them.
const (
	maxKidLen     = 64
	maxSubjectLen = 64
)

var (
	userPrefix   = store.PrefixUser + "_"
	apiKeyPrefix = store.PrefixAPIKey + "_"
	kidPrefix    = store.PrefixSigningKey + "_"
)

// claims is the claims set of a Latchkey token as parsed by the verifier.
// After a successful verification it is immutable: the verification cache
// shares it between requests.
type claims struct {
	Audience  jwt.ClaimStrings `json:"aud"`
	Subject   string           `json:"sub"`
	Issuer    string           `json:"iss,omitempty"`
	IssuedAt  *jwt.NumericDate `json:"iat,omitempty"`
	ExpiresAt *jwt.NumericDate `json:"exp,omitempty"`
	NotBefore *jwt.NumericDate `json:"nbf,omitempty"`
	ID        string           `json:"jti"`
	Tags      []string         `json:"tags,omitempty"`
}

func (c *claims) GetExpirationTime() (*jwt.NumericDate, error) { return c.ExpiresAt, nil }
func (c *claims) GetIssuedAt() (*jwt.NumericDate, error)       { return c.IssuedAt, nil }
func (c *claims) GetNotBefore() (*jwt.NumericDate, error)      { return c.NotBefore, nil }
func (c *claims) GetIssuer() (string, error)                   { return c.Issuer, nil }
func (c *claims) GetSubject() (string, error)                  { return c.Subject, nil }
func (c *claims) GetAudience() (jwt.ClaimStrings, error)       { return c.Audience, nil }

// kind returns the principal kind named by the subject's prefix, or 0.
func (c *claims) kind() Kind {
	switch {
	case strings.HasPrefix(c.Subject, userPrefix) && len(c.Subject) > len(userPrefix):
		return KindUser
	case strings.HasPrefix(c.Subject, apiKeyPrefix) && len(c.Subject) > len(apiKeyPrefix):
		return KindAPIKey
	}
	return 0
}

// Validate checks the shape rules golang-jwt does not know; the jwt
// Validator calls it after the time checks (jwt.ClaimsValidator). It is
// pure: the same claims give the same answer at any time.
//
//   - sub is "usr_..." (a login token) or "key_..." (an API key token);
//   - a login token carries exp (this is jwt.WithExpirationRequired, applied
//     to usr_ subjects only), and exp is at most iat + LoginTokenTTL;
//   - an API key token carries no exp: permanent keys end only by
//     revocation or by retirement of their signing key;
//   - iat and jti are present.
func (c *claims) Validate() error {
	if len(c.Subject) > maxSubjectLen {
		return reject("subject too long")
	}
	if c.IssuedAt == nil {
		return reject("missing iat")
	}
	if c.ID == "" {
		return reject("missing jti")
	}
	switch c.kind() {
	case KindUser:
		if c.ExpiresAt == nil {
			return reject("login token without exp")
		}
		if c.ExpiresAt.Time.After(c.IssuedAt.Time.Add(LoginTokenTTL)) {
			return reject("login token lifetime too long")
		}
	case KindAPIKey:
		if c.ExpiresAt != nil {
			return reject("API key token with exp")
		}
	default:
		return reject("unknown subject kind")
	}
	return nil
}

// mintClaims is the claims set the Keyring signs. Unlike claims it writes
// aud as a single string, whatever jwt.MarshalSingleStringAsArray says.
type mintClaims struct {
	Audience  string           `json:"aud"`
	Subject   string           `json:"sub"`
	IssuedAt  *jwt.NumericDate `json:"iat"`
	ExpiresAt *jwt.NumericDate `json:"exp,omitempty"`
	ID        string           `json:"jti"`
	// Tags is non-nil on login tokens (written even when empty) and nil,
	// so omitted, on API key tokens.
	Tags []string `json:"tags,omitzero"`
}

func (c *mintClaims) GetExpirationTime() (*jwt.NumericDate, error) { return c.ExpiresAt, nil }
func (c *mintClaims) GetIssuedAt() (*jwt.NumericDate, error)       { return c.IssuedAt, nil }
func (c *mintClaims) GetNotBefore() (*jwt.NumericDate, error)      { return nil, nil }
func (c *mintClaims) GetIssuer() (string, error)                   { return "", nil }
func (c *mintClaims) GetSubject() (string, error)                  { return c.Subject, nil }
func (c *mintClaims) GetAudience() (jwt.ClaimStrings, error) {
	return jwt.ClaimStrings{c.Audience}, nil
}
