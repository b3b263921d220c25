package keys

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"go.opentelemetry.io/otel/metric"

	"github.com/latchkey-dev/latchkey/audit"
	"github.com/latchkey-dev/latchkey/internal/telemetry"
	"github.com/latchkey-dev/latchkey/store"
)

// KeyringOptions tunes a [Keyring]. The zero value (or a nil pointer) is
// valid; each zero field means the documented default.
type KeyringOptions struct {
	// Now returns the current time. Default: time.Now.
	Now func() time.Time
	// Logger receives internal errors of the JWKS handler. Default:
	// slog.Default().
	Logger *slog.Logger
	// PrivateKeyCacheSize bounds how many decrypted private keys the
	// Keyring keeps in memory for minting. Default: 1024.
	PrivateKeyCacheSize int
	// JWKSMaxAge is the max-age of the JWKS response's Cache-Control.
	// A verifier elsewhere may keep publishing a retired key, or miss a new
	// one, for that long. Default: 5 minutes.
	JWKSMaxAge time.Duration
	// Issuer returns the base_url of a project under the deployment's
	// public URL, for example "https://id.example.com/p/acme". Tokens
	// minted for the project carry it as iss, and the discovery document
	// names it as issuer and the endpoints under it. Nil, or "" for a
	// project, mints tokens without iss, and the discovery document then
	// takes the base_url from the request it answers.
	Issuer func(projectID string) string
	// Audit records rotations and retirements, by the actor of the
	// request's context (package audit). Nil records nothing.
	Audit *audit.Log
	// MeterProvider receives the latchkey.revocations counter
	// (kind=signing_key). Nil means the global provider.
	MeterProvider metric.MeterProvider
	// Algorithm is the signing algorithm of a project's first key when the
	// caller names none (see [Keyring.RotateTo]): EdDSA, ES256 or RS256.
	// "" means EdDSA; anything else makes NewKeyring fail.
	Algorithm string
}

// Keyring creates, rotates and retires the projects' signing keys (EdDSA,
// ES256 or RS256, chosen per key) and mints tokens with the active one.
//
// Private keys reach the store only sealed (see the package documentation);
// the Keyring keeps a bounded number of decrypted ones in memory. A Keyring
// is safe for concurrent use.
type Keyring struct {
	st         store.SigningKeyStore
	seal       *sealer
	now        func() time.Time
	logger     *slog.Logger
	jwksMaxAge time.Duration
	issuer     func(projectID string) string
	audit      *audit.Log
	retired    telemetry.Counter // latchkey.revocations
	alg        string            // of a project's first key

	mu      sync.Mutex
	priv    map[string]privateKey // by projectID + "/" + kid
	privMax int
}

// NewKeyring returns a Keyring that keeps its keys in st, sealed under
// masterKey, which [CheckMasterKey] must accept (else the error matches
// ErrMasterKey); the Keyring does not retain masterKey itself, only a key
// derived from it. It panics if st is nil.
func NewKeyring(st store.SigningKeyStore, masterKey []byte, opts *KeyringOptions) (*Keyring, error) {
	if st == nil {
		panic("keys: NewKeyring with a nil store")
	}
	s, err := newSealer(masterKey)
	if err != nil {
		return nil, err
	}
	var o KeyringOptions
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.PrivateKeyCacheSize <= 0 {
		o.PrivateKeyCacheSize = 1024
	}
	if o.JWKSMaxAge <= 0 {
		o.JWKSMaxAge = 5 * time.Minute
	}
	if o.Issuer == nil {
		o.Issuer = func(string) string { return "" }
	}
	if o.Algorithm == "" {
		o.Algorithm = EdDSA
	}
	if err := CheckAlgorithm(o.Algorithm); err != nil {
		return nil, err
	}
	return &Keyring{
		st:         st,
		seal:       s,
		now:        o.Now,
		logger:     o.Logger,
		jwksMaxAge: o.JWKSMaxAge,
		issuer:     o.Issuer,
		audit:      o.Audit,
		retired:    telemetry.NewRevocations(telemetry.Meter(o.MeterProvider)),
		alg:        o.Algorithm,
		priv:       make(map[string]privateKey),
		privMax:    o.PrivateKeyCacheSize,
	}, nil
}

// Rotate creates a new key for the project, of the algorithm of its
// active key (KeyringOptions.Algorithm for a project without one), and makes
// it the active key; see [Keyring.RotateTo].
func (k *Keyring) Rotate(ctx context.Context, projectID string) (store.SigningKey, error) {
	return k.RotateTo(ctx, projectID, "")
}

// RotateTo creates a new key of algorithm alg (EdDSA, ES256 or RS256; ""
// keeps the algorithm of the project's active key, or takes
// KeyringOptions.Algorithm when it has none) and makes it the project's
// active key: the tokens minted from now on carry its id as kid and alg as
// alg. Older keys keep verifying, each with its own algorithm, until they
// are retired. Creating a project rotates once to give it its first key;
// the audit log records a project's first key as store.ActionSigningCreate,
// every later one as store.ActionSigningRotate.
// It returns the stored record (whose EncryptedPrivateKey is the sealed
// private key), an error matching ErrUnknownAlgorithm for another alg, or
// the store's error, such as one matching store.ErrNotFound for an unknown
// project. An RSA key takes a noticeable time to generate (tens to
// hundreds of milliseconds).
func (k *Keyring) RotateTo(ctx context.Context, projectID, alg string) (store.SigningKey, error) {
	if alg != "" {
		if err := CheckAlgorithm(alg); err != nil {
			return store.SigningKey{}, fmt.Errorf("keys: rotate: %w", err)
		}
	}
	created := store.Truncate(k.now())
	// The store's active key is the newest by (CreatedAt, ID). Make sure the
	// new key is strictly newer than the current one even when the clock
	// has not advanced (or stepped back), so Rotate always switches.
	active, err := k.st.ActiveSigningKey(ctx, projectID)
	action := store.ActionSigningRotate
	switch {
	case err == nil:
		if !created.After(active.CreatedAt) {
			created = active.CreatedAt.Add(time.Microsecond)
		}
		if alg == "" {
			alg = active.Algorithm
		}
	case !errors.Is(err, store.ErrNotFound):
		return store.SigningKey{}, fmt.Errorf("keys: rotate: %w", err)
	default:
		// The project's first key: created, not rotated.
		action = store.ActionSigningCreate
	}
	if alg == "" {
		alg = k.alg
	}
	priv, pub, secret, err := newKeyPair(alg)
	if err != nil {
		return store.SigningKey{}, fmt.Errorf("keys: generate signing key: %w", err)
	}
	kid := store.NewID(store.PrefixSigningKey)
	rec := store.SigningKey{
		ID:                  kid,
		ProjectID:           projectID,
		Algorithm:           alg,
		PublicKey:           pub,
		EncryptedPrivateKey: k.seal.seal(projectID, kid, secret),
		CreatedAt:           created,
	}
	clear(secret)
	if err := k.st.CreateSigningKey(ctx, rec); err != nil {
		return store.SigningKey{}, fmt.Errorf("keys: rotate: %w", err)
	}
	k.cachePrivate(projectID, kid, priv)
	k.audit.Record(ctx, projectID, action, kid)
	return rec, nil
}

// Retire retires the project's key kid: from the next request on, every
// token it signed (login tokens and API keys alike) is rejected by every
// verifier that shares the store, the JWKS no longer lists it, and the
// revocation feed does. [APIKeys.ActiveSignedBy] tells beforehand how many
// API keys that stops. The active key cannot be retired (the store's error
// matches store.ErrConflict): Rotate first. Retiring a retired key
// succeeds. An unknown kid gives an error matching store.ErrNotFound.
func (k *Keyring) Retire(ctx context.Context, projectID, kid string) error {
	if err := k.st.RetireSigningKey(ctx, projectID, kid, k.now()); err != nil {
		return fmt.Errorf("keys: retire: %w", err)
	}
	k.audit.Record(ctx, projectID, store.ActionSigningRetire, kid)
	k.retired.Add(ctx, telemetry.KindSigningKey)
	k.mu.Lock()
	delete(k.priv, projectID+"/"+kid)
	k.mu.Unlock()
	return nil
}

// Issuer returns the iss of the project's tokens (KeyringOptions.Issuer),
// or "" when they carry none.
func (k *Keyring) Issuer(projectID string) string { return k.issuer(projectID) }

// MintLoginToken returns a login token for user u of the project in the
// session sessionID ("rf_...", the refresh family the login started),
// signed with the project's active key, and its expiry. The claims are iss
// (when KeyringOptions.Issuer names one), aud (the project), sub (u.ID), iat
// (now, whole seconds), exp (iat + 86400 s), jti (random), sid (sessionID)
// and tags (u.Tags, [] when none). u.ID must start with "usr_", u.ProjectID,
// when set, must be the project, and sessionID must start with "rf_";
// otherwise the error matches store.ErrInvalid. A project without an active
// key gives an error matching store.ErrNotFound.
//
// MintLoginToken makes *Keyring satisfy identity.TokenMinter.
func (k *Keyring) MintLoginToken(ctx context.Context, projectID string, u store.User, sessionID string) (string, time.Time, error) {
	if !strings.HasPrefix(u.ID, userPrefix) || len(u.ID) > maxSubjectLen {
		return "", time.Time{}, fmt.Errorf("keys: mint login token: user id %q is not a user id: %w", u.ID, store.ErrInvalid)
	}
	if u.ProjectID != "" && u.ProjectID != projectID {
		return "", time.Time{}, fmt.Errorf("keys: mint login token: user of project %q in project %q: %w", u.ProjectID, projectID, store.ErrInvalid)
	}
	if !strings.HasPrefix(sessionID, sessionPrefix) || len(sessionID) > maxSubjectLen {
		return "", time.Time{}, fmt.Errorf("keys: mint login token: %q is not a session id: %w", sessionID, store.ErrInvalid)
	}
	tags := slices.Clone(u.Tags)
	if tags == nil {
		tags = []string{}
	}
	iat := jwt.NewNumericDate(k.now())
	exp := jwt.NewNumericDate(iat.Add(LoginTokenTTL))
	tok, _, err := k.mint(ctx, projectID, &mintClaims{
		Issuer:    k.issuer(projectID),
		Audience:  projectID,
		Subject:   u.ID,
		IssuedAt:  iat,
		ExpiresAt: exp,
		ID:        newJTI(),
		SessionID: sessionID,
		Tags:      tags,
	})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("keys: mint login token: %w", err)
	}
	return tok, exp.Time, nil
}

// MintAPIKeyToken returns the token of the project's permanent API key
// keyID, signed with the active key, and the id of that signing key: claims
// iss (when KeyringOptions.Issuer names one), aud, sub (keyID), iat and
// jti, and no exp. It does not record the key; [APIKeys.Create] does both.
// keyID must start with "key_", else the error matches store.ErrInvalid.
func (k *Keyring) MintAPIKeyToken(ctx context.Context, projectID, keyID string) (token, kid string, err error) {
	return k.MintScopedAPIKeyToken(ctx, projectID, keyID, nil, time.Time{})
}

// MintScopedAPIKeyToken is MintAPIKeyToken for a key with scopes (the
// claim scope, the names separated by spaces; none when scopes is empty)
// and an expiry (the claim exp, in whole seconds; none for the zero time).
// Scopes that store.CheckScopes refuses, or an expiry not after now, give
// an error matching store.ErrInvalid.
func (k *Keyring) MintScopedAPIKeyToken(ctx context.Context, projectID, keyID string, scopes []string, expiresAt time.Time) (token, kid string, err error) {
	if !strings.HasPrefix(keyID, apiKeyPrefix) || len(keyID) > maxSubjectLen {
		return "", "", fmt.Errorf("keys: mint API key token: id %q is not an API key id: %w", keyID, store.ErrInvalid)
	}
	if err := store.CheckScopes(scopes); err != nil {
		return "", "", fmt.Errorf("keys: mint API key token: %w", err)
	}
	iat := jwt.NewNumericDate(k.now())
	var exp *jwt.NumericDate
	if !expiresAt.IsZero() {
		exp = jwt.NewNumericDate(expiresAt)
		if !exp.After(iat.Time) {
			return "", "", fmt.Errorf("keys: mint API key token: expiry not after issue: %w", store.ErrInvalid)
		}
	}
	tok, kid, err := k.mint(ctx, projectID, &mintClaims{
		Issuer:    k.issuer(projectID),
		Audience:  projectID,
		Subject:   keyID,
		IssuedAt:  iat,
		ExpiresAt: exp,
		ID:        newJTI(),
		Scope:     strings.Join(scopes, " "),
	})
	if err != nil {
		return "", "", fmt.Errorf("keys: mint API key token: %w", err)
	}
	return tok, kid, nil
}

// mint signs c with the project's active key and returns the token and the
// key's id.
func (k *Keyring) mint(ctx context.Context, projectID string, c *mintClaims) (string, string, error) {
	kid, priv, err := k.activeKey(ctx, projectID)
	if err != nil {
		return "", "", err
	}
	// The header's alg is the key's, typ JWT.
	t := jwt.NewWithClaims(signingMethods[priv.alg], c)
	t.Header["kid"] = kid
	tok, err := t.SignedString(priv.signer)
	return tok, kid, err
}

// activeKey returns the project's active key, decrypting it unless cached.
// The store is asked every time, so a rotation by another process is used
// at once.
func (k *Keyring) activeKey(ctx context.Context, projectID string) (string, privateKey, error) {
	rec, err := k.st.ActiveSigningKey(ctx, projectID)
	if err != nil {
		return "", privateKey{}, fmt.Errorf("active signing key of %q: %w", projectID, err)
	}
	if rec.Retired() || rec.ProjectID != projectID {
		return "", privateKey{}, fmt.Errorf("store returned an unusable active key for %q", projectID)
	}
	k.mu.Lock()
	priv, ok := k.priv[projectID+"/"+rec.ID]
	k.mu.Unlock()
	if ok && priv.alg == rec.Algorithm {
		return rec.ID, priv, nil
	}
	secret, err := k.seal.open(projectID, rec.ID, rec.EncryptedPrivateKey)
	if err != nil {
		return "", privateKey{}, err
	}
	priv, err = parsePrivateKey(rec.Algorithm, secret, rec.PublicKey)
	clear(secret)
	if err != nil {
		return "", privateKey{}, err
	}
	k.cachePrivate(projectID, rec.ID, priv)
	return rec.ID, priv, nil
}

// ErrWrongMasterKey is matched by the error CheckUnseal returns when the
// master key does not open a project's sealed signing key.
var ErrWrongMasterKey = errors.New("keys: the master key does not open the stored signing keys (another master key made them)")

// CheckUnseal opens the project's active signing key with the Keyring's
// master key, and returns an error matching ErrWrongMasterKey if it does
// not open: the store was made with another master key, and nothing it
// signed could be minted or trusted. A project without a key passes.
func (k *Keyring) CheckUnseal(ctx context.Context, projectID string) error {
	_, _, err := k.activeKey(ctx, projectID)
	switch {
	case errors.Is(err, store.ErrNotFound), err == nil:
		return nil
	case errors.Is(err, errUnseal):
		return fmt.Errorf("%w: project %q", ErrWrongMasterKey, projectID)
	}
	return err
}

// cachePrivate remembers a decrypted key, dropping an arbitrary other one
// when the cache is full.
func (k *Keyring) cachePrivate(projectID, kid string, priv privateKey) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.priv) >= k.privMax {
		for key := range k.priv {
			delete(k.priv, key)
			break
		}
	}
	k.priv[projectID+"/"+kid] = priv
}

// newJTI returns a random token id: 128 bits, base64url.
func newJTI() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error.
	return base64.RawURLEncoding.EncodeToString(b[:])
}
