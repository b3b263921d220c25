package latchkey

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/latchkey-dev/latchkey/audit"
	"github.com/latchkey-dev/latchkey/console"
	"github.com/latchkey-dev/latchkey/contacts"
	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/internal/checkedlist"
	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/internal/storetrace"
	"github.com/latchkey-dev/latchkey/internal/telemetry"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/revocations"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/tenant"
)

// Options configures a [Latchkey]. A nil *Options and every zero field mean
// the documented default.
type Options struct {
	// Resolver names the project of each request served by
	// [Latchkey.Handler]. Nil means tenant.Fixed(store.DefaultProject).
	Resolver tenant.Resolver
	// Issuer returns the base_url of a project under the deployment's
	// public URL (for example "https://id.example.com/p/acme"): every
	// token minted for the project carries it as iss, and the discovery
	// document names it and the endpoints under it. Latchkey itself never
	// refuses a token for its iss. Nil mints tokens without iss, and the
	// discovery document takes the base_url from each request.
	Issuer func(projectID string) string
	// Logger receives the causes of 5xx answers, refresh-token replays,
	// failed sign-ins and pruning; never a password or a token. Nil means
	// slog.Default().
	Logger *slog.Logger
	// Now returns the current time. Nil means time.Now. It is passed to the
	// parts' options whose own Now is nil.
	Now func() time.Time

	// Keyring tunes the signing keys (package keys). Nil means defaults;
	// its Issuer, Logger, Now and Audit default to the ones here.
	Keyring *keys.KeyringOptions
	// Verifier tunes the bearer-token check. Nil means defaults.
	Verifier *keys.VerifierOptions
	// Hasher tunes password hashing. Nil means defaults.
	Hasher *identity.HasherOptions
	// Limiter throttles failed sign-ins. Nil means
	// identity.NewStoreLimiter on the store with default limits, so that
	// every instance sharing the store throttles as one.
	Limiter identity.Limiter
	// Revocations tunes the revocation feed (the long polls held per API
	// key). Nil means defaults; its Logger defaults to the one here.
	Revocations *revocations.Options
	// Identity tunes login, refresh and logout (refresh-token lifetime,
	// reuse window, session lifetime, client address). Nil means defaults.
	Identity *identity.Options
	// Console tunes the web console (sessions, cookies). Nil means
	// defaults; its Logger, Now and ClientAddr default to the ones above
	// (ClientAddr to Identity.ClientAddr, so that login and console
	// sign-in throttle by the same address).
	Console *console.Options
	// NoConsole serves no console at all: {base_url}/console/ is 404.
	NoConsole bool
	// CORSOrigins are the origins (scheme://host[:port], such as
	// "https://app.example.com") whose pages may call the /v1 API from a
	// browser: for a request from a listed origin, every /v1 endpoint
	// answers CORS preflights (OPTIONS: 204) and sends
	// Access-Control-Allow-Origin with that origin on every answer, errors
	// included; never "*" and never Access-Control-Allow-Credentials, since
	// tokens travel in the Authorization header. Answers of the /v1 paths
	// then carry Vary: Origin. Other origins get no CORS headers. The
	// console never sends CORS headers, and the public documents (key set,
	// discovery, OpenAPI) always allow every origin. Empty means none. New
	// refuses an origin with a path, a query, a user, or "*".
	CORSOrigins []string
	// AuditRetention is how long audit entries are kept. Zero means
	// DefaultAuditRetention.
	AuditRetention time.Duration
	// StoreTimeout bounds the store work of each request served by
	// [Latchkey.Handler]: the request's context gets a deadline
	// StoreTimeout after it starts (after its wait, for a long poll of the
	// revocation feed), one for all of its store calls, so that a store
	// that hangs is answered 503 unavailable with Retry-After within it.
	// Keep it below the server's WriteTimeout, leaving time to write the
	// answer. Zero means DefaultStoreTimeout; a negative value sets no
	// deadline. [Latchkey.Protect] sets none: the host's handler's own
	// work is the host's to bound.
	StoreTimeout time.Duration
	// PruneInterval is how often the store is pruned in the background
	// (see [Latchkey.Prune]). Zero means DefaultPruneInterval; a negative
	// value prunes only when Prune is called.
	PruneInterval time.Duration

	// MeterProvider receives Latchkey's metrics (listed in docs/observability.md:
	// logins, refreshes, replays, revocations, verifications, hash queue
	// wait). It is passed to the parts' options whose own MeterProvider is
	// nil. Nil means the global provider (otel.GetMeterProvider), a no-op
	// until the host installs an SDK.
	MeterProvider metric.MeterProvider
	// TracerProvider receives a span per request served by Handler and
	// Protect, and within it a span per store call. Nil means the global
	// provider (otel.GetTracerProvider).
	TracerProvider trace.TracerProvider
	// Propagator reads the trace context of incoming requests (W3C
	// traceparent, for one), so that a request's span joins its caller's
	// trace. Nil means the global propagator (otel.GetTextMapPropagator),
	// which reads nothing until the host sets one.
	Propagator propagation.TextMapPropagator
}

// Latchkey is the assembled service: the /v1 API, the key set, the
// discovery document, the console, and the services they are built on. It
// is safe for concurrent use. Create it with [New] and Close it when the
// server shuts down.
type Latchkey struct {
	st       store.Store // the host's store, its calls traced (storetrace)
	hostSt   store.Store // the host's store as given, behind store.Check
	logger   *slog.Logger
	now      func() time.Time
	resolver tenant.Resolver

	tracer     trace.Tracer
	propagator propagation.TextMapPropagator

	keyring  *keys.Keyring
	apiKeys  *keys.APIKeys
	verifier *keys.Verifier
	// contactList is GET /v1/contacts' list, whose token check rides
	// with its read.
	contactList *checkedlist.List[store.Contact]
	users       *identity.Users
	feed        *revocations.Feed
	consoleUI   *console.Handler // nil with NoConsole
	cors        *httpapi.CORS    // nil without Options.CORSOrigins

	mux      *http.ServeMux
	allow    map[string]string // path -> the methods the routing table serves there
	projects sync.Map          // project id -> struct{}: projects known to exist

	retention    time.Duration
	storeTimeout time.Duration // <= 0: none
	stop         context.CancelFunc
	stopped      chan struct{}
	closeOnce    sync.Once
}

// New assembles Latchkey on st, with masterKey, the host's secret of
// keys.MasterKeySize (32) random bytes, which seals the projects' private
// signing keys and keys the refresh tokens' MAC. It makes sure that the
// project store.DefaultProject exists and has a signing key, creating them
// if needed, and starts pruning the store in the background (see
// Options.PruneInterval). It panics if st is nil, and returns an error for a
// master key keys.CheckMasterKey refuses, one that does not open the
// store's signing keys (keys.ErrWrongMasterKey: the store was made with
// another key), or a store failure.
//
// Latchkey reads and writes st through the checking layer (store.Check):
// every argument is checked once, before the backend sees it. A host may
// pass a backend as it is opened, or already checked.
//
// st stays the caller's: Close the Latchkey, then the store, after the last
// request is served.
func New(st store.Store, masterKey []byte, opts *Options) (*Latchkey, error) {
	if st == nil {
		panic("latchkey: New with a nil store")
	}
	if err := keys.CheckMasterKey(masterKey); err != nil {
		return nil, fmt.Errorf("latchkey: %w", err)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	cors, err := httpapi.NewCORS(o.CORSOrigins)
	if err != nil {
		return nil, fmt.Errorf("latchkey: Options.CORSOrigins: %w", err)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Resolver == nil {
		o.Resolver = tenant.Fixed(store.DefaultProject)
	}
	if o.AuditRetention <= 0 {
		o.AuditRetention = DefaultAuditRetention
	}
	if o.StoreTimeout == 0 {
		o.StoreTimeout = DefaultStoreTimeout
	}
	tracer := telemetry.Tracer(o.TracerProvider)
	l := &Latchkey{hostSt: store.Check(st), logger: o.Logger, now: o.Now, resolver: o.Resolver, retention: o.AuditRetention,
		storeTimeout: o.StoreTimeout, tracer: tracer, propagator: telemetry.Propagator(o.Propagator), cors: cors}
	// Every part reads the store through the checking layer (store.Check:
	// arguments are checked once, before the backend sees them) over the
	// tracing wrapper: within a traced request, each store call that
	// reaches the backend is a span of its trace.
	// A store given checked already (store.Check) is checked once, above
	// the tracing.
	if c, ok := st.(*store.Checked); ok {
		st = c.Unwrap()
	}
	st = store.Check(storetrace.Wrap(st, tracer))
	l.st = st
	auditLog := audit.New(st, &audit.Options{Now: o.Now, Logger: o.Logger})

	kro := valueOf(o.Keyring)
	kro.Now = orNow(kro.Now, o.Now)
	kro.Logger = orLogger(kro.Logger, o.Logger)
	if kro.Issuer == nil {
		kro.Issuer = o.Issuer
	}
	if kro.Audit == nil {
		kro.Audit = auditLog
	}
	kro.MeterProvider = orMeter(kro.MeterProvider, o.MeterProvider)
	kr, err := keys.NewKeyring(st, masterKey, &kro)
	if err != nil {
		return nil, fmt.Errorf("latchkey: %w", err)
	}
	l.keyring = kr
	l.apiKeys = keys.NewAPIKeys(st, kr, &keys.APIKeysOptions{Now: o.Now, Audit: auditLog, MeterProvider: o.MeterProvider})

	vo := valueOf(o.Verifier)
	vo.Now = orNow(vo.Now, o.Now)
	vo.Logger = orLogger(vo.Logger, o.Logger)
	vo.MeterProvider = orMeter(vo.MeterProvider, o.MeterProvider)
	if vo.ClientAddr == nil && o.Identity != nil {
		// Refused tokens are logged with the address login throttles by.
		vo.ClientAddr = o.Identity.ClientAddr
	}
	l.verifier = keys.NewVerifier(st, &vo)

	ho := valueOf(o.Hasher)
	ho.MeterProvider = orMeter(ho.MeterProvider, o.MeterProvider)
	hasher := identity.NewHasher(&ho)
	l.users = identity.NewUsers(st, hasher, &identity.UsersOptions{Audit: auditLog, Now: o.Now, MeterProvider: o.MeterProvider})
	lim := o.Limiter
	if lim == nil {
		lim = identity.NewStoreLimiter(st, &identity.LimiterOptions{Now: o.Now})
	}
	auth := identity.NewAuthenticator(st, hasher, lim, &identity.AuthOptions{Logger: o.Logger})
	ido := valueOf(o.Identity)
	ido.Now = orNow(ido.Now, o.Now)
	ido.Logger = orLogger(ido.Logger, o.Logger)
	ido.MeterProvider = orMeter(ido.MeterProvider, o.MeterProvider)
	if ido.Audit == nil {
		ido.Audit = auditLog
	}
	ident := identity.NewHandler(identity.Deps{
		Sessions: st, Authenticator: auth, Minter: kr, MasterKey: masterKey,
	}, &ido)

	ro := valueOf(o.Revocations)
	ro.Logger = orLogger(ro.Logger, o.Logger)
	l.feed = revocations.NewFeed(st, &ro)

	if !o.NoConsole {
		co := valueOf(o.Console)
		co.Now = orNow(co.Now, o.Now)
		co.Logger = orLogger(co.Logger, o.Logger)
		if co.ClientAddr == nil {
			co.ClientAddr = ido.ClientAddr
		}
		l.consoleUI = console.New(console.Deps{
			Authenticator: auth,
			APIKeys:       l.apiKeys,
			Keyring:       kr,
			SigningKeys:   st,
			Users:         l.users,
			Sessions:      st,
			AuditLog:      st,
			Audit:         auditLog,
		}, &co)
	}

	// The list of contacts reads the token's records with its page
	// (PostgreSQL, MySQL), or the version the verifier keeps them at
	// (SQLite), in one store call; the routing table (routes.go) mounts
	// its handler behind the list's own bearer check (listAuth).
	l.contactList = checkedlist.Contacts(l.verifier, st)
	l.mux, l.allow = newMux(l.routes(parts{
		identity: ident,
		contacts: contacts.NewHandler(checkedlist.ContactStore(st, l.contactList), &contacts.Options{Logger: o.Logger}),
	}))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.EnsureProject(ctx, store.DefaultProject); err != nil {
		return nil, err
	}
	if err := kr.CheckUnseal(ctx, store.DefaultProject); err != nil {
		return nil, fmt.Errorf("latchkey: %w", err)
	}
	l.startPruning(o.PruneInterval)
	return l, nil
}

// DefaultStoreTimeout is Options.StoreTimeout when it is zero: within the
// example server's 30-second WriteTimeout, with time left to write the
// answer, and past the PostgreSQL store's own 10-second wait for a
// connection.
const DefaultStoreTimeout = 20 * time.Second

// valueOf returns *p, or the zero T for a nil p.
func valueOf[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// orNow returns f, or def when f is nil.
func orNow(f, def func() time.Time) func() time.Time {
	if f == nil {
		return def
	}
	return f
}

// orMeter returns mp, or def when mp is nil.
func orMeter(mp, def metric.MeterProvider) metric.MeterProvider {
	if mp == nil {
		return def
	}
	return mp
}

// orLogger returns l, or def when l is nil.
func orLogger(l, def *slog.Logger) *slog.Logger {
	if l == nil {
		return def
	}
	return l
}

// Close stops the background pruning and makes the revocation feed's
// waiting requests answer at once, so that a server can shut down without
// waiting for long polls (call it from http.Server.RegisterOnShutdown, or
// after Shutdown). It does not close the store. Calling it twice is fine.
func (l *Latchkey) Close() error {
	l.closeOnce.Do(func() {
		l.feed.Stop()
		l.stop()
		<-l.stopped
	})
	return nil
}

// Store returns the store Latchkey was built on, behind the checking layer
// (store.Check; the store as given when it is a *store.Checked): its calls
// are not traced, and their arguments are checked as Latchkey's own are.
func (l *Latchkey) Store() store.Store { return l.hostSt }

// Keyring returns the keyring of the projects' signing keys: rotation,
// retirement, minting.
func (l *Latchkey) Keyring() *keys.Keyring { return l.keyring }

// APIKeys returns the permanent API keys: create, list, revoke.
func (l *Latchkey) APIKeys() *keys.APIKeys { return l.apiKeys }

// Users returns the project users: create, list, set tags and passwords,
// disable and enable.
func (l *Latchkey) Users() *identity.Users { return l.users }

// Verifier returns the bearer-token verifier that guards the /v1 API; its
// Middleware can guard a host's own routes too.
func (l *Latchkey) Verifier() *keys.Verifier { return l.verifier }
