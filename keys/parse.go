package keys

import (
	"crypto/rsa"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Leeway bounds.
const (
	// DefaultLeeway is the clock skew allowed on exp, nbf and iat when an
	// option leaves it zero.
	DefaultLeeway = 30 * time.Second
	// MaxLeeway is the largest clock skew allowed; larger values are
	// lowered to it.
	MaxLeeway = 60 * time.Second
)

// LeewayOf returns the leeway an option asks for: zero means
// DefaultLeeway, a negative value none, and anything above MaxLeeway is
// MaxLeeway.
func LeewayOf(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultLeeway
	case d < 0:
		return 0
	}
	return min(d, MaxLeeway)
}

// KeyFunc returns the public key of the signing key kid, with its
// algorithm: the token must name that algorithm. It refuses a kid with an
// error made by [Refuse] (ErrWrongProject when kid names no key of the
// project, ErrSigningKeyRetired when the key is retired), which Parse
// returns as it is; any other error (the keys cannot be read) Parse returns
// unchanged too, as a failure that is not a refusal. A PublicKey whose Key
// is not of its Alg's type (see [PublicKey]) is such a failure too.
type KeyFunc func(kid string) (PublicKey, error)

// ParseOptions tunes [Parse]. A nil *ParseOptions and every zero field mean
// the documented default.
type ParseOptions struct {
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// Leeway is the clock skew allowed on exp, nbf and iat. Zero means
	// DefaultLeeway; a negative value none; at most MaxLeeway.
	Leeway time.Duration
	// Issuer, when not "", is the only iss accepted. Latchkey's own
	// servers leave it empty (a deployment may be reachable under several
	// names and binds tokens to a project by aud and its keys); a verifier
	// elsewhere sets it to the discovery document's issuer.
	Issuer string
}

// allowedHeader lists the JOSE header members a Latchkey token may carry.
// Anything else (zip, b64, crit, p2c, jku, jwk, x5u, x5c, ...) is refused:
// a verifier must not accept what it does not understand (RFC 8725 §3.1).
var allowedHeader = map[string]bool{"alg": true, "typ": true, "kid": true}

// Parse verifies token as a Latchkey token of the project audience and
// returns its claims. It checks, in this order:
//
//   - the token is at most MaxTokenBytes, three strictly base64url-encoded
//     parts;
//   - its header has only the members alg, typ and kid; alg is EdDSA,
//     ES256 or RS256, typ is JWT and kid is "sk_..."; key(kid) gives the
//     public key, and alg is exactly that key's algorithm (RFC 8725 3.1:
//     the algorithm is the key's, never the token's choice);
//   - the signature verifies under that key with that algorithm;
//   - the claims have Latchkey's shape (see [Claims]): sub "usr_..." with
//     exp at most LoginTokenTTL after iat, or "key_..." without exp; iat
//     and jti present;
//   - aud is exactly audience (else ErrWrongProject), and iss is
//     opts.Issuer when that is set;
//   - exp has not passed, and nbf and iat are not in the future, each give
//     or take the leeway.
//
// A refusal matches ErrInvalidToken and one reason (ErrTokenMalformed,
// ErrTokenExpired, ErrWrongProject, or what key returned); an error of key
// that is not a refusal is returned unchanged. Revocations (API keys,
// sessions) are not Parse's business: a Verifier checks them after.
func Parse(token, audience string, key KeyFunc, opts *ParseOptions) (*Claims, error) {
	var o ParseOptions
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	c, err := parseSigned(token, key)
	if err != nil {
		return nil, err
	}
	if err := c.check(audience, o.Issuer, o.Now(), LeewayOf(o.Leeway)); err != nil {
		return nil, err
	}
	return c, nil
}

// check makes the checks of Parse that follow the signature.
func (c *Claims) check(audience, issuer string, now time.Time, leeway time.Duration) error {
	if err := c.checkShape(); err != nil {
		return err
	}
	if c.Audience != audience {
		return wrongProject("wrong audience")
	}
	if issuer != "" && c.Issuer != issuer {
		return wrongProject("wrong issuer")
	}
	return c.CheckTime(now, leeway)
}

// parser decodes tokens and checks their signature; the claims are checked
// by Claims.check, so that a cached token is checked by the same code.
var parser = jwt.NewParser(
	jwt.WithValidMethods(Algorithms()),
	jwt.WithStrictDecoding(),
	jwt.WithoutClaimsValidation(),
)

// parseSigned decodes token, checks its header with key and its signature,
// and returns its claims unchecked.
func parseSigned(token string, key KeyFunc) (*Claims, error) {
	if token == "" {
		return nil, malformed("empty token")
	}
	if len(token) > MaxTokenBytes {
		return nil, malformed("token too large")
	}
	if !isCompactJWS(token) {
		// Go's base64 decoders skip '\r' and '\n': without this check a
		// token with line breaks added would verify as the original.
		return nil, malformed("malformed")
	}
	wc := new(wireClaims)
	var kid string
	_, err := parser.ParseWithClaims(token, wc, func(t *jwt.Token) (any, error) {
		for name := range t.Header {
			if !allowedHeader[name] {
				return nil, malformed("header member not allowed")
			}
		}
		// golang-jwt has already refused any alg but ours
		// (WithValidMethods); the key decides which of them.
		if signingMethods[t.Method.Alg()] != t.Method {
			return nil, malformed("algorithm not allowed")
		}
		if typ, ok := t.Header["typ"].(string); !ok || !strings.EqualFold(typ, "JWT") {
			return nil, malformed("typ not JWT")
		}
		k, ok := t.Header["kid"].(string)
		if !ok || !strings.HasPrefix(k, kidPrefix) || len(k) > maxKidLen {
			return nil, malformed("bad kid")
		}
		pub, err := key(k)
		if err != nil {
			if errors.Is(err, ErrInvalidToken) {
				return nil, err
			}
			return nil, &storeError{err}
		}
		if !pub.usable() {
			return nil, &storeError{fmt.Errorf("keys: the key of %s is not a usable %s key", k, pub.Alg)}
		}
		if t.Method.Alg() != pub.Alg {
			return nil, malformed("algorithm is not the key's")
		}
		kid = k
		return pub.Key, nil
	})
	if err != nil {
		return nil, classify(err)
	}
	return wc.claims(kid)
}

// classify turns a golang-jwt error (or one of ours wrapped in it) into a
// refusal, or passes on a failure of the key function.
func classify(err error) error {
	var se *storeError
	if errors.As(err, &se) {
		return se.err
	}
	var te *tokenError
	if errors.As(err, &te) {
		return te
	}
	switch {
	case errors.Is(err, jwt.ErrEd25519Verification), errors.Is(err, jwt.ErrECDSAVerification),
		errors.Is(err, rsa.ErrVerification):
		return malformed("bad signature")
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		// Any other signature failure is golang-jwt refusing an alg
		// outside WithValidMethods (or a key of the wrong type for it).
		return malformed("algorithm not allowed")
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return malformed("unverifiable")
	}
	return malformed("malformed")
}

// isCompactJWS reports whether token is made only of the characters of a
// JWS compact serialization: the base64url alphabet without padding, and
// '.'.
func isCompactJWS(token string) bool {
	for i := 0; i < len(token); i++ {
		switch c := token[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}
