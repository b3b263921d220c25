package keys

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/store"
)

// VerifierStore is what a [Verifier] reads: signing keys, API keys (and
// their last use) and sessions. Every store.Store implements it.
type VerifierStore interface {
	GetSigningKey(ctx context.Context, projectID, id string) (store.SigningKey, error)
	GetAPIKey(ctx context.Context, projectID, id string) (store.APIKey, error)
	TouchAPIKey(ctx context.Context, projectID, id string, at time.Time) error
	GetRefreshFamily(ctx context.Context, projectID, familyID string) (store.RefreshFamily, error)
}

// VerifierOptions tunes a [Verifier]. The zero value (or a nil pointer) is
// valid; each zero field means the documented default.
type VerifierOptions struct {
	// Now returns the current time, against which exp, nbf and iat are
	// checked. Default: time.Now.
	Now func() time.Time
	// Logger receives authentication failures (Info, never the token) and
	// internal errors (Error). Default: slog.Default().
	Logger *slog.Logger
	// Leeway is the clock skew allowed on exp, nbf and iat. Default:
	// DefaultLeeway (30 seconds); a negative value means none; values above
	// MaxLeeway (60 s) are lowered to MaxLeeway.
	Leeway time.Duration
	// CacheSize bounds the cache of verified tokens. Default:
	// DefaultVerifyCacheSize; a negative value disables the cache, so every
	// request verifies the signature.
	CacheSize int
	// TouchInterval is how stale an API key's last-used time may get: a key
	// used within TouchInterval of its recorded LastUsedAt is not written
	// again, so a busy key costs one store write per interval rather than
	// one per request. Default: 1 minute.
	TouchInterval time.Duration
	// ClientAddr returns the client address of a request, which the log
	// line of a refused token names. Nil means the connection's
	// (r.RemoteAddr without its port); behind a proxy, set it as the
	// identity handler's ClientAddr is set.
	ClientAddr func(r *http.Request) string
	// MeterProvider receives the latchkey.verifications counter (by cache
	// hit or miss, and result). Nil means the global provider
	// (otel.GetMeterProvider).
	MeterProvider metric.MeterProvider
}

// Verifier checks bearer tokens for the project of each request. It is safe
// for concurrent use.
//
// A token is accepted when [Parse] accepts it for the request's project
// (signature by an unretired signing key of the project, aud, shape, time)
// and, for an API key token, the key's record exists and is not revoked,
// and, for a login token, its session (sid) is live and its user's: not
// revoked (logout, replay, user disabled), its refresh token not expired,
// its absolute lifetime not over (store.RefreshFamily.Live). A login token
// without a sid (as minted before sessions existed) is refused: it would
// escape every session and user check. The token's iss is not checked: a
// deployment may be reachable under several names.
//
// Tokens already verified are kept in a bounded cache keyed by their SHA-256,
// so a repeated token skips decoding and the signature check. What can
// change between two requests is checked on every request: exp, nbf and iat
// against the clock, and the records of the signing key (retirement), the
// API key (revocation) and the session (its end), so that a change made by
// any process counts from the next request.
//
// When the store offers a change signal ([store.ChangeVersioner], as
// store/sqlite does, found with [store.As]), those records are kept too, each tagged with the
// store's change version read before the record was, and a request reads
// the version once and uses a kept record only while the version is still
// its tag: any commit, by any process, makes the next request read the
// store again. A store without the signal is read on every request.
type Verifier struct {
	st        VerifierStore
	versioner store.ChangeVersioner // nil: no change signal
	sigRecs   *recordCache[signingRecord]
	keyRecs   *recordCache[apiKeyRecord]
	sesRecs   *recordCache[sessionRecord]
	now       func() time.Time
	logger    *slog.Logger
	leeway    time.Duration
	cache     *verifyCache
	metrics   *verifyMetrics

	clientAddr    func(r *http.Request) string
	touchInterval time.Duration
	touchMu       sync.Mutex
	touched       map[recordKey]time.Time // last touch of a key by this Verifier
	touchMax      int
}

// NewVerifier returns a Verifier that reads st. It panics if st is nil. If
// st, or a store it wraps (store.As), implements [store.ChangeVersioner], the Verifier keeps records while
// the change version stays the same.
func NewVerifier(st VerifierStore, opts *VerifierOptions) *Verifier {
	if st == nil {
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
	if o.CacheSize == 0 {
		o.CacheSize = DefaultVerifyCacheSize
	}
	if o.TouchInterval <= 0 {
		o.TouchInterval = time.Minute
	}
	if o.ClientAddr == nil {
		o.ClientAddr = httpapi.RemoteHost
	}
	recMax := max(o.CacheSize, 1024)
	cv, _ := store.As[store.ChangeVersioner](st)
	return &Verifier{
		st:            st,
		versioner:     cv,
		sigRecs:       newRecordCache[signingRecord](recMax),
		keyRecs:       newRecordCache[apiKeyRecord](recMax),
		sesRecs:       newRecordCache[sessionRecord](recMax),
		now:           o.Now,
		logger:        o.Logger,
		leeway:        LeewayOf(o.Leeway),
		cache:         newVerifyCache(o.CacheSize),
		metrics:       newVerifyMetrics(o.MeterProvider),
		clientAddr:    o.ClientAddr,
		touchInterval: o.TouchInterval,
		touched:       make(map[recordKey]time.Time),
		touchMax:      recMax,
	}
}

// Verify checks token for the project projectID (the request's project, from
// tenant.FromContext) and returns its principal. A token that is not
// acceptable gives an error matching [ErrInvalidToken] and one of its
// reasons; any other error is a store failure. An API key used more than
// TouchInterval after its recorded last use has its LastUsedAt set to now.
func (v *Verifier) Verify(ctx context.Context, projectID, token string) (Principal, error) {
	c, err := v.verify(ctx, projectID, token, true)
	if err != nil {
		return Principal{}, err
	}
	return principalOf(projectID, c), nil
}

// verify checks token for projectID and returns its claims. touch says
// whether an API key's use is recorded. Each call counts one verification
// (VerifierOptions.MeterProvider).
func (v *Verifier) verify(ctx context.Context, projectID, token string, touch bool) (*Claims, error) {
	c, hit, err := v.verifyToken(ctx, projectID, token, touch)
	v.metrics.verified(ctx, hit, err)
	return c, err
}

// verifyToken is verify, also reporting whether the token was found in the
// cache of verified tokens.
func (v *Verifier) verifyToken(ctx context.Context, projectID, token string, touch bool) (*Claims, bool, error) {
	if token == "" {
		return nil, false, malformed("empty token")
	}
	if len(token) > MaxTokenBytes {
		return nil, false, malformed("token too large")
	}
	if projectID == "" {
		return nil, false, errors.New("keys: verify: no project")
	}
	var rv requestVersion
	now := v.now()
	sum := TokenKey(token)
	c, hit, err := v.cached(sum, projectID, now)
	if err != nil {
		return nil, hit, err
	}
	if hit {
		if err := v.checkSigningKey(ctx, projectID, c.KeyID, &rv); err != nil {
			return nil, hit, err
		}
	} else {
		// The key function captures rv: heap-allocate a copy here only,
		// so that the cached path allocates nothing.
		frv := new(requestVersion)
		var err error
		c, err = parseSigned(token, func(kid string) (PublicKey, error) {
			return v.signingKey(ctx, projectID, kid, frv)
		})
		if err != nil {
			return nil, hit, err
		}
		if err := c.check(projectID, "", now, v.leeway); err != nil {
			return nil, hit, err
		}
		rv = *frv
		v.cache.add(sum, projectID, c)
	}
	if err := v.checkRecords(ctx, projectID, c, now, touch, &rv); err != nil {
		return nil, hit, err
	}
	return c, hit, nil
}

// cached returns the claims of the token whose SHA-256 is sum if the
// verification cache holds them for projectID, checked against the clock at
// now: an error when they are no longer valid at now (an expired token also
// leaves the cache). It reports whether the cache held the token, also with
// an error.
func (v *Verifier) cached(sum [32]byte, projectID string, now time.Time) (*Claims, bool, error) {
	c, hit := v.cache.get(sum, projectID)
	if !hit {
		return nil, false, nil
	}
	if err := c.CheckTime(now, v.leeway); err != nil {
		if errors.Is(err, ErrTokenExpired) {
			v.cache.remove(sum)
		}
		return nil, true, err
	}
	return c, true, nil
}

// checkRecords checks the records of the API key or the session that the
// claims c speak for (the signing key is checked by the caller).
func (v *Verifier) checkRecords(ctx context.Context, projectID string, c *Claims, now time.Time, touch bool, rv *requestVersion) error {
	switch c.Kind() {
	case KindUser:
		// Parse refuses a login token without a sid.
		return v.checkSession(ctx, projectID, c, now, rv)
	case KindAPIKey:
		return v.checkAPIKey(ctx, projectID, c.Subject, now, touch, rv)
	}
	return nil
}

// principalOf is who the claims c of a token verified for projectID speak
// for.
func principalOf(projectID string, c *Claims) Principal {
	p := Principal{ProjectID: projectID, Subject: c.Subject, Kind: c.Kind(), SessionID: c.SessionID, Tags: []string{}}
	if p.Kind == KindUser && len(c.Tags) > 0 {
		p.Tags = slices.Clone(c.Tags)
	}
	if p.Kind == KindAPIKey && len(c.Scopes) > 0 {
		p.Scopes = slices.Clone(c.Scopes)
	}
	return p
}

// signingKey returns the public key kid of the project, with its
// algorithm, if it exists there and is not retired.
func (v *Verifier) signingKey(ctx context.Context, projectID, kid string, rv *requestVersion) (PublicKey, error) {
	r, err := v.signingRecord(ctx, projectID, kid, rv)
	if err != nil {
		return PublicKey{}, err
	}
	return r.key()
}

// checkSigningKey refuses a token signed by the project's key kid unless
// the key exists there and is not retired (the signature was checked
// before).
func (v *Verifier) checkSigningKey(ctx context.Context, projectID, kid string, rv *requestVersion) error {
	r, err := v.signingRecord(ctx, projectID, kid, rv)
	if err != nil {
		return err
	}
	return r.live()
}

// signingRecord returns the record of the project's key kid. It uses the
// kept record when the store's change version is still the record's tag,
// and reads the store otherwise; a record it keeps has its public key
// parsed once.
func (v *Verifier) signingRecord(ctx context.Context, projectID, kid string, rv *requestVersion) (signingRecord, error) {
	k := recordKey{projectID, kid}
	ver, versioned := v.version(ctx, rv) // before the read
	if versioned {
		if r, ok := v.sigRecs.get(k); ok && r.tag == ver {
			return r, nil
		}
	}
	rec, err := v.st.GetSigningKey(ctx, projectID, kid)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
			return signingRecord{}, unknownKid()
		}
		return signingRecord{}, fmt.Errorf("keys: verify: %w", err)
	}
	r := signingRecordOf(rec, ver)
	if versioned {
		// Kept beyond this call: own the key.
		r.raw = slices.Clone(r.raw)
		if pub, err := ParsePublicKey(r.alg, r.raw); err == nil {
			r.parsed = &pub
		}
		v.sigRecs.put(k, r)
	}
	return r, nil
}

// live refuses the record's tokens if the key is retired.
func (r signingRecord) live() error {
	if r.retired {
		return retired("retired signing key")
	}
	return nil
}

// key returns the record's public key with its algorithm, or a refusal if
// it is retired. A stored key that does not parse is an error, not a
// refusal: the store holds a record no key of Latchkey's makes.
func (r signingRecord) key() (PublicKey, error) {
	if err := r.live(); err != nil {
		return PublicKey{}, err
	}
	if r.parsed != nil {
		return *r.parsed, nil
	}
	pub, err := ParsePublicKey(r.alg, r.raw)
	if err != nil {
		return PublicKey{}, fmt.Errorf("keys: verify: signing key %s: %w", r.kid, err)
	}
	return pub, nil
}

// checkAPIKey reads the API key's record (or uses the kept one while the
// store's change version is its tag), refuses a missing or revoked key, and,
// if touch, records its use at most once per TouchInterval.
func (v *Verifier) checkAPIKey(ctx context.Context, projectID, id string, now time.Time, touch bool, rv *requestVersion) error {
	k := recordKey{projectID, id}
	ver, versioned := v.version(ctx, rv) // before the read
	r, ok := apiKeyRecord{}, false
	if versioned {
		r, ok = v.keyRecs.get(k)
		ok = ok && r.tag == ver
	}
	if !ok {
		rec, err := v.st.GetAPIKey(ctx, projectID, id)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
				return unknownAPIKey()
			}
			return fmt.Errorf("keys: verify: %w", err)
		}
		r = apiKeyRecordOf(rec, ver)
		if versioned {
			v.keyRecs.put(k, r)
		}
	}
	return v.useAPIKey(ctx, k, r, now, touch)
}

// useAPIKey refuses the API key k if its record r says it is revoked, or
// its scheduled revocation has come at now (a roll's overlap ends here, at
// its time, on every instance: no process needs to be awake when it falls
// due), or it has expired, and, if
// touch, records its use at most once per TouchInterval.
func (v *Verifier) useAPIKey(ctx context.Context, k recordKey, r apiKeyRecord, now time.Time, touch bool) error {
	if r.revoked {
		return revoked("revoked API key")
	}
	if !r.revokesAt.IsZero() && !now.Before(r.revokesAt) {
		return revoked("rolled API key past its overlap")
	}
	if !r.expiresAt.IsZero() && !now.Before(r.expiresAt) {
		return expired("expired API key")
	}
	if touch && now.Sub(r.lastUsed) >= v.touchInterval && v.claimTouch(k, now) {
		if err := v.st.TouchAPIKey(ctx, k.project, k.id, now); err != nil && !errors.Is(err, store.ErrNotFound) {
			// Last-used is informational; the request goes on.
			v.logger.WarnContext(ctx, "recording API key use failed", "project", k.project, "key", k.id, "err", err)
		}
	}
	return nil
}

// checkSession refuses a login token whose session is not live at now: an
// unknown session (never started, or pruned after it ended), a revoked one,
// one whose refresh token expired unused or whose lifetime is over, or one
// of another user.
func (v *Verifier) checkSession(ctx context.Context, projectID string, c *Claims, now time.Time, rv *requestVersion) error {
	k := recordKey{projectID, c.SessionID}
	ver, versioned := v.version(ctx, rv) // before the read
	r, ok := sessionRecord{}, false
	if versioned {
		r, ok = v.sesRecs.get(k)
		ok = ok && r.tag == ver
	}
	if !ok {
		f, err := v.st.GetRefreshFamily(ctx, projectID, c.SessionID)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
				return unknownSession()
			}
			return fmt.Errorf("keys: verify: %w", err)
		}
		r = sessionRecord{tag: ver, family: f}
		if versioned {
			v.sesRecs.put(k, r)
		}
	}
	return r.allows(c, now)
}

// allows refuses the login token of claims c unless the session record r
// is its user's and live at now.
func (r sessionRecord) allows(c *Claims, now time.Time) error {
	if r.family.UserID != c.Subject {
		return malformed("session of another user")
	}
	if !r.family.Live(now) {
		return revoked("session ended")
	}
	return nil
}

// claimTouch reports whether this Verifier should write key's last-used
// time now, and notes that it does. Concurrent requests with one key thus
// write once, and the record's LastUsedAt keeps other instances from
// writing again within the interval. The map is bounded: when full, stale
// entries go, and if none are stale it is emptied (costing at most one
// extra write per key).
func (v *Verifier) claimTouch(key recordKey, now time.Time) bool {
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
