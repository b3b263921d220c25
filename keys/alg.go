package keys

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"

	"github.com/golang-jwt/jwt/v5"

	"github.com/latchkey-dev/latchkey/store"
)

// The signing algorithms a project may use, by their JWS names. A project
// chooses one when it is created and may change it at a rotation; each key
// keeps its own, and a token verifies only under the algorithm of the key
// its kid names.
const (
	// EdDSA is Ed25519 (RFC 8037), the default: the fastest to sign and
	// verify, with the smallest keys and signatures.
	EdDSA = store.AlgEdDSA
	// ES256 is ECDSA on P-256 with SHA-256 (RFC 7518 3.4).
	ES256 = store.AlgES256
	// RS256 is RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 3.3), with a
	// 2048-bit key: the one algorithm every JWT verifier supports, AWS API
	// Gateway's JWT authorizers included.
	RS256 = store.AlgRS256
)

// RSAKeyBits is the size of the RSA keys Rotate makes.
const RSAKeyBits = 2048

// Algorithms returns the signing algorithms, the default first.
func Algorithms() []string { return []string{EdDSA, ES256, RS256} }

// ErrUnknownAlgorithm is matched by the error for a signing algorithm that
// is not EdDSA, ES256 or RS256 (the error matches store.ErrInvalid too).
var ErrUnknownAlgorithm = errors.New("keys: the signing algorithm is not EdDSA, ES256 or RS256")

// CheckAlgorithm returns nil for EdDSA, ES256 and RS256 (exactly so
// spelled), else an error matching ErrUnknownAlgorithm and
// store.ErrInvalid.
func CheckAlgorithm(alg string) error {
	switch alg {
	case EdDSA, ES256, RS256:
		return nil
	}
	return fmt.Errorf("%w (%q): %w", ErrUnknownAlgorithm, alg, store.ErrInvalid)
}

// signingMethods are golang-jwt's methods of the algorithms.
var signingMethods = map[string]jwt.SigningMethod{
	EdDSA: jwt.SigningMethodEdDSA,
	ES256: jwt.SigningMethodES256,
	RS256: jwt.SigningMethodRS256,
}

// PublicKey is the public half of a signing key, with its algorithm: the
// only algorithm a token it verifies may name.
type PublicKey struct {
	// Alg is EdDSA, ES256 or RS256.
	Alg string
	// Key is an ed25519.PublicKey for EdDSA, an *ecdsa.PublicKey on P-256
	// for ES256, an *rsa.PublicKey of at least 2048 bits for RS256.
	Key crypto.PublicKey
}

// ParsePublicKey returns the public key of algorithm alg stored as b, in
// the form store.SigningKey.PublicKey states. An unknown algorithm or bytes
// not of its form give an error matching store.ErrInvalid.
func ParsePublicKey(alg string, b []byte) (PublicKey, error) {
	if err := store.CheckPublicKey(alg, b); err != nil {
		return PublicKey{}, fmt.Errorf("keys: %s public key: %w", alg, err)
	}
	switch alg {
	case EdDSA:
		return PublicKey{Alg: EdDSA, Key: ed25519.PublicKey(bytes.Clone(b))}, nil
	case ES256:
		k, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), b)
		if err != nil {
			return PublicKey{}, fmt.Errorf("keys: ES256 public key: %w", store.ErrInvalid)
		}
		return PublicKey{Alg: ES256, Key: k}, nil
	default: // RS256, as CheckPublicKey found
		k, err := x509.ParsePKCS1PublicKey(b)
		if err != nil {
			return PublicKey{}, fmt.Errorf("keys: RS256 public key: %w", store.ErrInvalid)
		}
		return PublicKey{Alg: RS256, Key: k}, nil
	}
}

// usable reports whether p's Key is of the Go type its Alg signs with, so
// that a token naming Alg is checked with that algorithm's verification.
func (p PublicKey) usable() bool {
	switch k := p.Key.(type) {
	case ed25519.PublicKey:
		return p.Alg == EdDSA && len(k) == ed25519.PublicKeySize
	case *ecdsa.PublicKey:
		return p.Alg == ES256 && k != nil && k.Curve == elliptic.P256()
	case *rsa.PublicKey:
		return p.Alg == RS256 && k != nil && k.N != nil && k.N.BitLen() >= store.MinRSABits
	}
	return false
}

// JWK returns p as the JWK of the key kid: kty OKP with crv Ed25519 (RFC
// 8037), EC with crv P-256, or RSA with n and e (RFC 7518 6), always with
// alg, use "sig" and kid.
func (p PublicKey) JWK(kid string) JWK {
	j := JWK{Kid: kid, Use: "sig", Alg: p.Alg}
	switch k := p.Key.(type) {
	case ed25519.PublicKey:
		j.Kty, j.Crv, j.X = "OKP", "Ed25519", b64(k)
	case *ecdsa.PublicKey:
		raw, _ := k.Bytes() // a P-256 key: 0x04 || X || Y, 32 bytes each
		j.Kty, j.Crv = "EC", "P-256"
		if len(raw) == 65 {
			j.X, j.Y = b64(raw[1:33]), b64(raw[33:])
		}
	case *rsa.PublicKey:
		j.Kty, j.N, j.E = "RSA", b64(k.N.Bytes()), b64(big.NewInt(int64(k.E)).Bytes())
	}
	return j
}

// PublicKey returns the signing key j publishes, checked: j must be a
// signature key (use "sig" or none) naming its algorithm (alg EdDSA, ES256
// or RS256; a JWK without alg is refused, since the algorithm is bound to
// the key, never taken from a token), of the kty and crv of that algorithm,
// with well-formed members (an RSA key of at least 2048 bits, a point on
// P-256). Anything else is an error matching store.ErrInvalid.
func (j JWK) PublicKey() (PublicKey, error) {
	bad := func(what string) (PublicKey, error) {
		return PublicKey{}, fmt.Errorf("keys: JWK %s: %s: %w", j.Kid, what, store.ErrInvalid)
	}
	if j.Use != "" && j.Use != "sig" {
		return bad("not a signature key")
	}
	dec := base64.RawURLEncoding.Strict().DecodeString
	switch j.Alg {
	case EdDSA:
		if j.Kty != "OKP" || j.Crv != "Ed25519" {
			return bad("EdDSA key not of kty OKP, crv Ed25519")
		}
		x, err := dec(j.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return bad("x is not a 32-byte Ed25519 key")
		}
		return PublicKey{Alg: EdDSA, Key: ed25519.PublicKey(x)}, nil
	case ES256:
		if j.Kty != "EC" || j.Crv != "P-256" {
			return bad("ES256 key not of kty EC, crv P-256")
		}
		x, errX := dec(j.X)
		y, errY := dec(j.Y)
		if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
			return bad("x and y are not 32 bytes each")
		}
		k, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return bad("not a point on P-256")
		}
		return PublicKey{Alg: ES256, Key: k}, nil
	case RS256:
		if j.Kty != "RSA" {
			return bad("RS256 key not of kty RSA")
		}
		n, errN := dec(j.N)
		e, errE := dec(j.E)
		if errN != nil || errE != nil || len(n) == 0 || n[0] == 0 || len(e) == 0 || len(e) > 4 || e[0] == 0 {
			return bad("n or e is not a minimal base64url integer")
		}
		k := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if bits := k.N.BitLen(); bits < store.MinRSABits || bits > store.MaxRSABits || k.E < 3 || k.E%2 == 0 {
			return bad("not an RSA key of 2048 to 8192 bits with an odd exponent")
		}
		return PublicKey{Alg: RS256, Key: k}, nil
	}
	return bad("alg is not EdDSA, ES256 or RS256")
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// privateKey is a decrypted signing key: what golang-jwt's method of its
// algorithm signs with.
type privateKey struct {
	alg    string
	signer crypto.Signer // ed25519.PrivateKey, *ecdsa.PrivateKey or *rsa.PrivateKey
}

// newKeyPair generates a key of alg, and returns it with its public key in
// the stored form and the bytes that are sealed: the 32-byte seed for
// EdDSA, the 32-byte scalar for ES256, the PKCS #1 DER for RS256.
func newKeyPair(alg string) (priv privateKey, pub, secret []byte, err error) {
	switch alg {
	case EdDSA:
		p, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return privateKey{}, nil, nil, err
		}
		return privateKey{EdDSA, k}, p, k.Seed(), nil
	case ES256:
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return privateKey{}, nil, nil, err
		}
		p, err := k.PublicKey.Bytes()
		if err != nil {
			return privateKey{}, nil, nil, err
		}
		s, err := k.Bytes()
		if err != nil {
			return privateKey{}, nil, nil, err
		}
		return privateKey{ES256, k}, p, s, nil
	case RS256:
		k, err := rsa.GenerateKey(rand.Reader, RSAKeyBits)
		if err != nil {
			return privateKey{}, nil, nil, err
		}
		return privateKey{RS256, k}, x509.MarshalPKCS1PublicKey(&k.PublicKey), x509.MarshalPKCS1PrivateKey(k), nil
	}
	return privateKey{}, nil, nil, CheckAlgorithm(alg)
}

// errKeyMismatch is the error of a sealed private key that opens but is
// not the private half of its record's public key.
var errKeyMismatch = errors.New("keys: sealed private key does not match its public key")

// parsePrivateKey returns the private key of alg from its sealed bytes
// (see newKeyPair), and checks that its public half is pub, the record's.
// Bytes that are not a key of alg give errUnseal.
func parsePrivateKey(alg string, secret, pub []byte) (privateKey, error) {
	var k crypto.Signer
	switch alg {
	case EdDSA:
		if len(secret) != ed25519.SeedSize {
			return privateKey{}, errUnseal
		}
		k = ed25519.NewKeyFromSeed(secret)
	case ES256:
		ek, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), secret)
		if err != nil {
			return privateKey{}, errUnseal
		}
		k = ek
	case RS256:
		rk, err := x509.ParsePKCS1PrivateKey(secret)
		if err != nil {
			return privateKey{}, errUnseal
		}
		k = rk
	default:
		return privateKey{}, CheckAlgorithm(alg)
	}
	want, err := ParsePublicKey(alg, pub)
	if err != nil {
		return privateKey{}, err
	}
	if eq, ok := k.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !eq.Equal(want.Key) {
		return privateKey{}, errKeyMismatch
	}
	return privateKey{alg, k}, nil
}
