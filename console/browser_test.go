package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/audit"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

// The browser tests drive Debian's Chromium through chromedp. They look for
// it at $LATCHKEY_CHROMIUM, else /usr/bin/chromium. They skip when it is
// missing, unless CI or LATCHKEY_CHROMIUM is set: then they fail.
//
// Screenshots of the pages are written to the test's temporary directory
// and copied to $LATCHKEY_CONSOLE_SHOTS when it is set.

const actionTimeout = 30 * time.Second

// chromiumPath returns the browser to drive, or skips the test.
func chromiumPath(t *testing.T) string {
	t.Helper()
	p, explicit := os.LookupEnv("LATCHKEY_CHROMIUM")
	if !explicit || p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(p); err == nil {
		return p
	}
	if explicit || os.Getenv("CI") != "" {
		t.Fatalf("no Chromium at %s: CI and LATCHKEY_CHROMIUM require the browser tests to run (apt-get install chromium)", p)
	}
	t.Skipf("no Chromium at %s; install Debian's chromium or set LATCHKEY_CHROMIUM to run the browser tests", p)
	return ""
}

// chromium is the headless Chromium the browser tests share: the first
// test that needs it starts it, each test gets a browser context of its own
// in it (its own cookies, storage and cache, as a fresh profile would
// give), and TestMain ends it. Starting Chromium costs about as much as a
// test's own use of it.
var chromium struct {
	once sync.Once
	ctx  context.Context // its first tab, nil until it started
	err  error           // why it did not start
	stop func()          // ends it and removes its profile
}

func TestMain(m *testing.M) {
	code := m.Run()
	if chromium.stop != nil {
		chromium.stop()
	}
	os.Exit(code)
}

// sharedChromium returns the context of the shared Chromium's first tab,
// starting the browser if no test has yet. It skips or fails t as
// chromiumPath does, and fails t if the browser could not start.
func sharedChromium(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath(t)
	chromium.once.Do(func() {
		profile, err := os.MkdirTemp("", "latchkey-chromium-")
		if err != nil {
			chromium.err = err
			return
		}
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(path),
			chromedp.Headless,
			chromedp.NoSandbox, // tests run as root in CI containers
			chromedp.DisableGPU,
			chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck,
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.Flag("disable-extensions", true),
			chromedp.Flag("disable-default-apps", true),
			chromedp.Flag("password-store", "basic"),
			chromedp.Flag("use-mock-keychain", true),
			chromedp.UserDataDir(profile),
			chromedp.WindowSize(1280, 900),
		)
		ctx, cancel := chromedp.NewContext(actx)
		chromium.stop = func() {
			cancel()
			cancelAlloc()
			_ = os.RemoveAll(profile)
		}
		// The first action starts the browser; it must not run under a
		// timeout, which would end the browser with it.
		if chromium.err = chromedp.Do(ctx); chromium.err == nil {
			chromium.ctx = ctx
		}
	})
	require.NoError(t, chromium.err, "starting Chromium")
	return chromium.ctx
}

// browser is one tab of the shared Chromium, in a browser context of its
// own.
type browser struct {
	t   *testing.T
	ctx context.Context

	mu      sync.Mutex
	console []string
}

// newBrowser opens a tab in a new browser context of the shared Chromium;
// t's cleanup closes both.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	ctx, cancel := chromedp.NewContext(sharedChromium(t), chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	require.NoError(t, chromedp.Do(ctx), "opening a tab")
	b := &browser{t: t, ctx: ctx}

	// Keep what the page writes to its console: a Content-Security-Policy
	// violation shows there.
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, m.String())
			b.mu.Unlock()
		}
	}()
	return b
}

// do runs actions, failing the test on error.
func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, actionTimeout)
	defer cancel()
	require.NoError(b.t, chromedp.Do(ctx, actions...))
}

// run runs one action and returns its value.
func run[T any](b *browser, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, actionTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	require.NoError(b.t, err)
	return v
}

// navigation runs actions that load a page and returns the page's status.
func (b *browser) navigation(actions ...chromedp.Action[chromedp.Void]) int {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, actionTimeout)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, actions...)
	require.NoError(b.t, err)
	return int(resp.Status)
}

// text returns the text of the first element sel matches, once visible. A
// node can vanish between the lookup and the read while a new page
// replaces the old one; the read is then tried again.
func (b *browser) text(sel string) string {
	b.t.Helper()
	var err error
	for range 3 {
		ctx, cancel := context.WithTimeout(b.ctx, actionTimeout)
		var s string
		err = chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(sel)))
		if err == nil {
			s, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		}
		cancel()
		if err == nil {
			return strings.TrimSpace(s)
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(b.t, err, "reading %s", sel)
	return ""
}

func (b *browser) location() string {
	b.t.Helper()
	return run(b, chromedp.Location())
}

// signIn fills the sign-in form of the console at base and submits it with
// the keyboard. It returns the status of the page it leads to.
func (b *browser) signIn(base, email, password string) int {
	b.t.Helper()
	b.do(
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), email),
	)
	// Tab to the password and press Enter: the form works from the
	// keyboard alone.
	return b.navigation(chromedp.KeyEvent("\t" + password + "\r"))
}

// noConsoleErrors checks that nothing was refused by the CSP or failed to
// load.
func (b *browser) noConsoleErrors() {
	b.t.Helper()
	time.Sleep(200 * time.Millisecond) // let the last messages arrive
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.console {
		assert.NotContains(b.t, m, "Content Security Policy")
		assert.NotContains(b.t, m, "Refused to")
		assert.NotContains(b.t, m, "Failed to load")
	}
}

// screenshot saves a full-page PNG of the current page at width in the
// test's temporary directory and, when LATCHKEY_CONSOLE_SHOTS names a
// directory, there too, for a person to look at after the run.
func (b *browser) screenshot(dir, name string, width int64) {
	b.t.Helper()
	b.do(chromedp.EmulateViewport(width, 900))
	png := run(b, chromedp.FullScreenshot(100))
	file := fmt.Sprintf("%s-%d.png", name, width)
	require.NoError(b.t, os.WriteFile(filepath.Join(dir, file), png, 0o644))
	b.t.Logf("screenshot %s", filepath.Join(dir, file))
	if shots := os.Getenv("LATCHKEY_CONSOLE_SHOTS"); shots != "" {
		require.NoError(b.t, os.MkdirAll(shots, 0o755))
		require.NoError(b.t, os.WriteFile(filepath.Join(shots, file), png, 0o644))
	}
	b.do(chromedp.EmulateViewport(1280, 900))
}

func TestBrowser_APIKeyLifecycle(t *testing.T) {
	chromiumPath(t)
	f := newFixture(t, nil)
	for _, tc := range []struct{ name, project string }{
		{"under /p/acme", project},
		{"default project at the root", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBrowser(t)
			base := f.consoleURL(tc.project)
			apiProject := tc.project
			if apiProject == "" {
				apiProject = store.DefaultProject
			}

			// The console's root leads to the sign-in page.
			b.do(chromedp.Navigate(base), chromedp.WaitVisible(chromedp.ID("signin-heading")))
			assert.Equal(t, base+"signin", b.location())

			require.Equal(t, http.StatusOK, b.signIn(base, adminEmail, adminPassword))
			assert.Equal(t, base+"keys", b.location())
			assert.Equal(t, "API keys", b.text("h1"))
			assert.Contains(t, b.text(".account"), adminEmail)
			font := run(b, chromedp.Evaluate[string](`getComputedStyle(document.body).fontFamily`))
			assert.Contains(t, font, "system-ui", "the stylesheet is applied")

			// Create a key.
			b.do(chromedp.SendKeys(chromedp.ID("key-name"), "ci-backend"))
			require.Equal(t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`form.create-form button[type="submit"]`))))
			assert.Equal(t, base+"keys", b.location(), "the token page is the POST's response; no redirect")
			assert.Contains(t, b.text(".alert-warning"), "It will not be shown again")
			token := strings.TrimSpace(run(b, chromedp.Value(chromedp.ID("api-token"))))
			require.NotEmpty(t, token)
			assert.Equal(t, 2, strings.Count(token, "."), "a JWT")

			// The copy button is shown by the external script and works.
			b.do(chromedp.WaitVisible(chromedp.CSS(`button[data-copy]`)), chromedp.Click(chromedp.CSS(`button[data-copy]`)))
			b.do(chromedp.Poll[chromedp.Void](`document.getElementById("copy-status").textContent !== ""`, chromedp.WithPollingTimeout(5*time.Second)))
			assert.NotEmpty(t, b.text("#copy-status"))

			// The token works against the API.
			assert.Equal(t, http.StatusOK, f.apiStatus(t, tc.project, token))
			keys, err := f.lk.APIKeys().List(context.Background(), apiProject)
			require.NoError(t, err)
			require.Len(t, keys, 1)
			id := keys[0].ID

			// Back to the list: the key is there, its token is not.
			b.do(chromedp.Click(chromedp.CSS(`a[href="keys"].btn`)), chromedp.WaitVisible(chromedp.ID("api-keys")))
			row := fmt.Sprintf(`tr[data-key-id=%q]`, id)
			assert.Contains(t, b.text(row), "ci-backend")
			html := run(b, chromedp.OuterHTML(chromedp.CSS("html")))
			assert.NotContains(t, html, token)

			// Revoke it, through the confirmation step.
			b.do(chromedp.Click(chromedp.CSS(row+` a[href^="revoke?"]`)), chromedp.WaitVisible(chromedp.CSS(`form[action="revoke"]`)))
			assert.Equal(t, base+"revoke?id="+id, b.location())
			assert.Contains(t, b.text("h1"), "Revoke “ci-backend”?")
			assert.Equal(t, http.StatusOK, f.apiStatus(t, tc.project, token), "not revoked before confirming")
			require.Equal(t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`form[action="revoke"] button[type="submit"]`))))
			assert.Equal(t, base+"keys", b.location())
			assert.Contains(t, b.text(".alert-success"), "Revoked “ci-backend”")
			assert.Contains(t, b.text(row), "Revoked")

			// Refused at once.
			assert.Equal(t, http.StatusUnauthorized, f.apiStatus(t, tc.project, token))

			// Sign out: the console is closed again.
			require.Equal(t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`form[action="signout"] button`))))
			assert.Equal(t, base+"signin?signedout", b.location())
			b.do(chromedp.Navigate(base+"keys"), chromedp.WaitVisible(chromedp.ID("signin-heading")))
			b.noConsoleErrors()
		})
	}
}

func TestBrowser_WrongPassword(t *testing.T) {
	chromiumPath(t)
	f := newFixture(t, nil)
	b := newBrowser(t)
	base := f.consoleURL(project)

	var messages []string
	for _, cred := range [][2]string{
		{adminEmail, "not the password"},
		{"nobody@acme.test", adminPassword},
	} {
		require.Equal(t, http.StatusOK, b.signIn(base, cred[0], cred[1]))
		assert.Equal(t, base+"signin", b.location())
		msg := b.text("#signin-error")
		messages = append(messages, msg)
		assert.Equal(t, cred[0], run(b, chromedp.Value(chromedp.ID("email"))), "the email is kept")
		assert.Empty(t, run(b, chromedp.Value(chromedp.ID("password"))), "the password is not")
	}
	assert.Equal(t, "The email or password is incorrect.", messages[0])
	assert.Equal(t, messages[0], messages[1], "a wrong password and an unknown email get the same message")
	b.noConsoleErrors()
}

func TestBrowser_NonAdmin(t *testing.T) {
	chromiumPath(t)
	f := newFixture(t, nil)
	b := newBrowser(t)
	base := f.consoleURL(project)

	assert.Equal(t, http.StatusForbidden, b.signIn(base, devEmail, devPassword))
	assert.Equal(t, "Not an administrator", b.text("h1"))
	assert.Contains(t, b.text("main"), "is not an administrator of project acme")
	// No session: the key list sends the browser back to sign in.
	b.do(chromedp.Navigate(base+"keys"), chromedp.WaitVisible(chromedp.ID("signin-heading")))
}

func TestBrowser_CrossOriginPostRefused(t *testing.T) {
	chromiumPath(t)
	f := newFixture(t, nil)
	b := newBrowser(t)
	base := f.consoleURL(project)
	require.Equal(t, http.StatusOK, b.signIn(base, adminEmail, adminPassword))

	// A page on another origin that posts a form to the console as soon as
	// it loads. It cannot know the form token; it guesses one.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Free prizes</title>
<form id="f" method="post" action="%skeys">
<input name="name" value="planted-by-evil"><input name="form_token" value="guess">
</form>
<script>document.getElementById("f").submit()</script>`, base)
	}))
	defer evil.Close()
	port := evil.URL[strings.LastIndex(evil.URL, ":")+1:]

	for _, origin := range []string{
		evil.URL,                   // 127.0.0.1 on another port: same site, another origin; the cookie is sent
		"http://localhost:" + port, // another site: SameSite=Strict withholds the cookie, too
	} {
		t.Run(origin, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(b.ctx, actionTimeout)
			defer cancel()
			responses := chromedp.Events(ctx, network.ResponseReceived)
			b.do(chromedp.Navigate(origin))
			status := 0
			for ev, err := range responses {
				require.NoError(t, err, "waiting for the console's answer")
				if ev.Type == network.ResourceTypeDocument && ev.Response.URL == base+"keys" {
					status = int(ev.Response.Status)
					break
				}
			}
			assert.Equal(t, http.StatusForbidden, status)
			b.do(chromedp.WaitVisible(chromedp.ID("error-heading")))
			assert.Equal(t, "Request refused", b.text("h1"))
		})
	}
	keys, err := f.lk.APIKeys().List(context.Background(), project)
	require.NoError(t, err)
	assert.Empty(t, keys, "no key was created")
}

// TestBrowser_Screenshots renders the pages at 1280 px and 390 px for
// review: the key list with a few keys, the token page, the revocation
// page, the signing keys and the sign-in page.
func TestBrowser_Screenshots(t *testing.T) {
	chromiumPath(t)
	f := newFixture(t, nil)
	// The setup acts on the command line, as an operator would.
	ctx := audit.NewContext(context.Background(), audit.CLI)
	dir := t.TempDir()

	// A key list with some history: a used key, an unused one, a revoked
	// one, and a second signing key, of another algorithm (RS256).
	used, usedToken, err := f.lk.APIKeys().Create(ctx, project, "billing-worker")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, f.apiStatus(t, project, usedToken))
	_, _, err = f.lk.APIKeys().Create(ctx, project, "nightly analytics export")
	require.NoError(t, err)
	old, _, err := f.lk.APIKeys().Create(ctx, project, "legacy-cron")
	require.NoError(t, err)
	require.NoError(t, f.lk.APIKeys().Revoke(ctx, project, old.ID))
	_, err = f.lk.Keyring().RotateTo(ctx, project, keys.RS256)
	require.NoError(t, err)

	b := newBrowser(t)
	base := f.consoleURL(project)
	b.do(chromedp.Navigate(base+"signin"), chromedp.WaitVisible(chromedp.ID("email")))
	for _, w := range []int64{1280, 390} {
		b.screenshot(dir, "signin", w)
	}
	require.Equal(t, http.StatusOK, b.signIn(base, adminEmail, adminPassword))

	// The token page of a new key.
	b.do(chromedp.SendKeys(chromedp.ID("key-name"), "ci-deploy"))
	require.Equal(t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`form.create-form button[type="submit"]`))))
	for _, w := range []int64{1280, 390} {
		b.screenshot(dir, "key-created", w)
	}

	b.do(chromedp.Navigate(base+"keys"), chromedp.WaitVisible(chromedp.ID("api-keys")))
	assert.Contains(t, b.text(fmt.Sprintf(`tr[data-key-id=%q]`, used.ID)), "UTC", "last use is shown")
	for _, w := range []int64{1280, 390} {
		b.screenshot(dir, "keys", w)
	}
	// Keyboard: the first Tab reaches the skip link; Tab by Tab, through
	// the header, the create form (name, scopes, expiry) and the search,
	// to the first (oldest) row's Roll, which shows a focus ring.
	b.do(chromedp.KeyEvent("\t"))
	assert.Equal(t, "skip-link", run(b, chromedp.Evaluate[string](`document.activeElement.className`)))
	var stops []string
	for range 13 {
		b.do(chromedp.KeyEvent("\t"))
		stops = append(stops, run(b, chromedp.Evaluate[string](
			`document.activeElement.tagName === "SELECT" ? "select" : document.activeElement.textContent.trim()`)))
	}
	assert.Equal(t, []string{"Latchkey Console", "Sign out", "API keys", "Signing keys", "Users", "Audit log", "", "", "select",
		"Create key", "", "Search", "Roll billing-worker"}, stops)
	outline := run(b, chromedp.Evaluate[string](`getComputedStyle(document.activeElement).outlineStyle`))
	assert.Equal(t, "solid", outline, "a visible focus ring")
	b.screenshot(dir, "keys-keyboard-focus", 1280)

	b.do(chromedp.Navigate(base+"revoke?id="+used.ID), chromedp.WaitVisible(chromedp.CSS(`form[action="revoke"]`)))
	for _, w := range []int64{1280, 390} {
		b.screenshot(dir, "revoke", w)
	}
	b.do(chromedp.Navigate(base+"signing-keys"), chromedp.WaitVisible(chromedp.ID("signing-keys")))
	for _, w := range []int64{1280, 390} {
		b.screenshot(dir, "signing-keys", w)
	}
	b.do(chromedp.Navigate(base+"rotate"), chromedp.WaitVisible(chromedp.CSS(`form[action="rotate"]`)))
	for _, w := range []int64{1280, 390} {
		b.screenshot(dir, "rotate", w)
	}
	signing, err := f.st.ListSigningKeys(ctx, project)
	require.NoError(t, err)
	b.do(chromedp.Navigate(base+"retire?kid="+signing[0].ID), chromedp.WaitVisible(chromedp.ID("retire-stops")))
	assert.Contains(t, b.text("#retire-stops"), "Retiring it stops 2 active API keys")
	for _, w := range []int64{1280, 390} {
		b.screenshot(dir, "retire", w)
	}

	// Users: a few, with tags, one disabled, one with a long address.
	for _, u := range []struct {
		email string
		tags  []string
	}{
		{"grace.hopper@acme.test", []string{"admin", "ops"}},
		{"support-team-lead.with.a.rather.long.address@subdivision.acme.test", []string{"support", "eu-west", "oncall"}},
		{"ken@acme.test", nil},
	} {
		_, err := f.lk.Users().Create(ctx, project, u.email, adminPassword, u.tags)
		require.NoError(t, err)
	}
	dev := f.user(t, project, devEmail)
	_, err = f.lk.Users().Disable(ctx, project, dev.ID)
	require.NoError(t, err)
	b.do(chromedp.Navigate(base+"users?limit=4"), chromedp.WaitVisible(chromedp.ID("users")))
	for _, w := range []int64{1280, 390} {
		b.screenshot(dir, "users", w)
	}
	b.do(chromedp.SendKeys(chromedp.ID("new-email"), "lin@acme.test"), chromedp.SendKeys(chromedp.ID("new-tags"), "support"))
	require.Equal(t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`form.user-form button[type="submit"]`))))
	for _, w := range []int64{1280, 390} {
		b.screenshot(dir, "user-created", w)
	}
	b.do(chromedp.Navigate(base+"user?id="+dev.ID), chromedp.WaitVisible(chromedp.ID("tags")))
	for _, w := range []int64{1280, 390} {
		b.screenshot(dir, "user-disabled", w)
	}
	grace := f.user(t, project, "grace.hopper@acme.test")
	b.do(chromedp.Navigate(base+"disable?id="+grace.ID), chromedp.WaitVisible(chromedp.CSS(`form[action="disable"]`)))
	for _, w := range []int64{1280, 390} {
		b.screenshot(dir, "disable", w)
	}
	admin := f.user(t, project, adminEmail)
	b.do(chromedp.Navigate(base+"user?id="+admin.ID), chromedp.WaitVisible(chromedp.ID("self-disable")))
	for _, w := range []int64{1280, 390} {
		b.screenshot(dir, "user-self", w)
	}

	// The audit log, with a failed sign-in from elsewhere among the
	// entries, one page of ten.
	require.Equal(t, http.StatusOK, f.newClient(t, project).signIn("nobody@acme.test", "guess").status)
	b.do(chromedp.Navigate(base+"audit?limit=10"), chromedp.WaitVisible(chromedp.ID("audit-log")))
	for _, w := range []int64{1280, 390} {
		b.screenshot(dir, "audit", w)
	}
	b.noConsoleErrors()
}
