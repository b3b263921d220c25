package console

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/latchkey-dev/latchkey/audit"
	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// AdminTag is the tag a project user needs to sign in to the console.
const AdminTag = "admin"

// Session defaults.
const (
	// DefaultIdleTimeout ends a session after this long without a request.
	DefaultIdleTimeout = 30 * time.Minute
	// DefaultMaxLifetime ends a session this long after sign-in, however
	// busy it is.
	DefaultMaxLifetime = 12 * time.Hour
)

// maxFormBytes bounds the body of a console form.
const maxFormBytes = 64 << 10

// Authenticator checks a project user's email and password, with the
// throttling and enumeration defences of POST /v1/identity/login.
// *identity.Authenticator implements it. Authenticate returns an error
// matching identity.ErrInvalidCredentials for a wrong email or password and
// a *identity.RateLimitedError when the attempt is throttled.
type Authenticator interface {
	Authenticate(ctx context.Context, projectID, email, password, clientAddr string) (store.User, error)
}

// APIKeyManager creates, lists and revokes a project's permanent API keys.
// *keys.APIKeys implements it. Create returns an error matching
// keys.ErrInvalidName for a name it refuses; Revoke one matching
// store.ErrNotFound for an unknown key. ActiveSignedBy counts the keys that
// are not revoked and were signed by the signing key kid.
type APIKeyManager interface {
	Create(ctx context.Context, projectID, name string) (store.APIKey, string, error)
	// CreateKey creates a key with scopes and an expiry; its errors match
	// keys.ErrInvalidName, keys.ErrInvalidScope or keys.ErrInvalidDuration
	// for what it refuses.
	CreateKey(ctx context.Context, projectID string, nk keys.NewKey) (store.APIKey, string, error)
	// Roll replaces a key by a successor and schedules the old key's
	// revocation overlap from now (see keys.APIKeys.Roll).
	Roll(ctx context.Context, projectID, id string, overlap time.Duration) (old, next store.APIKey, token string, err error)
	List(ctx context.Context, projectID string) ([]store.APIKey, error)
	// ListPage pages the keys whose name starts with a prefix.
	ListPage(ctx context.Context, projectID, namePrefix string, req paginate.Request) (paginate.Page[store.APIKey], error)
	Revoke(ctx context.Context, projectID, id string) error
	ActiveSignedBy(ctx context.Context, projectID, kid string) (int, error)
}

// SigningKeyManager rotates and retires a project's signing keys.
// *keys.Keyring implements it. RotateTo makes a key of the algorithm alg
// (EdDSA, ES256 or RS256; "" keeps the active key's) and returns an error
// matching store.ErrInvalid for another. Retire returns an error matching
// store.ErrConflict for the active key and store.ErrNotFound for an unknown
// one.
type SigningKeyManager interface {
	RotateTo(ctx context.Context, projectID, alg string) (store.SigningKey, error)
	Retire(ctx context.Context, projectID, kid string) error
}

// SigningKeyLister lists a project's signing keys, retired ones included,
// oldest first. Every store.SigningKeyStore implements it.
type SigningKeyLister interface {
	ListSigningKeys(ctx context.Context, projectID string) ([]store.SigningKey, error)
}

// UserManager finds, lists, creates and changes a project's users, and
// records each change in the audit log by the actor of the context.
// *identity.Users implements it. Get and GetByEmail return an error
// matching store.ErrNotFound for an unknown user; List lists oldest first,
// by the rules of package paginate, the users whose email starts with
// emailPrefix case-insensitively; Create returns an error matching
// store.ErrInvalid for an email, tags or password it refuses and
// store.ErrConflict for an email the project has; SetTags returns one
// matching store.ErrInvalid for tags store.CheckTags refuses;
// ResetPassword one matching store.ErrInvalid for a password it refuses,
// and otherwise ends every session of the user at once, as Disable does.
type UserManager interface {
	Get(ctx context.Context, projectID, id string) (store.User, error)
	GetByEmail(ctx context.Context, projectID, email string) (store.User, error)
	List(ctx context.Context, projectID, emailPrefix string, req paginate.Request) (paginate.Page[store.User], error)
	Create(ctx context.Context, projectID, email, password string, tags []string) (store.User, error)
	SetTags(ctx context.Context, projectID, id string, tags []string) error
	ResetPassword(ctx context.Context, projectID, id, password string) (store.User, error)
	Disable(ctx context.Context, projectID, id string) (store.User, error)
	Enable(ctx context.Context, projectID, id string) (store.User, error)
}

// AuditLister lists a project's audit log, newest first. Every
// store.AuditStore implements it.
type AuditLister interface {
	ListAudit(ctx context.Context, projectID string, f store.AuditFilter, req paginate.Request) (paginate.Page[store.AuditEntry], error)
}

// Deps are what the console works with. Every field is required.
type Deps struct {
	// Authenticator checks sign-ins; use the one login uses, so that both
	// share throttling.
	Authenticator Authenticator
	// APIKeys creates, lists and revokes the permanent API keys.
	APIKeys APIKeyManager
	// Keyring rotates and retires signing keys.
	Keyring SigningKeyManager
	// SigningKeys lists signing keys (usually the store).
	SigningKeys SigningKeyLister
	// Users administers the project's users (usually *identity.Users). The
	// signed-in user is looked up on every request, so that one who is
	// disabled or loses the admin tag is out at once.
	Users UserManager
	// Sessions keeps the console's sessions (usually the store), so that
	// every instance serving the console on the same store knows them.
	Sessions store.ConsoleSessionStore
	// AuditLog lists the audit log (usually the store).
	AuditLog AuditLister
	// Audit records the console's sign-ins, failed sign-ins and sign-outs.
	// Give it the store that AuditLog reads.
	Audit *audit.Log
}

// Options tunes a Handler. A nil *Options and every zero field mean the
// documented default.
type Options struct {
	// Logger receives sign-ins, sign-outs, key creations, revocations,
	// rotations, retirements and user changes at Info, and internal errors
	// at Error; never a password, a token or a session secret. Nil means
	// slog.Default().
	Logger *slog.Logger
	// Now returns the current time, for session expiry. Nil means
	// time.Now.
	Now func() time.Time
	// IdleTimeout ends a session after this long without a request. Zero
	// means DefaultIdleTimeout (30 minutes). A session's last use is
	// stored at most once a minute, so a session can end up to a minute
	// sooner than IdleTimeout after its last request.
	IdleTimeout time.Duration
	// MaxLifetime ends a session this long after sign-in. Zero means
	// DefaultMaxLifetime (12 hours).
	MaxLifetime time.Duration
	// ClientAddr returns the client address that sign-ins are throttled by
	// and that the audit log records. Nil means the host of r.RemoteAddr.
	// Use the same function as the login endpoint
	// (identity.Options.ClientAddr), and read a proxy header only behind a
	// proxy that sets it.
	ClientAddr func(r *http.Request) string
	// SecureCookies makes cookies Secure, with the __Host- prefix, even on
	// requests that did not arrive over TLS: set it behind a proxy that
	// terminates TLS. Requests with r.TLS set always get Secure cookies.
	SecureCookies bool
}

// Handler is the console: its pages, which a routing table serves from
// [Handler.Routes]. Create it with [New]. It is safe for concurrent use.
type Handler struct {
	deps     Deps
	log      *slog.Logger
	now      func() time.Time
	addr     func(r *http.Request) string
	secure   bool
	idle     time.Duration
	lifetime time.Duration
	pages    *pages
	static   *staticFiles
	cop      *http.CrossOriginProtection
}

// New returns the console. It panics if a field of deps is nil.
func New(deps Deps, opts *Options) *Handler {
	if deps.Authenticator == nil || deps.APIKeys == nil || deps.Keyring == nil || deps.SigningKeys == nil ||
		deps.Users == nil || deps.Sessions == nil || deps.AuditLog == nil || deps.Audit == nil {
		panic("console: New needs every field of Deps")
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
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxLifetime <= 0 {
		o.MaxLifetime = DefaultMaxLifetime
	}
	if o.ClientAddr == nil {
		o.ClientAddr = httpapi.RemoteHost
	}
	h := &Handler{
		deps:     deps,
		log:      o.Logger,
		now:      o.Now,
		addr:     o.ClientAddr,
		secure:   o.SecureCookies,
		idle:     o.IdleTimeout,
		lifetime: o.MaxLifetime,
		pages:    parsePages(),
		static:   loadStatic(),
	}
	h.cop = http.NewCrossOriginProtection()
	h.cop.SetDenyHandler(http.HandlerFunc(h.crossOriginDenied))
	return h
}

// Prune deletes the stored sessions, of every project, that have ended: last
// used IdleTimeout or more ago, or signed in MaxLifetime or more ago. It
// returns how many it deleted. Ended sessions are refused whether or not
// they were pruned; pruning only frees their rows. Instances that share a
// store should share the console's options, since each prunes by its own.
func (h *Handler) Prune(ctx context.Context) (int, error) {
	now := h.now()
	n, err := h.deps.Sessions.PruneConsoleSessions(ctx, now.Add(-h.idle), now.Add(-h.lifetime))
	if err != nil {
		return n, fmt.Errorf("console: pruning sessions: %w", err)
	}
	return n, nil
}

// redirect answers 303 See Other to a location relative to the current
// page. http.Redirect is not used: it would make the location absolute from
// r.URL.Path, which lacks whatever prefix the host stripped.
func redirect(w http.ResponseWriter, location string) {
	w.Header().Set("Location", location)
	w.WriteHeader(http.StatusSeeOther)
}

// call is one request on its way through the console.
type call struct {
	w       http.ResponseWriter
	r       *http.Request
	project string
	// Set by authed for signed-in requests; r's context then carries the
	// user as the audit actor.
	sess session
	user store.User
}
