package identity_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/audit"
	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/internal/fixturehash"
	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/internal/openapitest"
	"github.com/latchkey-dev/latchkey/internal/testutil"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
	"github.com/latchkey-dev/latchkey/store/sqlite/sqlitetest"
	"github.com/latchkey-dev/latchkey/tenant"
)

// newClock returns the settable time source shared by everything in one
// test env, starting now in UTC.
func newClock() *testutil.Clock { return testutil.NewClock(time.Now().UTC()) }

// envConfig tunes newEnv.
type envConfig struct {
	// dbPath is the SQLite path; "" means a new file (sqlitetest.Path).
	dbPath string
	// limiter builds the limiter; nil means a memory limiter with the
	// default limits on the env's clock.
	limiter func(st store.Store, now func() time.Time) identity.Limiter
	// opts are the handler options; Now, Logger and ClientAddr are filled
	// in when nil.
	opts identity.Options
	// projects are created besides "default".
	projects []string
	// logger receives every log line; nil means the test's output at
	// Warn level and above.
	logger *slog.Logger
	// refresh wraps the refresh store handed to the handler.
	refresh func(store.RefreshStore) store.RefreshStore
	// hasher tunes the hasher; nil means defaults.
	hasher *identity.HasherOptions
	// auditLog records the handler's audit entries in the store.
	auditLog bool
}

// env is a running identity endpoint on a real SQLite store, with a real
// keyring, served over real HTTP. Requests to /p/NAME/... are for project
// NAME; everything else is for project "default".
type env struct {
	st        *sqlite.Store
	kr        *keys.Keyring
	hasher    *identity.Hasher
	auth      *identity.Authenticator
	lim       identity.Limiter
	handler   *identity.Handler
	srv       *httptest.Server
	clock     *testutil.Clock
	masterKey []byte
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func newEnv(t testing.TB, cfg envConfig) *env {
	t.Helper()
	ctx := context.Background()
	path := cfg.dbPath
	if path == "" {
		path = sqlitetest.Path(t)
	}
	logger := cfg.logger
	if logger == nil {
		logger = testLogger(t)
	}
	st, err := sqlite.Open(ctx, path, &sqlite.Options{Logger: logger})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })

	e := &env{st: st, clock: newClock(), masterKey: make([]byte, 32)}
	_, _ = rand.Read(e.masterKey)
	e.kr, err = keys.NewKeyring(st, e.masterKey, &keys.KeyringOptions{Now: e.clock.Now})
	require.NoError(t, err)
	for _, p := range append([]string{store.DefaultProject}, cfg.projects...) {
		require.NoError(t, st.CreateProject(ctx, store.Project{ID: p, CreatedAt: e.clock.Now()}))
		_, err := e.kr.Rotate(ctx, p)
		require.NoError(t, err)
	}

	e.hasher = identity.NewHasher(cfg.hasher)
	if cfg.limiter != nil {
		e.lim = cfg.limiter(st, e.clock.Now)
	} else {
		e.lim = identity.NewMemoryLimiter(&identity.LimiterOptions{Now: e.clock.Now})
	}
	e.auth = identity.NewAuthenticator(st, e.hasher, e.lim, &identity.AuthOptions{Logger: logger})
	opts := cfg.opts
	if opts.Now == nil {
		opts.Now = e.clock.Now
	}
	if opts.Logger == nil {
		opts.Logger = logger
	}
	if cfg.auditLog {
		opts.Audit = audit.New(st, &audit.Options{Now: e.clock.Now})
	}
	if opts.ClientAddr == nil {
		// Tests pose as many clients through this header; a real
		// deployment sets ClientAddr only behind a trusted proxy.
		opts.ClientAddr = func(r *http.Request) string {
			if a := r.Header.Get("X-Test-Client"); a != "" {
				return a
			}
			return httpapi.RemoteHost(r)
		}
	}
	var refresh store.RefreshStore = st
	if cfg.refresh != nil {
		refresh = cfg.refresh(st)
	}
	e.handler = identity.NewHandler(identity.Deps{
		Sessions: refresh, Authenticator: e.auth, Minter: e.kr, MasterKey: e.masterKey,
	}, &opts)
	// The routes the root package's routing table gives these handlers.
	mux := http.NewServeMux()
	mux.Handle("POST /v1/identity/login", e.handler.Login())
	mux.Handle("POST /v1/identity/refresh", e.handler.Refresh())
	mux.Handle("POST /v1/identity/logout", e.handler.Logout())
	e.srv = httptest.NewServer(withTenant(mux))
	if _, bench := t.(*testing.B); !bench {
		// Every exchange is checked against the OpenAPI document;
		// benchmarks measure the server alone.
		openapitest.New(t, &openapitest.Options{ProjectPrefix: "/p/"}).WrapClient(e.srv.Client())
	}
	// A request that should answer at once but waits for a hashing slot
	// fails the test instead of hanging it.
	e.srv.Client().Timeout = 30 * time.Second
	t.Cleanup(e.srv.Close)
	return e
}

// withTenant puts requests for /p/NAME/rest in project NAME at path /rest,
// and all others in project "default".
func withTenant(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		project := store.DefaultProject
		if rest, ok := strings.CutPrefix(r.URL.Path, "/p/"); ok {
			name, path, _ := strings.Cut(rest, "/")
			project = name
			r.URL.Path = "/" + path
		}
		next.ServeHTTP(w, r.WithContext(tenant.NewContext(r.Context(), project)))
	})
}

// createUser creates a user of project with an argon2id hash of password
// made once for the test binary (fixturehash.Of), or with hash when
// password is "".
func (e *env) createUser(t testing.TB, project, email, password, hash string, tags ...string) store.User {
	t.Helper()
	if password != "" {
		hash = fixturehash.Of(password)
	}
	u := store.User{
		ID: store.NewID(store.PrefixUser), ProjectID: project, Email: email,
		PasswordHash: hash, Tags: tags, CreatedAt: e.clock.Now(),
	}
	require.NoError(t, e.st.CreateUser(context.Background(), u))
	return u
}

// response is what a test looks at in an HTTP answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), "body %s", r.body)
	return m
}

func (r response) code(t testing.TB) string {
	t.Helper()
	require.Equal(t, "application/problem+json", r.header.Get("Content-Type"), "body %s", r.body)
	c, _ := r.json(t)["code"].(string)
	return c
}

// do sends a raw request.
func (e *env) do(t testing.TB, method, path, contentType string, body []byte, header ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := e.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// post sends v as JSON.
func (e *env) post(t testing.TB, path string, v any, header ...string) response {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return e.do(t, http.MethodPost, path, "application/json", b, header...)
}

func (e *env) login(t testing.TB, prefix, email, password string, header ...string) response {
	t.Helper()
	return e.post(t, prefix+"/v1/identity/login", map[string]string{"email": email, "password": password}, header...)
}

func (e *env) refresh(t testing.TB, prefix, token string) response {
	t.Helper()
	return e.post(t, prefix+"/v1/identity/refresh", map[string]string{"refresh_token": token})
}

func (e *env) logout(t testing.TB, prefix, token string) response {
	t.Helper()
	return e.post(t, prefix+"/v1/identity/logout", map[string]string{"refresh_token": token})
}

// tokenSet is the 200 body of login and refresh.
type tokenSet struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int64  `json:"expires_in"`
	User         struct {
		ID    string   `json:"id"`
		Email string   `json:"email"`
		Tags  []string `json:"tags"`
	} `json:"user"`
}

// tokens checks that r is a 200 token set and returns it.
func (r response) tokens(t testing.TB) tokenSet {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "body %s", r.body)
	var ts tokenSet
	require.NoError(t, json.Unmarshal(r.body, &ts))
	return ts
}

// verifyAccess checks that tok is an EdDSA JWT signed by one of project's
// keys, for that project and user, expiring 86400 s after issue, and valid
// at the env's clock.
func (e *env) verifyAccess(t testing.TB, project, userID, tok string) {
	t.Helper()
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(tok, claims, func(tk *jwt.Token) (any, error) {
		kid, _ := tk.Header["kid"].(string)
		k, err := e.st.GetSigningKey(context.Background(), project, kid)
		if err != nil {
			return nil, err
		}
		return ed25519.PublicKey(k.PublicKey), nil
	}, jwt.WithValidMethods([]string{"EdDSA"}), jwt.WithAudience(project), jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(), jwt.WithTimeFunc(e.clock.Now))
	require.NoError(t, err, "access token does not verify")
	sub, _ := claims.GetSubject()
	require.Equal(t, userID, sub)
	iat, _ := claims.GetIssuedAt()
	exp, _ := claims.GetExpirationTime()
	require.Equal(t, 86400*time.Second, exp.Sub(iat.Time))
}
