package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/latchkey-dev/latchkey/keys"
)

// Defaults of [Options].
const (
	// DefaultWait is the long poll of the feed: how long Latchkey holds a
	// read of the feed that has nothing new. A verifier at rest costs
	// Latchkey one request per DefaultWait.
	DefaultWait = 10 * time.Second
	// DefaultStaleAfter is how long the feed may go unread before Verify
	// refuses every token. It equals keys.DefaultLeeway: a verifier is
	// never more behind on revocations than tokens are allowed to be late
	// on their expiry, while a restart of Latchkey of up to
	// DefaultStaleAfter - DefaultWait (20 s) refuses nothing.
	DefaultStaleAfter = 30 * time.Second
	// DefaultCacheSize bounds the cache of verified tokens.
	DefaultCacheSize = 10000
	// DefaultKeyRefetchInterval is the least time between two reads of
	// the key set caused by unknown kids.
	DefaultKeyRefetchInterval = time.Second
)

// Options tunes a [Verifier]. A nil *Options and every zero field mean the
// documented default.
type Options struct {
	// Client sends every request to Latchkey. Nil means a client of its
	// own with Go's default transport. The verifier bounds each request
	// with a deadline of its own; a Client.Timeout, if set, must exceed
	// Wait + 5 s, or the long polls would always fail.
	Client *http.Client
	// Logger receives the feed's failures, the start and end of a stale
	// spell, and the middleware's refusals (Info, with a reason, never a
	// token). Nil means slog.Default().
	Logger *slog.Logger
	// Now returns the current time, against which exp, nbf and iat are
	// checked and session and user items are forgotten. Nil means
	// time.Now. Staleness, backoff and the key set's rate limit use the
	// monotonic clock whatever Now says.
	Now func() time.Time
	// Leeway is the clock skew allowed on exp, nbf and iat, as
	// keys.ParseOptions.Leeway: zero means keys.DefaultLeeway (30 s), a
	// negative value none, at most keys.MaxLeeway (60 s).
	Leeway time.Duration
	// Project is the project whose tokens are accepted. "" means the
	// audience of the API key, verified with the key set; when set, the
	// API key must be of this project.
	Project string
	// Wait is the long poll of the feed, in whole seconds from 1 s to
	// 60 s. Zero means DefaultWait.
	Wait time.Duration
	// StaleAfter is the fail-closed bound: when the feed has not been read
	// successfully for longer than this, Verify refuses every token with
	// ErrStale until it is. It must exceed Wait. Zero means
	// DefaultStaleAfter.
	StaleAfter time.Duration
	// CacheSize bounds the cache of verified tokens, keyed by their
	// SHA-256. Zero means DefaultCacheSize; a negative value disables the
	// cache, so that every Verify checks the signature.
	CacheSize int
	// KeyRefetchInterval is the least time between two reads of the key
	// set caused by tokens whose kid it does not name. Zero means
	// DefaultKeyRefetchInterval.
	KeyRefetchInterval time.Duration
}

// Verifier verifies the tokens of one Latchkey project in another service,
// without a request to Latchkey per token. It is safe for concurrent use.
// Create it with [New]; Close it when done.
type Verifier struct {
	issuer  string // the base_url, the discovery document's issuer
	project string
	apiKey  string
	jwksURL string
	feedURL string

	client     *http.Client
	logger     *slog.Logger
	now        func() time.Time
	leeway     time.Duration // as applied: DefaultLeeway, 0 or at most MaxLeeway
	parseOpts  keys.ParseOptions
	wait       time.Duration
	staleAfter time.Duration
	maxBackoff time.Duration
	// forgetAfter is how long after its revoked_at a session or user item
	// is kept: a login token's lifetime, plus the leeway on its exp, plus
	// keys.MaxLeeway for a token minted a moment after its session ended.
	forgetAfter time.Duration

	cache *lru.Cache[[32]byte, *keys.Claims] // nil: no cache

	keys            atomic.Pointer[keySet]
	keyReadSem      chan struct{} // held while the key set is read again
	keyReads        atomic.Uint64 // reads of the key set started
	lastKeyRead     time.Time     // guarded by keyReadSem
	keyRefetchEvery time.Duration

	revoked *revokedSet

	// Owned by the feed loop (and New before it starts).
	cursor    string
	lastPrune time.Time
	// pause is how long the feed loop waits before its next long poll:
	// the Retry-After of an empty page answered without waiting (the
	// feed's cap of long polls per API key), else zero.
	pause time.Duration

	epoch       time.Time    // the monotonic origin of lastRead
	lastRead    atomic.Int64 // time.Since(epoch) at the last successful read of the feed
	lastErr     atomic.Pointer[string]
	staleLogged atomic.Bool
	staleTimer  *time.Timer

	closed    atomic.Bool
	stop      context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

// New returns a verifier of the tokens of the Latchkey project served at
// baseURL (its base_url, the iss of its tokens), which reads the
// revocation feed with apiKey, a permanent API key of the project. Before it
// returns, it:
//
//  1. reads {baseURL}/.well-known/openid-configuration and checks that its
//     issuer is baseURL (a trailing slash aside) and that the key set and
//     the feed are under it;
//  2. reads the key set (jwks_uri);
//  3. learns the project: the audience of apiKey, whose signature it checks
//     with the key set (or Options.Project, which apiKey must then be of);
//  4. reads the whole revocation feed, so that the first Verify already
//     knows every revocation made before New was called.
//
// It then follows the feed in the background (long polls of Options.Wait;
// after a failure, again from the same cursor with an exponential backoff
// of 100 ms up to 5 s) until Close. ctx bounds New only. New returns an
// error, and starts nothing, for a bad argument or when any step fails.
func New(ctx context.Context, baseURL, apiKey string, opts *Options) (*Verifier, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	issuer, err := checkBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	if apiKey == "" || len(apiKey) > keys.MaxTokenBytes {
		return nil, errors.New("remote: the API key is empty or too long")
	}
	if err := normalize(&o); err != nil {
		return nil, err
	}
	v := &Verifier{
		issuer:          issuer,
		apiKey:          apiKey,
		client:          o.Client,
		logger:          o.Logger,
		now:             o.Now,
		leeway:          keys.LeewayOf(o.Leeway),
		wait:            o.Wait,
		staleAfter:      o.StaleAfter,
		maxBackoff:      min(maxBackoff, o.StaleAfter/4),
		keyReadSem:      make(chan struct{}, 1),
		keyRefetchEvery: o.KeyRefetchInterval,
		revoked:         newRevokedSet(),
		epoch:           time.Now(),
		done:            make(chan struct{}),
	}
	v.forgetAfter = keys.LoginTokenTTL + v.leeway + keys.MaxLeeway
	v.parseOpts = keys.ParseOptions{Now: o.Now, Leeway: o.Leeway, Issuer: issuer}
	if o.CacheSize > 0 {
		v.cache, err = lru.New[[32]byte, *keys.Claims](o.CacheSize)
		if err != nil {
			return nil, fmt.Errorf("remote: %w", err)
		}
	}

	fctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	if err := v.discover(fctx); err != nil {
		return nil, err
	}
	set, err := v.fetchKeys(fctx)
	if err != nil {
		return nil, err
	}
	v.keys.Store(&keySet{keys: set})
	v.lastKeyRead = time.Now()
	if v.project, err = v.projectOf(ctx, o.Project); err != nil {
		return nil, err
	}
	v.lastPrune = v.now()
	v.staleTimer = time.AfterFunc(v.staleAfter+time.Millisecond, v.noteStale)
	if err := v.catchUp(ctx); err != nil {
		v.closed.Store(true)
		v.staleTimer.Stop()
		return nil, err
	}

	lctx, stop := context.WithCancel(context.Background())
	v.stop = stop
	go v.follow(lctx)
	return v, nil
}

// normalize checks o and fills in its defaults.
func normalize(o *Options) error {
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Wait == 0 {
		o.Wait = DefaultWait
	}
	if o.StaleAfter == 0 {
		o.StaleAfter = DefaultStaleAfter
	}
	if o.CacheSize == 0 {
		o.CacheSize = DefaultCacheSize
	}
	if o.KeyRefetchInterval == 0 {
		o.KeyRefetchInterval = DefaultKeyRefetchInterval
	}
	switch {
	case o.Wait < time.Second || o.Wait > 60*time.Second || o.Wait%time.Second != 0:
		return fmt.Errorf("remote: Options.Wait is %s; it must be whole seconds from 1s to 60s", o.Wait)
	case o.StaleAfter <= o.Wait:
		return fmt.Errorf("remote: Options.StaleAfter (%s) must exceed Options.Wait (%s)", o.StaleAfter, o.Wait)
	case o.KeyRefetchInterval < 0:
		return errors.New("remote: Options.KeyRefetchInterval must not be negative")
	case o.Client.Timeout > 0 && o.Client.Timeout <= o.Wait+pollGrace:
		return fmt.Errorf("remote: Options.Client.Timeout (%s) must exceed Options.Wait + %s", o.Client.Timeout, pollGrace)
	}
	return nil
}

// projectOf returns the project of the API key: its audience, after
// keys.Parse has checked its signature with the key set, its shape (a
// permanent API key) and its time. want, when set, is the project it must
// be of. The key's iss is not required (keys made on the command line may
// lack one), but must be the issuer when present.
func (v *Verifier) projectOf(ctx context.Context, want string) (string, error) {
	aud := want
	if aud == "" {
		var rc jwt.RegisteredClaims
		if _, _, err := jwt.NewParser().ParseUnverified(v.apiKey, &rc); err != nil || len(rc.Audience) != 1 {
			return "", errors.New("remote: the API key is not a Latchkey token")
		}
		aud = rc.Audience[0]
	}
	opts := v.parseOpts
	opts.Issuer = ""
	c, err := keys.Parse(v.apiKey, aud, v.keyFunc(ctx), &opts)
	switch {
	case err != nil:
		return "", fmt.Errorf("remote: the API key is not valid for project %q: %s", aud, keys.ReasonOf(err))
	case c.Kind() != keys.KindAPIKey:
		return "", errors.New("remote: the API key is a login token; the revocation feed needs a permanent API key")
	case c.Issuer != "" && c.Issuer != v.issuer:
		return "", fmt.Errorf("remote: the API key was issued by %q, not %q", c.Issuer, v.issuer)
	}
	return aud, nil
}

// Project returns the id of the project whose tokens v accepts.
func (v *Verifier) Project() string { return v.project }

// Issuer returns the issuer (base_url) whose tokens v accepts.
func (v *Verifier) Issuer() string { return v.issuer }

// Verify checks token and returns its claims, which are shared and must not
// be modified. A token is accepted when:
//
//   - keys.Parse accepts it for the project, with the discovery document's
//     issuer as the only iss: a signature by a key of the key set, the
//     shape of a Latchkey token, exp, nbf and iat give or take the leeway;
//   - no item of the revocation feed applies to it: its signing key
//     retired, its API key revoked, its session ended, or its user
//     disabled at or after its iat.
//
// A refusal matches keys.ErrInvalidToken and one reason
// (keys.ErrTokenMalformed, ErrTokenExpired, ErrTokenRevoked,
// ErrSigningKeyRetired, ErrWrongProject); [ReasonOf] gives a loggable
// phrase. Verify makes no request to Latchkey, but for a kid the key set
// does not name (see Options.KeyRefetchInterval). When the feed has not
// been read for longer than Options.StaleAfter it refuses every token with
// an error matching ErrStale, and after Close with ErrClosed.
//
// A token verified before is found in a bounded cache by its SHA-256 and
// is not decoded or its signature checked again; its time, its signing key
// and the revocations are checked on every call.
func (v *Verifier) Verify(ctx context.Context, token string) (*keys.Claims, error) {
	if v.closed.Load() {
		return nil, ErrClosed
	}
	if err := v.fresh(); err != nil {
		return nil, err
	}
	if token == "" {
		return nil, keys.Refuse(keys.ErrTokenMalformed, "empty token")
	}
	if len(token) > keys.MaxTokenBytes {
		return nil, keys.Refuse(keys.ErrTokenMalformed, "token too large")
	}
	sum := keys.TokenKey(token)
	var c *keys.Claims
	hit := false
	if v.cache != nil {
		c, hit = v.cache.Get(sum)
	}
	if hit {
		if err := c.CheckTime(v.now(), v.leeway); err != nil {
			if errors.Is(err, keys.ErrTokenExpired) {
				v.cache.Remove(sum)
			}
			return nil, err
		}
		if _, ok := v.keys.Load().keys[c.KeyID]; !ok {
			// The key set read since no longer names the key: it was
			// retired.
			return nil, keys.Refuse(keys.ErrSigningKeyRetired, "retired signing key")
		}
	} else {
		var err error
		c, err = keys.Parse(token, v.project, v.keyFunc(ctx), &v.parseOpts)
		if err != nil {
			return nil, err
		}
		if v.cache != nil {
			v.cache.Add(sum, c)
		}
	}
	if err := v.revoked.check(c, v.leeway); err != nil {
		return nil, err
	}
	return c, nil
}

// Close stops following the feed and waits for the loop to end; Verify
// then returns ErrClosed. Calling it twice is fine.
func (v *Verifier) Close() error {
	v.closeOnce.Do(func() {
		v.closed.Store(true)
		v.stop()
		<-v.done
		v.staleTimer.Stop()
	})
	return nil
}
