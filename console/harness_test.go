package console_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/console"
	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/internal/fixturehash"
	"github.com/latchkey-dev/latchkey/internal/testutil"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
	"github.com/latchkey-dev/latchkey/store/sqlite/sqlitetest"
	"github.com/latchkey-dev/latchkey/tenant"
)

// The fixture's projects and users.
const (
	project       = "acme"
	otherProject  = "other"
	adminEmail    = "admin@acme.test"
	adminPassword = "correct horse battery staple"
	devEmail      = "dev@acme.test"
	devPassword   = "a developer's password"
)

// fixture is a Latchkey deployment on a real SQLite file, served by a real
// HTTP server the way the example server serves it: project P at /p/P/...,
// the default project also at the root.
type fixture struct {
	lk    *latchkey.Latchkey
	st    *sqlite.Store
	srv   *httptest.Server
	clock *testutil.Clock
	logs  *testutil.Buffer

	// What a second instance on the same database needs.
	dbPath string
	master []byte
	opts   latchkey.Options
	tls    bool
}

type fixtureOptions struct {
	// console is copied into the console's options (Logger and Now are
	// set by the fixture).
	console console.Options
	// limiter throttles sign-ins; nil means the store limiter.
	limiter identity.Limiter
	// tls serves over HTTPS.
	tls bool
}

func newFixture(t testing.TB, o *fixtureOptions) *fixture {
	t.Helper()
	if o == nil {
		o = &fixtureOptions{}
	}
	ctx := context.Background()
	f := &fixture{clock: testutil.NewClock(time.Now()), logs: &testutil.Buffer{}}
	logger := slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", f.logs.String())
		}
	})

	f.dbPath = sqlitetest.Path(t)
	st, err := sqlite.Open(ctx, f.dbPath, nil)
	require.NoError(t, err)
	f.st = st
	t.Cleanup(func() { _ = st.Close() })

	f.master = make([]byte, 32)
	_, _ = rand.Read(f.master)
	copts := o.console
	copts.Logger = logger
	copts.Now = f.clock.Now
	f.opts = latchkey.Options{
		Logger:        logger,
		Limiter:       o.limiter,
		Resolver:      tenant.FromRequest,
		Console:       &copts,
		PruneInterval: -1,
	}
	f.tls = o.tls
	lk, err := latchkey.New(st, f.master, &f.opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = lk.Close() })
	f.lk = lk

	for _, p := range []string{project, otherProject} {
		_, err := lk.CreateProject(ctx, p)
		require.NoError(t, err)
	}
	for _, p := range []string{project, otherProject, store.DefaultProject} {
		f.createUser(t, p, adminEmail, fixturehash.Of(adminPassword), []string{"ops", console.AdminTag})
	}
	f.createUser(t, project, devEmail, fixturehash.Of(devPassword), []string{"dev"})

	f.srv = f.serve(t, lk)
	return f
}

// createUser stores a fixture user whose password has the argon2id hash
// hash, as lk.Users().Create would store it (the users a test creates
// itself go through Create).
func (f *fixture) createUser(t testing.TB, projectID, email, hash string, tags []string) {
	t.Helper()
	require.NoError(t, f.st.CreateUser(context.Background(), store.User{
		ID:           store.NewID(store.PrefixUser),
		ProjectID:    projectID,
		Email:        email,
		PasswordHash: hash,
		Tags:         tags,
		CreatedAt:    store.Truncate(time.Now()), // Latchkey's clock, not the console's
	}))
}

// serve serves lk the way the example server does, over a real HTTP server.
func (f *fixture) serve(t testing.TB, lk *latchkey.Latchkey) *httptest.Server {
	t.Helper()
	h := tenant.ByPath("/p/", store.DefaultProject, lk.Handler())
	var srv *httptest.Server
	if f.tls {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	return srv
}

// second starts another instance on the fixture's database: its own store
// handle on the same SQLite file, its own Latchkey and its own HTTP
// server, as a second server behind a load balancer would be. It shares
// only the database, the master key and the options (the clock among
// them) with the first.
func (f *fixture) second(t testing.TB) (*latchkey.Latchkey, *httptest.Server) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), f.dbPath, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	lk, err := latchkey.New(st, f.master, &f.opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = lk.Close() })
	return lk, f.serve(t, lk)
}

// user returns the project's user with email.
func (f *fixture) user(t testing.TB, p, email string) store.User {
	t.Helper()
	u, err := f.lk.Users().GetByEmail(context.Background(), p, email)
	require.NoError(t, err)
	return u
}

// seedUsers creates n users of project p, user-00@acme.test and on, one
// millisecond apart and an hour after the fixture's users, straight in the
// store and with a hash no password matches, so that no time goes into
// hashing: the tests that page through them never sign in as them. It
// returns their ids in creation order.
func (f *fixture) seedUsers(t testing.TB, p string, n int) []string {
	t.Helper()
	ctx := context.Background()
	start := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	ids := make([]string, n)
	for i := range n {
		u := store.User{
			ID:           store.NewID(store.PrefixUser),
			ProjectID:    p,
			Email:        fmt.Sprintf("user-%02d@acme.test", i),
			PasswordHash: seedHash,
			Tags:         []string{"seeded"},
			CreatedAt:    start.Add(time.Duration(i) * time.Millisecond),
		}
		require.NoError(t, f.st.CreateUser(ctx, u))
		ids[i] = u.ID
	}
	return ids
}

// seedHash is an argon2id hash that no password matches: seeded users are
// listed, never signed in as.
const seedHash = "$argon2id$v=19$m=19456,t=2,p=1$c2VlZGVkc2VlZGVk$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

// apiLogin logs in over POST /v1/identity/login of project p and returns
// the access token.
func (f *fixture) apiLogin(t testing.TB, p, email, password string) string {
	t.Helper()
	access, _ := f.apiSession(t, p, email, password)
	return access
}

// apiSession logs in over POST /v1/identity/login of project p and returns
// the access token and the refresh token.
func (f *fixture) apiSession(t testing.TB, p, email, password string) (access, refresh string) {
	t.Helper()
	body, err := json.Marshal(map[string]string{"email": email, "password": password})
	require.NoError(t, err)
	resp, err := f.srv.Client().Post(f.srv.URL+"/p/"+p+"/v1/identity/login", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var tokens struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tokens))
	require.NotEmpty(t, tokens.AccessToken)
	require.NotEmpty(t, tokens.RefreshToken)
	return tokens.AccessToken, tokens.RefreshToken
}

// apiLogout ends the session of refresh over POST /v1/identity/logout of
// project p.
func (f *fixture) apiLogout(t testing.TB, p, refresh string) {
	t.Helper()
	body, err := json.Marshal(map[string]string{"refresh_token": refresh})
	require.NoError(t, err)
	resp, err := f.srv.Client().Post(f.srv.URL+"/p/"+p+"/v1/identity/logout", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
}

// consoleURL returns the console's URL for project p ("" means the default
// project at the root).
func (f *fixture) consoleURL(p string) string {
	if p == "" {
		return f.srv.URL + "/console/"
	}
	return f.srv.URL + "/p/" + p + "/console/"
}

// apiStatus calls GET /v1/contacts of project p with token and returns the
// status.
func (f *fixture) apiStatus(t testing.TB, p, token string) int {
	t.Helper()
	u := f.srv.URL + "/v1/contacts"
	if p != "" {
		u = f.srv.URL + "/p/" + p + "/v1/contacts"
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// client is a browser-like HTTP client of one console: it keeps cookies and
// does not follow redirects, so that tests see them.
type client struct {
	t    testing.TB
	f    *fixture
	hc   *http.Client
	base string
}

func (f *fixture) newClient(t testing.TB, p string) *client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	hc := *f.srv.Client()
	hc.Jar = jar
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &client{t: t, f: f, hc: &hc, base: f.consoleURL(p)}
}

// response is a read response.
type response struct {
	status int
	header http.Header
	body   string
}

func (r response) cookie(name string) *http.Cookie {
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func (c *client) do(req *http.Request) response {
	c.t.Helper()
	resp, err := c.hc.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// get fetches page, relative to the console's directory.
func (c *client) get(page string) response {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.base+page, nil)
	require.NoError(c.t, err)
	return c.do(req)
}

// post submits form to page, adding headers.
func (c *client) post(page string, form url.Values, headers ...string) response {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.base+page, strings.NewReader(form.Encode()))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return c.do(req)
}

var hiddenField = regexp.MustCompile(`name="([a-z_]+)" value="([^"]*)"`)

// field returns the value of the hidden field name in body.
func field(t testing.TB, body, name string) string {
	t.Helper()
	for _, m := range hiddenField.FindAllStringSubmatch(body, -1) {
		if m[1] == name {
			return m[2]
		}
	}
	t.Fatalf("no field %q in page:\n%s", name, body)
	return ""
}

// signIn signs in through the form and returns the answer to the POST.
func (c *client) signIn(email, password string) response {
	c.t.Helper()
	page := c.get("signin")
	require.Equal(c.t, http.StatusOK, page.status)
	return c.post("signin", url.Values{
		"signin_token": {field(c.t, page.body, "signin_token")},
		"email":        {email},
		"password":     {password},
	})
}

// mustSignIn signs in as the admin and returns the session's form token.
func (c *client) mustSignIn() string {
	c.t.Helper()
	r := c.signIn(adminEmail, adminPassword)
	require.Equal(c.t, http.StatusSeeOther, r.status, r.body)
	require.Equal(c.t, "keys", r.header.Get("Location"))
	keys := c.get("keys")
	require.Equal(c.t, http.StatusOK, keys.status)
	return field(c.t, keys.body, "form_token")
}

var tokenArea = regexp.MustCompile(`(?s)<textarea id="api-token"[^>]*>([^<]+)</textarea>`)

// createKey creates a key named name and returns its token, read from the
// page.
func (c *client) createKey(formToken, name string) (response, string) {
	c.t.Helper()
	r := c.post("keys", url.Values{"form_token": {formToken}, "name": {name}})
	require.Equal(c.t, http.StatusOK, r.status, r.body)
	m := tokenArea.FindStringSubmatch(r.body)
	require.NotNil(c.t, m, "no token on the page:\n%s", r.body)
	return r, strings.TrimSpace(m[1])
}
