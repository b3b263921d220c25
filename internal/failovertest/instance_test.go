package failovertest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/internal/testutil"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres"
)

// masterKey is the instances' master key: every instance of a deployment
// shares it.
var masterKey = []byte("failover-test-master-key-32bytes")

// project is the project every request of the tests is for.
const project = store.DefaultProject

// requestTimeout bounds one request of the tests: far above the 15 s an
// instance has to recover, so that a request that hangs is seen as such.
const requestTimeout = 40 * time.Second

// instance is one Latchkey deployment: its own PostgreSQL pool, handler
// stack and caches, served over HTTP.
type instance struct {
	name   string
	st     *postgres.Store
	lk     *latchkey.Latchkey
	url    string
	client *http.Client
}

// startInstance opens a store on dbURL and serves Latchkey on it (see
// serveInstance).
func startInstance(t *testing.T, name, dbURL string, tune ...func(*latchkey.Options)) *instance {
	t.Helper()
	logger := instanceLogger(t, name)
	st, err := postgres.Open(t.Context(), dbURL, &postgres.Options{Logger: logger, MaxConns: 8})
	if err != nil {
		t.Fatalf("instance %s: open the store: %v", name, err)
	}
	return serveInstance(t, name, st, logger, tune...)
}

// instanceLogger returns a logger of the instance name whose lines reach
// the test's output only if the test fails (see failureLog).
func instanceLogger(t *testing.T, name string) *slog.Logger {
	return slog.New(slog.NewTextHandler(failureLog(t, "instance "+name), nil)).With("instance", name)
}

// failureLog returns a writer whose text is written to the test's output
// at the end of the test if it failed, under a heading naming what. A
// failover logs thousands of lines (each 503, each refused token) that
// would bury the measurements the test logs; they matter only to find
// out why a test failed.
func failureLog(t *testing.T, what string) io.Writer {
	b := new(testutil.Buffer)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the log of %s:\n%s", what, b.String())
		}
	})
	return b
}

// serveInstance serves Latchkey on st over HTTP; the cleanup closes st.
// The instance prunes nothing in the background (no write of its own) and
// writes an API key's last use at most once an hour, so that the only
// writes are the ones the test makes. Each of tune may change the options.
func serveInstance(t *testing.T, name string, st *postgres.Store, logger *slog.Logger, tune ...func(*latchkey.Options)) *instance {
	t.Helper()
	opts := &latchkey.Options{
		Logger:        logger,
		PruneInterval: -1,
		Verifier:      &keys.VerifierOptions{TouchInterval: time.Hour},
	}
	for _, f := range tune {
		f(opts)
	}
	lk, err := latchkey.New(st, masterKey, opts)
	if err != nil {
		_ = st.Close()
		t.Fatalf("instance %s: %v", name, err)
	}
	srv := httptest.NewServer(lk.Handler())
	in := &instance{name: name, st: st, lk: lk, url: srv.URL, client: srv.Client()}
	in.client.Timeout = requestTimeout
	t.Cleanup(func() {
		srv.Close()
		_ = lk.Close()
		_ = st.Close()
	})
	return in
}

// answer is one exchange with an instance.
type answer struct {
	status     int // 0: no answer (err says why)
	err        error
	body       string
	retryAfter string
	start, end time.Time
}

// code is the problem code of the answer's body, if any.
func (a answer) code() string {
	var p struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal([]byte(a.body), &p)
	return p.Code
}

// statusCode is the answer's status and problem code, such as "401
// invalid_token", for comparisons.
func (a answer) statusCode() string {
	return strings.TrimSpace(strconv.Itoa(a.status) + " " + a.code())
}

// tokens is the token set of a login or refresh answer.
func (a answer) tokens() tokenSet {
	var ts tokenSet
	_ = json.Unmarshal([]byte(a.body), &ts)
	return ts
}

// String describes the answer for a message: its status and code, never
// its body (which may hold tokens).
func (a answer) String() string {
	if a.status == 0 {
		return "no answer: " + a.err.Error()
	}
	s := http.StatusText(a.status)
	if c := a.code(); c != "" {
		s += " " + c
	}
	return s
}

type tokenSet struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
}

// do sends one request to the instance. A JSON body is sent as
// application/json; token, when set, as a bearer token.
func (in *instance) do(ctx context.Context, method, path, token, body string) answer {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	a := answer{start: time.Now()}
	req, err := http.NewRequestWithContext(ctx, method, in.url+path, r)
	if err != nil {
		a.err, a.end = err, time.Now()
		return a
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := in.client.Do(req)
	if err != nil {
		a.err, a.end = err, time.Now()
		return a
	}
	b, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	a.end = time.Now()
	if err != nil {
		a.err = err
		return a
	}
	a.status, a.body, a.retryAfter = res.StatusCode, string(b), res.Header.Get("Retry-After")
	return a
}

func (in *instance) login(ctx context.Context, email, password string) answer {
	b, _ := json.Marshal(map[string]string{"email": email, "password": password})
	return in.do(ctx, http.MethodPost, "/v1/identity/login", "", string(b))
}

func (in *instance) refresh(ctx context.Context, refreshToken string) answer {
	return in.do(ctx, http.MethodPost, "/v1/identity/refresh", "", `{"refresh_token":"`+refreshToken+`"}`)
}

func (in *instance) logout(ctx context.Context, refreshToken string) answer {
	return in.do(ctx, http.MethodPost, "/v1/identity/logout", "", `{"refresh_token":"`+refreshToken+`"}`)
}

func (in *instance) contacts(ctx context.Context, token string) answer {
	return in.do(ctx, http.MethodGet, "/v1/contacts", token, "")
}

// unavailable reports whether a is the answer the contract gives while the
// store cannot be used: 503 unavailable with Retry-After.
func (a answer) unavailable() bool {
	return a.status == http.StatusServiceUnavailable && a.retryAfter != "" && a.code() == "unavailable"
}

// untilServed sends the request made by send until it gets an answer other
// than 503 unavailable, for at most within, and returns the last answer.
func untilServed(within time.Duration, send func() answer) answer {
	deadline := time.Now().Add(within)
	for {
		a := send()
		if !a.unavailable() || time.Now().After(deadline) {
			return a
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// discardLogger is a logger of stores the test opens beside the instances.
func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// createContacts gives the project n contacts.
func createContacts(t *testing.T, in *instance, n int) {
	t.Helper()
	for i := range n {
		_, err := in.st.CreateContact(t.Context(), store.Contact{
			ID: store.NewID(store.PrefixContact), ProjectID: project,
			Name: "Contact " + strconv.Itoa(i), CreatedAt: time.Now(),
		})
		if err != nil {
			t.Fatalf("create a contact: %v", err)
		}
	}
}

// signinToken finds the sign-in form's double-submit token in its page.
var signinToken = regexp.MustCompile(`name="signin_token" value="([^"]+)"`)

// consoleSignIn signs in to the instance's web console as a browser
// would: it loads the sign-in form (which sets its cookie) and posts it.
// The answer is the post's, its redirect not followed.
func (in *instance) consoleSignIn(ctx context.Context, email, password string) answer {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{
		Transport: in.client.Transport, Jar: jar, Timeout: requestTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	a := answer{start: time.Now()}
	fail := func(err error) answer {
		a.err, a.end = err, time.Now()
		return a
	}
	res, err := c.Get(in.url + "/console/signin")
	if err != nil {
		return fail(err)
	}
	page, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil {
		return fail(err)
	}
	m := signinToken.FindSubmatch(page)
	if m == nil {
		return fail(fmt.Errorf("the console's sign-in page (%d) has no sign-in form", res.StatusCode))
	}
	form := url.Values{"email": {email}, "password": {password}, "signin_token": {string(m[1])}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.url+"/console/signin", strings.NewReader(form.Encode()))
	if err != nil {
		return fail(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err = c.Do(req)
	if err != nil {
		return fail(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	a.end = time.Now()
	a.status, a.retryAfter = res.StatusCode, res.Header.Get("Retry-After")
	return a
}
