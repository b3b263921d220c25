package latchkey

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/latchkey-dev/latchkey/contacts"
	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/keys/console"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/tenant"
)

// Options configures a [Latchkey]. A nil *Options and every zero field mean
// the documented default.
type Options struct {
	// Resolver names the project of each request served by
	// [Latchkey.Handler]. Nil means tenant.Fixed(store.DefaultProject).
	// [Latchkey.PathHandler] ignores it.
	Resolver tenant.Resolver
	// Logger receives the causes of 500 answers, refresh-token replays and
	// failed sign-ins; never a password or a token. Nil means
	// slog.Default().
	Logger *slog.Logger
	// Now returns the current time. Nil means time.Now. It is passed to the
	// sub-options below whose own Now is nil.
	Now func() time.Time

	// Keyring tunes the signing keys (package keys). Nil means defaults.
	Keyring *keys.KeyringOptions
	// APIKeys tunes the permanent API keys. Nil means defaults.
	APIKeys *keys.APIKeysOptions
	// Verifier tunes the bearer-token check. Nil means defaults.
	Verifier *keys.VerifierOptions
	// Hasher tunes password hashing. Nil means defaults.
	Hasher *identity.HasherOptions
	// Limiter throttles failed sign-ins. Nil means
	// identity.NewStoreLimiter on the store with default limits, so that
	// every instance sharing the store throttles as one.
	Limiter identity.Limiter
	// Identity tunes login and refresh (refresh-token lifetime, reuse
	// window, client address). Nil means defaults.
	Identity *identity.Options

	// ConsoleOptions tunes the web console (sessions, cookies, client
	// address). Nil means defaults; its Logger and Now default to the ones
	// above, and its ClientAddr to Identity.ClientAddr, so that login and
	// console sign-in throttle by the same address.
	ConsoleOptions *console.Options
	// Console, if set, replaces the web console: it is called once by [New]
	// with the assembled Latchkey and returns the handler served for the
	// resolved project at {base_url}/console/ (the project is in the
	// request's context, read with tenant.FromContext; paths it sees start
	// with /console/). Nil serves the console of package keys/console.
	Console func(l *Latchkey) http.Handler
	// NoConsole serves no console at all: /console/ is 404.
	NoConsole bool
}

// Latchkey is the assembled service: the /v1 API, the key set, and the
// administrative operations of the example server's command line. Create
// it with [New]. It is safe for concurrent use.
type Latchkey struct {
	st       store.Store
	logger   *slog.Logger
	now      func() time.Time
	resolver tenant.Resolver

	keyring  *keys.Keyring
	apiKeys  *keys.APIKeys
	verifier *keys.Verifier
	hasher   *identity.Hasher
	auth     *identity.Authenticator

	mux      *http.ServeMux
	projects sync.Map // project id -> struct{}: projects known to exist
}

// New assembles Latchkey on st, sealing signing keys under masterKey (32
// bytes, see keys.MasterKeySize). It makes sure that the project
// store.DefaultProject exists and has a signing key, creating them if
// needed; it changes nothing else in st. It panics if st is nil, and
// returns an error for a master key of the wrong size or a store failure.
//
// st stays the caller's: close it after the last request is served.
func New(st store.Store, masterKey []byte, opts *Options) (*Latchkey, error) {
	if st == nil {
		panic("latchkey: New with a nil store")
	}
	var o Options
	if opts != nil {
		o = *opts
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
	l := &Latchkey{st: st, logger: o.Logger, now: o.Now, resolver: o.Resolver}

	kro := keys.KeyringOptions{}
	if o.Keyring != nil {
		kro = *o.Keyring
	}
	kro.Now = orNow(kro.Now, o.Now)
	if kro.Logger == nil {
		kro.Logger = o.Logger
	}
	kr, err := keys.NewKeyring(st, masterKey, &kro)
	if err != nil {
		return nil, fmt.Errorf("latchkey: %w", err)
	}
	l.keyring = kr

	ako := keys.APIKeysOptions{}
	if o.APIKeys != nil {
		ako = *o.APIKeys
	}
	ako.Now = orNow(ako.Now, o.Now)
	l.apiKeys = keys.NewAPIKeys(st, kr, &ako)

	vo := keys.VerifierOptions{}
	if o.Verifier != nil {
		vo = *o.Verifier
	}
	vo.Now = orNow(vo.Now, o.Now)
	if vo.Logger == nil {
		vo.Logger = o.Logger
	}
	l.verifier = keys.NewVerifier(st, st, &vo)

	l.hasher = identity.NewHasher(o.Hasher)
	lim := o.Limiter
	if lim == nil {
		lim = identity.NewStoreLimiter(st, &identity.LimiterOptions{Now: o.Now})
	}
	l.auth = identity.NewAuthenticator(st, l.hasher, lim, &identity.AuthOptions{Logger: o.Logger})

	ido := identity.Options{}
	if o.Identity != nil {
		ido = *o.Identity
	}
	ido.Now = orNow(ido.Now, o.Now)
	if ido.Logger == nil {
		ido.Logger = o.Logger
	}
	ident := identity.NewHandler(st, st, l.auth, kr, masterKey, &ido)

	var consoleHandler http.Handler
	switch {
	case o.NoConsole:
	case o.Console != nil:
		consoleHandler = o.Console(l)
	default:
		consoleHandler = l.defaultConsole(o.ConsoleOptions, ido.ClientAddr)
	}
	l.mux = newMux(ident, kr.JWKSHandler(), l.verifier.Middleware(contacts.NewHandler(st, &contacts.Options{Logger: o.Logger})), consoleHandler)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.EnsureProject(ctx, store.DefaultProject); err != nil {
		return nil, err
	}
	return l, nil
}

// defaultConsole returns the web console of package keys/console on l's
// parts: the same authenticator (password check, enumeration defence and
// throttling) as login, the API keys, the keyring and the store.
func (l *Latchkey) defaultConsole(opts *console.Options, clientAddr func(*http.Request) string) http.Handler {
	co := console.Options{}
	if opts != nil {
		co = *opts
	}
	if co.Logger == nil {
		co.Logger = l.logger
	}
	co.Now = orNow(co.Now, l.now)
	if co.ClientAddr == nil {
		co.ClientAddr = clientAddr
	}
	return console.New(console.Deps{
		Authenticator: l.auth,
		APIKeys:       l.apiKeys,
		Keyring:       l.keyring,
		SigningKeys:   l.st,
		Users:         l.st,
	}, &co)
}

// orNow returns f, or def when f is nil.
func orNow(f, def func() time.Time) func() time.Time {
	if f == nil {
		return def
	}
	return f
}

// Store returns the store Latchkey was built on.
func (l *Latchkey) Store() store.Store { return l.st }

// Keyring returns the keyring of the projects' signing keys.
func (l *Latchkey) Keyring() *keys.Keyring { return l.keyring }

// APIKeys returns the permanent API keys service.
func (l *Latchkey) APIKeys() *keys.APIKeys { return l.apiKeys }

// Verifier returns the bearer-token verifier that guards the /v1 API.
func (l *Latchkey) Verifier() *keys.Verifier { return l.verifier }

// Authenticator returns the email-and-password check shared by login and
// the console's sign-in.
func (l *Latchkey) Authenticator() *identity.Authenticator { return l.auth }

// Hasher returns the password hasher.
func (l *Latchkey) Hasher() *identity.Hasher { return l.hasher }

// Logger returns the logger of Options.Logger (or slog.Default()).
func (l *Latchkey) Logger() *slog.Logger { return l.logger }

// errNoSuchProject is the answer for a project that does not exist.
var errNoSuchProject = errors.New("latchkey: no such project")
