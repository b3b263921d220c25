package keys_test

import (
	"context"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20poly1305"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/internal/openapitest"
	"github.com/latchkey-dev/latchkey/internal/testutil"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
	"github.com/latchkey-dev/latchkey/store/sqlite/sqlitetest"
	"github.com/latchkey-dev/latchkey/tenant"
)

// countingStore is the real SQLite store with its signing-key and API-key
// lookups counted, to show which requests reach the store.
type countingStore struct {
	*sqlite.Store
	getSigningKey atomic.Int64
	getAPIKey     atomic.Int64
	touchAPIKey   atomic.Int64
	getSession    atomic.Int64
	changeVersion atomic.Int64
	listVersioned atomic.Int64
}

func (s *countingStore) ChangeVersion(ctx context.Context) (uint64, error) {
	s.changeVersion.Add(1)
	return s.Store.ChangeVersion(ctx)
}

func (s *countingStore) ListContactsVersioned(ctx context.Context, projectID string, req paginate.Request) (uint64, paginate.Page[store.Contact], error) {
	s.listVersioned.Add(1)
	return s.Store.ListContactsVersioned(ctx, projectID, req)
}

func (s *countingStore) GetRefreshFamily(ctx context.Context, projectID, id string) (store.RefreshFamily, error) {
	s.getSession.Add(1)
	return s.Store.GetRefreshFamily(ctx, projectID, id)
}

func (s *countingStore) GetSigningKey(ctx context.Context, projectID, id string) (store.SigningKey, error) {
	s.getSigningKey.Add(1)
	return s.Store.GetSigningKey(ctx, projectID, id)
}

func (s *countingStore) GetAPIKey(ctx context.Context, projectID, id string) (store.APIKey, error) {
	s.getAPIKey.Add(1)
	return s.Store.GetAPIKey(ctx, projectID, id)
}

func (s *countingStore) TouchAPIKey(ctx context.Context, projectID, id string, at time.Time) error {
	s.touchAPIKey.Add(1)
	return s.Store.TouchAPIKey(ctx, projectID, id, at)
}

// env is one server process: a SQLite file, a Keyring, APIKeys and a
// Verifier on it, and an httptest server that serves project P at /p/P/:
//
//	/p/P/.well-known/jwks.json  the JWKS handler
//	/p/P/v1/whoami              the middleware in front of a handler that
//	                            echoes the principal as JSON
//	/noproject/v1/whoami        the middleware with no project in context
type env struct {
	// issuer is the Keyring's issuer: "" until a test sets issuerBase.
	issuerBase string
	t          testing.TB
	path       string
	master     []byte
	clock      *testutil.Clock // settable, shared by everything in the env
	st         *countingStore
	kr         *keys.Keyring
	ak         *keys.APIKeys
	v          *keys.Verifier
	srv        *httptest.Server

	reasonsMu sync.Mutex
	reasons   []string
}

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// reasonRecorder is a slog.Handler that passes records on to the test log
// and remembers the "reason" attribute of authentication failures, so tests
// can tell why a token was refused.
type reasonRecorder struct {
	slog.Handler
	mu      *sync.Mutex
	reasons *[]string
}

func (h reasonRecorder) Handle(ctx context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "reason" {
			h.mu.Lock()
			*h.reasons = append(*h.reasons, a.Value.String())
			h.mu.Unlock()
		}
		return true
	})
	return h.Handler.Handle(ctx, r)
}

// lastReason returns the reason of the latest authentication failure.
func (e *env) lastReason() string {
	e.reasonsMu.Lock()
	defer e.reasonsMu.Unlock()
	if len(e.reasons) == 0 {
		return ""
	}
	return e.reasons[len(e.reasons)-1]
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func newEnv(t testing.TB, vopts *keys.VerifierOptions, projects ...string) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{t: t, path: sqlitetest.Path(t), clock: testutil.NewClock(t0)}
	e.master = make([]byte, keys.MasterKeySize)
	_, _ = rand.Read(e.master)
	raw, err := sqlite.Open(ctx, e.path, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = raw.Close() })
	e.st = &countingStore{Store: raw}
	e.kr, err = keys.NewKeyring(e.st, e.master, &keys.KeyringOptions{Now: e.clock.Now, Logger: testLogger(t), Issuer: e.issuer})
	require.NoError(t, err)
	e.ak = keys.NewAPIKeys(e.st, e.kr, &keys.APIKeysOptions{Now: e.clock.Now})
	var o keys.VerifierOptions
	if vopts != nil {
		o = *vopts
	}
	o.Now = e.clock.Now
	o.Logger = slog.New(reasonRecorder{Handler: testLogger(t).Handler(), mu: &e.reasonsMu, reasons: &e.reasons})
	e.v = keys.NewVerifier(e.st, &o)
	for _, p := range projects {
		e.createProject(p)
	}

	// Public documents are readable from any origin, as the routing table
	// serves them.
	jwks := httpapi.AllowAnyOrigin(e.kr.JWKSHandler())
	discovery := httpapi.AllowAnyOrigin(e.kr.DiscoveryHandler(keys.Endpoints{
		Discovery: "/.well-known/openid-configuration", JWKS: "/.well-known/jwks.json",
		Introspection: "/v1/identity/introspect", Revocations: "/v1/identity/revocations",
	}))
	introspect := e.v.APIKeyClient(e.v.IntrospectHandler(e.kr.Issuer))
	whoami := e.v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := keys.PrincipalFromContext(r.Context())
		if !ok {
			http.Error(w, "no principal", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"project": p.ProjectID, "subject": p.Subject, "kind": p.Kind.String(), "tags": p.Tags,
			"scopes": p.Scopes,
		})
	}))
	// reports stands for a host app's route that requires a scope.
	reports := e.v.Middleware(keys.RequireScope("reports:read")(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"reports":[]}`)
	})))
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/noproject/v1/whoami" {
			whoami.ServeHTTP(w, r)
			return
		}
		project, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/p/"), "/")
		r = r.WithContext(tenant.NewContext(r.Context(), project))
		switch rest {
		case ".well-known/jwks.json":
			jwks.ServeHTTP(w, r)
		case ".well-known/openid-configuration":
			discovery.ServeHTTP(w, r)
		case "v1/identity/introspect":
			introspect.ServeHTTP(w, r)
		case "v1/whoami":
			whoami.ServeHTTP(w, r)
		case "v1/reports":
			reports.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(e.srv.Close)
	if _, bench := t.(*testing.B); !bench {
		// Every exchange is checked against the OpenAPI document, but
		// those of the whoami stub, which stands for any endpoint behind
		// the middleware; benchmarks measure the server alone.
		openapitest.New(t, &openapitest.Options{
			ProjectPrefix: "/p/",
			Unchecked:     []string{"/v1/whoami", "/noproject/v1/whoami", "/v1/reports"},
		}).WrapClient(e.srv.Client())
	}
	return e
}

// issuer is the env's KeyringOptions.Issuer: issuerBase/p/P, or none.
func (e *env) issuer(project string) string {
	if e.issuerBase == "" {
		return ""
	}
	return e.issuerBase + "/p/" + project
}

// createProject creates a project and its first signing key, as the CLI does.
func (e *env) createProject(id string) store.SigningKey {
	e.t.Helper()
	ctx := context.Background()
	require.NoError(e.t, e.st.CreateProject(ctx, store.Project{ID: id, CreatedAt: e.clock.Now()}))
	k, err := e.kr.Rotate(ctx, id)
	require.NoError(e.t, err)
	return k
}

// openSecond opens a second handle on the env's database file, as another
// process (the CLI, another instance) would.
func (e *env) openSecond() *sqlite.Store {
	e.t.Helper()
	st, err := sqlite.Open(context.Background(), e.path, nil)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = st.Close() })
	return st
}

// user creates a user of the project with the given tags.
func (e *env) user(project string, tags ...string) store.User {
	e.t.Helper()
	if tags == nil {
		tags = []string{}
	}
	id := store.NewID(store.PrefixUser)
	u := store.User{ID: id, ProjectID: project, Email: id + "@example.com", PasswordHash: "unused", Tags: tags, CreatedAt: e.clock.Now()}
	require.NoError(e.t, e.st.CreateUser(context.Background(), u))
	return u
}

// session starts a session of u, as a login does, and returns its id.
func (e *env) session(u store.User) string {
	e.t.Helper()
	now := e.clock.Now()
	f := store.RefreshFamily{
		ID: store.NewID(store.PrefixFamily), ProjectID: u.ProjectID, UserID: u.ID,
		IssuedAt: now, ExpiresAt: now.Add(30 * 24 * time.Hour), CreatedAt: now, EndsAt: now.Add(90 * 24 * time.Hour),
	}
	require.NoError(e.t, e.st.CreateRefreshFamily(context.Background(), f, u.PasswordHash))
	return f.ID
}

// loginToken returns a login token of a new user of the project, in a new
// session.
func (e *env) loginToken(project string, tags ...string) string {
	e.t.Helper()
	tok, _ := e.loginTokenOf(e.user(project, tags...))
	return tok
}

// loginTokenOf returns a login token of u in a new session, and the
// session's id.
func (e *env) loginTokenOf(u store.User) (token, sessionID string) {
	e.t.Helper()
	sid := e.session(u)
	tok, exp, err := e.kr.MintLoginToken(context.Background(), u.ProjectID, u, sid)
	require.NoError(e.t, err)
	require.Equal(e.t, e.clock.Now().Add(24*time.Hour), exp)
	return tok, sid
}

func (e *env) apiKey(project string) (store.APIKey, string) {
	e.t.Helper()
	k, tok, err := e.ak.Create(context.Background(), project, "backend")
	require.NoError(e.t, err)
	return k, tok
}

// response is what a request to the test server got.
type response struct {
	status int
	header http.Header
	body   map[string]any
}

// get requests path with the given Authorization header value ("" for
// none).
func (e *env) get(path, authorization string) response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+path, nil)
	require.NoError(e.t, err)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	return e.do(req)
}

func (e *env) do(req *http.Request) response {
	e.t.Helper()
	res, err := e.srv.Client().Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	r := response{status: res.StatusCode, header: res.Header}
	if len(raw) > 0 {
		require.NoError(e.t, json.Unmarshal(raw, &r.body), "body %q", raw)
	}
	return r
}

// whoami calls the protected endpoint of project with token as bearer.
func (e *env) whoami(project, token string) response {
	e.t.Helper()
	return e.get("/p/"+project+"/v1/whoami", "Bearer "+token)
}

// requireOK asserts a 200 from whoami for the given subject.
func requireOK(t testing.TB, r response, project, kind string) {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "body %v", r.body)
	require.Equal(t, project, r.body["project"])
	require.Equal(t, kind, r.body["kind"])
}

// requireInvalidToken asserts the 401 of a presented, rejected token.
func requireInvalidToken(t testing.TB, r response) {
	t.Helper()
	require.Equal(t, http.StatusUnauthorized, r.status, "body %v", r.body)
	require.Equal(t, `Bearer error="invalid_token"`, r.header.Get("WWW-Authenticate"))
	require.Equal(t, "application/problem+json", r.header.Get("Content-Type"))
	require.Equal(t, "invalid_token", r.body["code"])
	require.EqualValues(t, 401, r.body["status"])
}

// requireRejected asserts that token is refused by project's endpoint with
// the 401 of a presented token, for the given logged reason.
func (e *env) requireRejected(project, token, reason string) {
	e.t.Helper()
	requireInvalidToken(e.t, e.whoami(project, token))
	require.Equal(e.t, reason, e.lastReason(), "rejected for another reason")
}

// privateKey opens the sealed private key of a stored signing key the way
// the package documents it (HKDF-SHA256 of the master key with info
// "latchkey signing-key seal v1", XChaCha20-Poly1305, additional data
// project/kid, nonce first), independently of the package's own code.
func (e *env) privateKey(rec store.SigningKey) ed25519.PrivateKey {
	e.t.Helper()
	return openSealed(e.t, e.master, rec)
}

func openSealed(t testing.TB, master []byte, rec store.SigningKey) ed25519.PrivateKey {
	t.Helper()
	k, err := hkdf.Key(sha256.New, master, nil, "latchkey signing-key seal v1", 32)
	require.NoError(t, err)
	aead, err := chacha20poly1305.NewX(k)
	require.NoError(t, err)
	sealed := rec.EncryptedPrivateKey
	require.Greater(t, len(sealed), 24)
	seed, err := aead.Open(nil, sealed[:24], sealed[24:], []byte(rec.ProjectID+"/"+rec.ID))
	require.NoError(t, err)
	require.Len(t, seed, ed25519.SeedSize)
	priv := ed25519.NewKeyFromSeed(seed)
	require.Equal(t, []byte(rec.PublicKey), []byte(priv.Public().(ed25519.PublicKey)))
	return priv
}

// forge signs arbitrary header and claims with priv (EdDSA), or leaves the
// signature empty when priv is nil. header and claims are marshalled as
// given, so tests control every field.
func forge(t testing.TB, header, claims map[string]any, sign func(signingInput []byte) []byte) string {
	t.Helper()
	h, err := json.Marshal(header)
	require.NoError(t, err)
	c, err := json.Marshal(claims)
	require.NoError(t, err)
	return forgeRaw(h, c, sign)
}

// forgeRaw is forge with the header's and the claims' JSON given as bytes.
func forgeRaw(h, c []byte, sign func(signingInput []byte) []byte) string {
	in := b64(h) + "." + b64(c)
	var sig []byte
	if sign != nil {
		sig = sign([]byte(in))
	}
	return in + "." + b64(sig)
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func ed25519Signer(priv ed25519.PrivateKey) func([]byte) []byte {
	return func(in []byte) []byte { return ed25519.Sign(priv, in) }
}

// loginClaims returns the claims of a valid login token of project at the
// env's current time, of a new user in a new session.
func (e *env) loginClaims(project string) map[string]any {
	u := e.user(project)
	now := e.clock.Now().Unix()
	return map[string]any{
		"aud": project, "sub": u.ID, "sid": e.session(u), "iat": now, "exp": now + 86400,
		"jti": "j" + store.NewID("x"), "tags": []string{},
	}
}

func edHeader(kid string) map[string]any {
	return map[string]any{"alg": "EdDSA", "typ": "JWT", "kid": kid}
}

// decodeHeader returns a token's JOSE header.
func decodeHeader(t testing.TB, token string) map[string]any {
	t.Helper()
	var h map[string]any
	p := jwt.NewParser()
	tok, _, err := p.ParseUnverified(token, jwt.MapClaims{})
	require.NoError(t, err)
	h = tok.Header
	return h
}

// decodeClaims returns a token's claims without verifying it.
func decodeClaims(t testing.TB, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	require.Len(t, parts, 3)
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	var c map[string]any
	require.NoError(t, json.Unmarshal(raw, &c))
	return c
}
