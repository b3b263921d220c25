package identity

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/latchkey-dev/latchkey/audit"
	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

// TokenMinter mints the access token (a login JWT) of a user in a session.
// *keys.Keyring implements it.
type TokenMinter interface {
	// MintLoginToken returns a signed access token for u in project
	// projectID, bound to the session sessionID, and when it expires.
	MintLoginToken(ctx context.Context, projectID string, u store.User, sessionID string) (token string, expiresAt time.Time, err error)
}

// Session and refresh-token defaults.
const (
	// DefaultRefreshTTL is how long a refresh token is valid after it is
	// issued; a session whose refresh token expires unused ends.
	DefaultRefreshTTL = 30 * 24 * time.Hour
	// DefaultReuseWindow is how long after its first use a refresh token
	// presented again still gets the same successor.
	DefaultReuseWindow = 10 * time.Second
	// DefaultSessionLifetime is how long after login a session ends,
	// however often it is refreshed.
	DefaultSessionLifetime = 90 * 24 * time.Hour
)

// Deps are what a Handler works with. Every field is required.
type Deps struct {
	// Sessions keeps the refresh families (sessions); a rotation returns
	// the session's user with it.
	Sessions store.RefreshStore
	// Authenticator checks login's email and password.
	Authenticator *Authenticator
	// Minter mints the access tokens (a *keys.Keyring).
	Minter TokenMinter
	// MasterKey is the host's master key (keys.CheckMasterKey must accept
	// it); the refresh-token MAC key is derived from it.
	MasterKey []byte
}

// Options configure a Handler. The zero value means the defaults.
type Options struct {
	// RefreshTTL is the lifetime of each refresh token, counted from its
	// issue. Zero means DefaultRefreshTTL.
	RefreshTTL time.Duration
	// ReuseWindow is how long after a refresh token was first exchanged it
	// may be presented again and get the same successor (two tabs
	// refreshing at once, a retry after a lost response). Later, it is a
	// replay and its session ends. Zero means DefaultReuseWindow; to make
	// every reuse a replay, set NoReuseWindow (a negative value does the
	// same).
	ReuseWindow time.Duration
	// NoReuseWindow makes every reuse of a refresh token a replay,
	// whatever ReuseWindow says.
	NoReuseWindow bool
	// SessionLifetime is how long after login a session ends, however often
	// it is refreshed. Zero means DefaultSessionLifetime.
	SessionLifetime time.Duration
	// ClientAddr returns the client address a request is throttled by and
	// logged with. Nil means the host part of r.RemoteAddr. Set it to read
	// a proxy header (X-Forwarded-For, Forwarded) only when a trusted proxy
	// in front of the server sets that header; otherwise clients choose
	// their own address and escape throttling.
	ClientAddr func(r *http.Request) string
	// Audit records logouts and refresh-token replays. Nil records
	// nothing.
	Audit *audit.Log
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// Logger receives errors and refresh-token replays. Nil means
	// slog.Default().
	Logger *slog.Logger
	// MeterProvider receives the counters latchkey.logins (by result:
	// success, failure, throttled, error), latchkey.refreshes (by result:
	// success, reused, invalid, error), latchkey.refresh_replays and
	// latchkey.revocations (kind=session, for logouts and replays). Nil
	// means the global provider (otel.GetMeterProvider).
	MeterProvider metric.MeterProvider
}

// Handler serves the session endpoints of a project: login, refresh and
// logout, each an http.Handler for the routing table to mount. Each reads
// the project from the request context (package tenant).
type Handler struct {
	sessions store.RefreshStore
	auth     *Authenticator
	minter   TokenMinter
	codec    refreshCodec
	ttl      time.Duration
	reuse    time.Duration
	lifetime time.Duration
	addr     func(*http.Request) string
	audit    *audit.Log
	now      func() time.Time
	log      *slog.Logger
	metrics  handlerMetrics
}

// NewHandler returns a Handler. It panics if a field of deps is nil or the
// master key is one keys.CheckMasterKey refuses.
func NewHandler(deps Deps, opts *Options) *Handler {
	if deps.Sessions == nil || deps.Authenticator == nil || deps.Minter == nil {
		panic("identity: NewHandler needs every field of Deps")
	}
	if err := keys.CheckMasterKey(deps.MasterKey); err != nil {
		panic("identity: NewHandler: " + err.Error())
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.RefreshTTL <= 0 {
		o.RefreshTTL = DefaultRefreshTTL
	}
	switch {
	case o.NoReuseWindow || o.ReuseWindow < 0:
		o.ReuseWindow = 0
	case o.ReuseWindow == 0:
		o.ReuseWindow = DefaultReuseWindow
	}
	if o.SessionLifetime <= 0 {
		o.SessionLifetime = DefaultSessionLifetime
	}
	if o.ClientAddr == nil {
		o.ClientAddr = httpapi.RemoteHost
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Handler{
		sessions: deps.Sessions, auth: deps.Authenticator, minter: deps.Minter,
		codec: newRefreshCodec(deps.MasterKey),
		ttl:   o.RefreshTTL, reuse: o.ReuseWindow, lifetime: o.SessionLifetime,
		addr: o.ClientAddr, audit: o.Audit, now: o.Now, log: o.Logger,
		metrics: newHandlerMetrics(o.MeterProvider),
	}
}

// tokenSet is the 200 body of login and refresh.
type tokenSet struct {
	AccessToken  string   `json:"access_token"`
	RefreshToken string   `json:"refresh_token"`
	ExpiresIn    int64    `json:"expires_in"`
	User         userJSON `json:"user"`
}

type userJSON struct {
	ID    string   `json:"id"`
	Email string   `json:"email"`
	Tags  []string `json:"tags"`
}

// writeTokens writes the token set. expires_in is the access token's
// lifetime, keys.LoginTokenTTL, as OAuth 2.0 (RFC 6749) defines it; it is
// not recomputed from the minter's expiry, which is in whole seconds and
// would make it jitter by one.
func writeTokens(w http.ResponseWriter, u store.User, access, refreshToken string) error {
	tags := u.Tags
	if tags == nil {
		tags = []string{}
	}
	return httpapi.WriteJSON(w, http.StatusOK, tokenSet{
		AccessToken:  access,
		RefreshToken: refreshToken,
		ExpiresIn:    int64(keys.LoginTokenTTL / time.Second),
		User:         userJSON{ID: u.ID, Email: u.Email, Tags: tags},
	})
}
