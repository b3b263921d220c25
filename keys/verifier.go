package keys

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/latchkey-dev/latchkey/store"
)

// MaxLeeway is the largest clock-skew allowance a Verifier accepts.
const MaxLeeway = 60 * time.Second

// VerifierOptions tunes a [Verifier]. The zero value (or a nil pointer) is
// valid; each zero field means the documented default.
type VerifierOptions struct {
	// Now returns the current time, against which exp, nbf and iat are
	// checked. Default: time.Now.
	Now func() time.Time
	// Logger receives authentication failures (Info, never the token) and
	// internal errors (Error). Default: slog.Default().
	Logger *slog.Logger
	// Leeway is the clock skew allowed on exp, nbf and iat. Default: 30
	// seconds; a negative value means none; values above MaxLeeway (60 s)
	// are lowered to MaxLeeway.
	Leeway time.Duration
	// CacheSize bounds the cache of verified tokens. Default:
	// DefaultVerifyCacheSize (10,000 tokens, a few MiB at most); a negative
	// value disables the cache, so every request verifies the signature.
	CacheSize int
	// TouchInterval is how stale an API key's last-used time may get: a key
	// used within TouchInterval of its recorded LastUsedAt is not written
	// again, so a busy key costs one store write per interval rather than
	// one per request. Default: 1 minute.
	TouchInterval time.Duration
}

// Verifier checks bearer tokens for the project of each request. It is safe
// for concurrent use.
//
// A token is accepted when all of these hold:
//
//   - it is at most MaxTokenBytes long;
//   - its header says alg EdDSA and typ JWT, has no crit, and names in kid a
//     signing key of the request's project that is not retired (jku, jwk,
//     x5u and x5c are ignored: keys are never fetched or taken from a token);
//   - its Ed25519 signature verifies under that key;
//   - aud is exactly the request's project;
//   - sub is "usr_..." (a login token: exp required, at most 24 h after iat,
//     and not passed, give or take the leeway) or "key_..." (an API key
//     token: no exp; the key's record exists and is not revoked);
//   - iat and jti are present, iat is not in the future and nbf, if
//     present, has passed (both give or take the leeway).
//
// Tokens already verified are kept in a bounded cache keyed by their SHA-256,
// so a repeated token skips decoding and the signature check. The checks
// that can change between two requests are made on every request: exp, nbf
// and iat are compared with the clock, and the signing key's record (a
// retirement by any process is seen on the next request) and an API key's
// record (likewise for revocation) are read from the store.
//
// When the store offers a change signal ([store.ChangeVersioner], as
// store/sqlite does), those records are kept too, each tagged with the
// store's change version read before the record was, and a request reads
// the version once and uses a kept record only while the version is still
// its tag: any commit, by any process, makes the next request read the
// store again. A store without the signal is read on every request.
type Verifier struct {
	signing   store.SigningKeyStore
	apiKeys   store.APIKeyStore
	signVer   store.ChangeVersioner // nil: signing has no change signal
	apiVer    store.ChangeVersioner // nil: apiKeys has no change signal
	sameVer   bool                  // signVer and apiVer are one store
	sigRecs   *recordCache[signingRecord]
	keyRecs   *recordCache[apiKeyRecord]
	now       func() time.Time
	logger    *slog.Logger
	leeway    time.Duration
	cache     *verifyCache
	validator *jwt.Validator // time and shape checks of cached claims

	touchInterval time.Duration
	touchMu       sync.Mutex
	touched       map[string]time.Time // project + "/" + key id -> last touch by this Verifier
	touchMax      int
}

// NewVerifier returns a Verifier that reads signing keys from signing and API
// key records from apiKeys (usually both the same store.Store). It panics if
// either is nil. If a store implements [store.ChangeVersioner], the Verifier
// keeps that store's records while its change version stays the same.
func NewVerifier(signing store.SigningKeyStore, apiKeys store.APIKeyStore, opts *VerifierOptions) *Verifier {
	if signing == nil || apiKeys == nil {
		panic("keys: NewVerifier with a nil store")
	}
	var o VerifierOptions
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	switch {
	case o.Leeway == 0:
		o.Leeway = 30 * time.Second
	case o.Leeway < 0:
		o.Leeway = 0
	case o.Leeway > MaxLeeway:
		o.Leeway = MaxLeeway
	}
	if o.CacheSize == 0 {
		o.CacheSize = DefaultVerifyCacheSize
	}
	if o.TouchInterval <= 0 {
		o.TouchInterval = time.Minute
	}
	recMax := max(o.CacheSize, 1024)
	signVer, apiVer := changeVersioner(signing), changeVersioner(apiKeys)
	return &Verifier{
		signing:       signing,
		apiKeys:       apiKeys,
		signVer:       signVer,
		apiVer:        apiVer,
		sameVer:       sameStore(signVer, apiVer),
		sigRecs:       newRecordCache[signingRecord](recMax),
		keyRecs:       newRecordCache[apiKeyRecord](recMax),
		now:           o.Now,
		logger:        o.Logger,
		leeway:        o.Leeway,
		cache:         newVerifyCache(o.CacheSize),
		validator:     jwt.NewValidator(jwt.WithLeeway(o.Leeway), jwt.WithTimeFunc(o.Now), jwt.WithIssuedAt()),
		touchInterval: o.TouchInterval,
		touched:       make(map[string]time.Time),
		touchMax:      max(o.CacheSize, 1024),
	}
}

// Verify checks token for the project projectID (the request's project, from
// tenant.FromContext) and returns its principal. A token that is not
// acceptable gives an error matching [ErrInvalidToken]; any other error is a
// store failure. An API key used more than TouchInterval after its recorded
// last use has its LastUsedAt set to now.
func (v *Verifier) Verify(ctx context.Context, projectID, token string) (Principal, error) {
	if len(token) > MaxTokenBytes {
		return Principal{}, reject("token too large")
	}
	if token == "" {
		return Principal{}, reject("empty token")
	}
	if projectID == "" {
		return Principal{}, errors.New("keys: verify: no project")
	}
	var rv requestVersions
	sum := sha256.Sum256([]byte(token))
	ent, hit := v.cache.get(sum)
	if hit {
		if ent.project != projectID {
			return Principal{}, reject("wrong audience")
		}
		if err := v.validator.Validate(ent.claims); err != nil {
			if errors.Is(err, jwt.ErrTokenExpired) {
				v.cache.remove(sum)
			}
			return Principal{}, classify(err)
		}
		if err := v.checkSigningKey(ctx, projectID, ent.kid, &rv); err != nil {
			return Principal{}, err
		}
	} else {
		var err error
		// The parser's key function captures its versions: heap-allocate
		// them here only, so that the cached path allocates nothing.
		frv := new(requestVersions)
		ent, err = v.verifyFull(ctx, projectID, token, frv) // checks the signing key too
		if err != nil {
			return Principal{}, err
		}
		rv = *frv
		v.cache.add(sum, ent)
	}
	p := Principal{ProjectID: projectID, Subject: ent.claims.Subject, Kind: ent.kind}
	switch ent.kind {
	case KindUser:
		p.Tags = slices.Clone(ent.claims.Tags)
		if p.Tags == nil {
			p.Tags = []string{}
		}
	case KindAPIKey:
		if err := v.checkAPIKey(ctx, projectID, ent.claims.Subject, &rv); err != nil {
			return Principal{}, err
		}
		p.Tags = []string{}
	}
	return p, nil
}

// verifyFull decodes token, checks its header, looks its signing key up,
// verifies the signature and validates the claims.
func (v *Verifier) verifyFull(ctx context.Context, projectID, token string, rv *requestVersions) (*verified, error) {
	c := new(claims)
	var kid string
	parser := jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
		jwt.WithAudience(projectID),
		jwt.WithLeeway(v.leeway),
		jwt.WithTimeFunc(v.now),
		jwt.WithIssuedAt(),
		jwt.WithStrictDecoding(),
	)
	_, err := parser.ParseWithClaims(token, c, func(t *jwt.Token) (any, error) {
		// golang-jwt has already refused any alg but EdDSA
		// (WithValidMethods); checking again costs nothing.
		if t.Method != jwt.SigningMethodEdDSA {
			return nil, reject("algorithm not EdDSA")
		}
		if typ, ok := t.Header["typ"].(string); !ok || !strings.EqualFold(typ, "JWT") {
			return nil, reject("typ not JWT")
		}
		if _, ok := t.Header["crit"]; ok {
			return nil, reject("crit header")
		}
		// jku, jwk, x5u and x5c are deliberately never read.
		k, ok := t.Header["kid"].(string)
		if !ok || !strings.HasPrefix(k, kidPrefix) || len(k) > maxKidLen {
			return nil, reject("bad kid")
		}
		pub, err := v.signingKey(ctx, projectID, k, rv)
		if err != nil {
			return nil, err
		}
		kid = k
		return pub, nil
	})
	if err != nil {
		return nil, classify(err)
	}
	if len(c.Audience) != 1 {
		return nil, reject("more than one audience")
	}
	return &verified{project: projectID, kid: kid, kind: c.kind(), claims: c}, nil
}

// signingKey returns the public key kid of the project, if it exists there
// and is not retired. It uses the kept record when the store's change
// version is still the record's tag, and reads the store otherwise.
func (v *Verifier) signingKey(ctx context.Context, projectID, kid string, rv *requestVersions) (ed25519.PublicKey, error) {
	k := recordKey{projectID, kid}
	ver, versioned := v.signingVersion(ctx, rv) // before the read
	if versioned {
		if r, ok := v.sigRecs.get(k); ok && r.tag == ver {
			return r.key()
		}
	}
	rec, err := v.signing.GetSigningKey(ctx, projectID, kid)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
			return nil, reject("unknown kid")
		}
		return nil, &storeError{err}
	}
	if len(rec.PublicKey) != ed25519.PublicKeySize {
		return nil, &storeError{fmt.Errorf("signing key %s has a %d-byte public key", kid, len(rec.PublicKey))}
	}
	r := signingRecord{tag: ver, pub: ed25519.PublicKey(rec.PublicKey), retired: rec.Retired()}
	if versioned {
		// Kept beyond this call: own the bytes.
		r.pub = slices.Clone(r.pub)
		v.sigRecs.put(k, r)
	}
	return r.key()
}

// key returns the record's public key, or a rejection if it is retired.
func (r signingRecord) key() (ed25519.PublicKey, error) {
	if r.retired {
		return nil, reject("retired signing key")
	}
	return r.pub, nil
}

// checkSigningKey re-checks, for a cached token, that its key is not
// retired. It reads the store unless the store's change signal shows that
// nothing was committed since the kept record was read.
func (v *Verifier) checkSigningKey(ctx context.Context, projectID, kid string, rv *requestVersions) error {
	_, err := v.signingKey(ctx, projectID, kid, rv)
	var se *storeError
	if errors.As(err, &se) {
		return fmt.Errorf("keys: verify: %w", se.err)
	}
	return err
}

// checkAPIKey reads the API key's record (or uses the kept one while the
// store's change version is its tag), refuses a missing or revoked key, and
// records its use at most once per TouchInterval.
func (v *Verifier) checkAPIKey(ctx context.Context, projectID, id string, rv *requestVersions) error {
	k := recordKey{projectID, id}
	ver, versioned := v.apiKeyVersion(ctx, rv) // before the read
	r, ok := apiKeyRecord{}, false
	if versioned {
		r, ok = v.keyRecs.get(k)
		ok = ok && r.tag == ver
	}
	if !ok {
		rec, err := v.apiKeys.GetAPIKey(ctx, projectID, id)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
				return reject("unknown API key")
			}
			return fmt.Errorf("keys: verify: %w", err)
		}
		r = apiKeyRecord{tag: ver, revoked: rec.Revoked(), lastUsed: rec.LastUsedAt}
		if versioned {
			v.keyRecs.put(k, r)
		}
	}
	if r.revoked {
		return reject("revoked API key")
	}
	now := v.now()
	if now.Sub(r.lastUsed) >= v.touchInterval && v.claimTouch(projectID+"/"+id, now) {
		if err := v.apiKeys.TouchAPIKey(ctx, projectID, id, now); err != nil && !errors.Is(err, store.ErrNotFound) {
			// Last-used is informational; the request goes on.
			v.logger.WarnContext(ctx, "recording API key use failed", "project", projectID, "key", id, "err", err)
		}
	}
	return nil
}

// claimTouch reports whether this Verifier should write key's last-used
// time now, and notes that it does. Concurrent requests with one key thus
// write once, and the record's LastUsedAt keeps other instances from
// writing again within the interval. The map is bounded: when full, stale
// entries go, and if none are stale it is emptied (costing at most one
// extra write per key).
func (v *Verifier) claimTouch(key string, now time.Time) bool {
	v.touchMu.Lock()
	defer v.touchMu.Unlock()
	if last, ok := v.touched[key]; ok && now.Sub(last) < v.touchInterval && !now.Before(last) {
		return false
	}
	if len(v.touched) >= v.touchMax {
		for k, t := range v.touched {
			if now.Sub(t) >= v.touchInterval {
				delete(v.touched, k)
			}
		}
		if len(v.touched) >= v.touchMax {
			clear(v.touched)
		}
	}
	v.touched[key] = now
	return true
}

// classify turns a golang-jwt error (or one of ours wrapped in it) into a
// tokenError with a loggable reason, or a store failure.
func classify(err error) error {
	var se *storeError
	if errors.As(err, &se) {
		return fmt.Errorf("keys: verify: %w", se.err)
	}
	var te *tokenError
	if errors.As(err, &te) {
		return te
	}
	for _, c := range []struct {
		target error
		reason string
	}{
		{jwt.ErrTokenMalformed, "malformed"},
		{jwt.ErrTokenUnverifiable, "unverifiable"},
		{jwt.ErrEd25519Verification, "bad signature"},
		// Any other signature failure is golang-jwt refusing an alg
		// outside WithValidMethods (or a key of the wrong type for it).
		{jwt.ErrTokenSignatureInvalid, "algorithm not allowed"},
		{jwt.ErrTokenExpired, "expired"},
		{jwt.ErrTokenNotValidYet, "not valid yet"},
		{jwt.ErrTokenUsedBeforeIssued, "issued in the future"},
		{jwt.ErrTokenInvalidAudience, "wrong audience"},
		{jwt.ErrTokenRequiredClaimMissing, "missing claim"},
	} {
		if errors.Is(err, c.target) {
			return reject(c.reason)
		}
	}
	return reject("invalid")
}
