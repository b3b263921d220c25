package identity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/tenant"
)

// TokenMinter mints the access token (a login JWT) of a user. *keys.Keyring
// implements it.
type TokenMinter interface {
	// MintLoginToken returns a signed access token for u in project
	// projectID and when it expires.
	MintLoginToken(ctx context.Context, projectID string, u store.User) (token string, expiresAt time.Time, err error)
}

// Refresh token defaults.
const (
	// DefaultRefreshTTL is how long a refresh token is valid after it is
	// issued.
	DefaultRefreshTTL = 30 * 24 * time.Hour
	// DefaultReuseWindow is how long after its first use a refresh token
	// presented again still gets the same successor.
	DefaultReuseWindow = 10 * time.Second
	// AccessTokenLifetime is the lifetime of a login token, fixed by the
	// wire contract; expires_in reports it (86400).
	AccessTokenLifetime = 24 * time.Hour
)

// Options configure a Handler. The zero value means the defaults.
type Options struct {
	// RefreshTTL is the lifetime of each refresh token, counted from its
	// issue. Zero means DefaultRefreshTTL.
	RefreshTTL time.Duration
	// ReuseWindow is how long after a refresh token was first exchanged it
	// may be presented again and get the same successor (two tabs
	// refreshing at once, a retry after a lost response). Later, it is a
	// replay and its family is revoked. Zero means DefaultReuseWindow; to
	// make every reuse a replay, set NoReuseWindow (a negative value does
	// the same).
	ReuseWindow time.Duration
	// NoReuseWindow makes every reuse of a refresh token a replay,
	// whatever ReuseWindow says.
	NoReuseWindow bool
	// ClientAddr returns the client address a request is throttled by.
	// Nil means the host part of r.RemoteAddr. Set it to read a proxy
	// header (X-Forwarded-For, Forwarded) only when a trusted proxy in
	// front of the server sets that header; otherwise clients choose their
	// own address and escape throttling.
	ClientAddr func(r *http.Request) string
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// Logger receives errors and refresh-token replays. Nil means
	// slog.Default().
	Logger *slog.Logger
}

// Handler serves POST /v1/identity/login and POST /v1/identity/refresh for
// the project that tenant.FromContext names. Any other method on those paths
// gets 405, any other path 404.
type Handler struct {
	users   store.UserStore
	refresh store.RefreshStore
	auth    *Authenticator
	minter  TokenMinter
	codec   refreshCodec
	ttl     time.Duration
	reuse   time.Duration
	addr    func(*http.Request) string
	now     func() time.Time
	log     *slog.Logger
	mux     *http.ServeMux
}

// NewHandler returns a Handler. masterKey is the host's 32-byte master key;
// the refresh-token MAC key is derived from it. It panics if a required
// dependency is nil or masterKey is not 32 bytes.
func NewHandler(users store.UserStore, refresh store.RefreshStore, auth *Authenticator, minter TokenMinter, masterKey []byte, opts *Options) *Handler {
	if users == nil || refresh == nil || auth == nil || minter == nil {
		panic("identity: NewHandler requires a UserStore, a RefreshStore, an Authenticator and a TokenMinter")
	}
	if len(masterKey) != 32 {
		panic("identity: NewHandler requires a 32-byte master key")
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
	if o.ClientAddr == nil {
		o.ClientAddr = RemoteHost
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	h := &Handler{
		users: users, refresh: refresh, auth: auth, minter: minter,
		codec: newRefreshCodec(masterKey),
		ttl:   o.RefreshTTL, reuse: o.ReuseWindow,
		addr: o.ClientAddr, now: o.Now, log: o.Logger,
		mux: http.NewServeMux(),
	}
	h.mux.Handle("/v1/identity/login", h.post(h.login))
	h.mux.Handle("/v1/identity/refresh", h.post(h.refreshToken))
	h.mux.Handle("/", httpapi.NotFound())
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// RemoteHost returns the host part of r.RemoteAddr, or r.RemoteAddr itself
// when it has no port. It is the default Options.ClientAddr.
func RemoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// post adapts fn, answering 405 for any method but POST.
func (h *Handler) post(fn httpapi.HandlerFunc) http.Handler {
	inner := httpapi.Handle(h.log, fn)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			httpapi.MethodNotAllowed(w, http.MethodPost)
			return
		}
		inner.ServeHTTP(w, r)
	})
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

var errNoProject = errors.New("identity: no project in the request context")

func (h *Handler) login(w http.ResponseWriter, r *http.Request) error {
	projectID, ok := tenant.FromContext(r.Context())
	if !ok {
		return errNoProject
	}
	var body struct {
		Email    string `json:"email"`
		Password string `json:"password"`
	}
	if err := httpapi.DecodeJSON(w, r, &body); err != nil {
		return err
	}
	switch {
	case body.Email == "":
		return httpapi.New(httpapi.CodeInvalidRequest, `The field "email" is required.`)
	case body.Password == "":
		return httpapi.New(httpapi.CodeInvalidRequest, `The field "password" is required.`)
	}
	ctx := r.Context()
	u, err := h.auth.Authenticate(ctx, projectID, body.Email, body.Password, h.addr(r))
	if err != nil {
		return authError(err)
	}

	// The access token is minted while the family is written: the two are
	// independent, and a login's latency is its hash plus these.
	minted := make(chan mintResult, 1)
	go func() {
		tok, _, err := h.minter.MintLoginToken(ctx, projectID, u)
		minted <- mintResult{tok, err}
	}()
	now := h.now()
	fam := store.RefreshFamily{
		ID:         newFamilyID(),
		ProjectID:  projectID,
		UserID:     u.ID,
		Generation: 0,
		IssuedAt:   now,
		ExpiresAt:  now.Add(h.ttl),
		CreatedAt:  now,
	}
	ferr := h.refresh.CreateRefreshFamily(ctx, fam)
	m := <-minted
	switch {
	case ferr != nil:
		return fmt.Errorf("identity: creating refresh family: %w", ferr)
	case m.err != nil:
		return fmt.Errorf("identity: minting access token: %w", m.err)
	}
	return writeTokens(w, u, m.token, h.codec.token(projectID, fam.ID, 0))
}

type mintResult struct {
	token string
	err   error
}

// authError maps an Authenticate error to the API error.
func authError(err error) error {
	var rl *RateLimitedError
	switch {
	case errors.Is(err, ErrInvalidCredentials):
		return httpapi.New(httpapi.CodeInvalidCredentials, "The email or password is incorrect.")
	case errors.As(err, &rl):
		return httpapi.New(httpapi.CodeRateLimited, "Too many failed attempts. Try again later.").
			WithHeader("Retry-After", strconv.FormatInt(rl.RetryAfterSeconds(), 10))
	}
	return err
}

func (h *Handler) refreshToken(w http.ResponseWriter, r *http.Request) error {
	projectID, ok := tenant.FromContext(r.Context())
	if !ok {
		return errNoProject
	}
	var body struct {
		RefreshToken string `json:"refresh_token"`
	}
	if err := httpapi.DecodeJSON(w, r, &body); err != nil {
		return err
	}
	if body.RefreshToken == "" {
		return httpapi.New(httpapi.CodeInvalidRequest, `The field "refresh_token" is required.`)
	}
	familyID, gen, ok := h.codec.parse(projectID, body.RefreshToken)
	if !ok {
		return errInvalidRefresh(nil)
	}
	ctx := r.Context()
	rot, err := h.refresh.RotateRefresh(ctx, projectID, familyID, gen, store.RotateParams{
		Now: h.now(), TTL: h.ttl, ReuseWindow: h.reuse,
	})
	switch {
	case errors.Is(err, store.ErrReplayed):
		h.log.WarnContext(ctx, "refresh token replayed; family revoked", "project", projectID, "family", familyID, "generation", gen)
		return errInvalidRefresh(err)
	case errors.Is(err, store.ErrRevoked), errors.Is(err, store.ErrExpired), errors.Is(err, store.ErrNotFound):
		return errInvalidRefresh(err)
	case err != nil:
		return fmt.Errorf("identity: rotating refresh token: %w", err)
	}
	u, err := h.users.GetUser(ctx, projectID, rot.Family.UserID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errInvalidRefresh(err)
	case err != nil:
		return fmt.Errorf("identity: loading user: %w", err)
	}
	return h.mintAndWrite(w, r, projectID, u, h.codec.token(projectID, familyID, rot.Family.Generation))
}

func errInvalidRefresh(cause error) error {
	return httpapi.New(httpapi.CodeInvalidRefreshToken, "The refresh token is invalid, expired or revoked.").WithCause(cause)
}

// mintAndWrite mints u's access token and writes the token set.
func (h *Handler) mintAndWrite(w http.ResponseWriter, r *http.Request, projectID string, u store.User, refreshToken string) error {
	access, _, err := h.minter.MintLoginToken(r.Context(), projectID, u)
	if err != nil {
		return fmt.Errorf("identity: minting access token: %w", err)
	}
	return writeTokens(w, u, access, refreshToken)
}

// writeTokens writes the token set. expires_in is the access token's
// lifetime, AccessTokenLifetime, as OAuth 2.0 (RFC 6749) defines it; it is
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
		ExpiresIn:    int64(AccessTokenLifetime / time.Second),
		User:         userJSON{ID: u.ID, Email: u.Email, Tags: tags},
	})
}
