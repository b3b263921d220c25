package console_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

// rowIDs returns the data-<attr> values of the rows of the current page's
// table, in order.
func (b *browser) rowIDs(attr string) []string {
	b.t.Helper()
	return run(b, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("tbody tr[data-`+attr+`]")).map(e => e.getAttribute("data-`+attr+`"))`))
}

// hasNext reports whether the current page links to a next page.
func (b *browser) hasNext() bool {
	b.t.Helper()
	return run(b, chromedp.Evaluate[bool](`document.querySelector('a[rel="next"]') !== null`))
}

// pageThrough collects the rows' data-<attr> values of the current list and
// of every next page, clicking the next link, and returns them and the
// page sizes.
func (b *browser) pageThrough(attr string) ([]string, []int) {
	b.t.Helper()
	var all []string
	var sizes []int
	for {
		ids := b.rowIDs(attr)
		all = append(all, ids...)
		sizes = append(sizes, len(ids))
		if !b.hasNext() || len(sizes) > 50 {
			return all, sizes
		}
		require.Equal(b.t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`a[rel="next"]`))))
	}
}

// signOut clicks the sign-out button.
func (b *browser) signOut() {
	b.t.Helper()
	require.Equal(b.t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`form[action="signout"] button`))))
	require.Contains(b.t, b.location(), "signin?signedout")
}

func TestBrowser_UserList(t *testing.T) {
	chromiumPath(t)
	f := newFixture(t, nil)
	seeded := f.seedUsers(t, project, 60)
	all := append([]string{f.user(t, project, adminEmail).ID, f.user(t, project, devEmail).ID}, seeded...)
	b := newBrowser(t)
	base := f.consoleURL(project)
	require.Equal(t, http.StatusOK, b.signIn(base, adminEmail, adminPassword))

	// The tab leads to the list, oldest first, 25 a page.
	require.Equal(t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`nav.tabs a[href="users"]`))))
	assert.Equal(t, "Users", b.text("h1"))
	assert.Contains(t, b.text(".list-note"), "Oldest first")
	ids, sizes := b.pageThrough("user-id")
	assert.Equal(t, all, ids)
	assert.Equal(t, []int{25, 25, 12}, sizes)
	assert.Contains(t, b.location(), "cursor=")
	require.Equal(t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`.pager a:not([rel])`))))
	assert.Equal(t, all[:25], b.rowIDs("user-id"), "back to the first page")

	// Search by prefix, in pages of 4: the search keeps the page size and
	// the next links keep the search.
	b.do(chromedp.Navigate(base+"users?limit=4"), chromedp.WaitVisible(chromedp.ID("search-email")))
	b.do(chromedp.SendKeys(chromedp.ID("search-email"), "USER-1"))
	require.Equal(t, http.StatusOK, b.navigation(chromedp.KeyEvent("\r")))
	assert.Contains(t, b.text("#list-heading"), "“USER-1”")
	ids, sizes = b.pageThrough("user-id")
	assert.Equal(t, seeded[10:20], ids)
	assert.Equal(t, []int{4, 4, 2}, sizes)
	b.noConsoleErrors()
}

func TestBrowser_UserLifecycle(t *testing.T) {
	chromiumPath(t)
	f := newFixture(t, nil)
	b := newBrowser(t)
	base := f.consoleURL(project)
	dev := f.user(t, project, devEmail)
	auditedBefore := len(f.storedAudit(t, project, store.AuditFilter{}))

	// A failed sign-in, then the administrator.
	require.Equal(t, http.StatusOK, b.signIn(base, adminEmail, "not the password"))
	require.Equal(t, http.StatusOK, b.signIn(base, adminEmail, adminPassword))

	// Create an administrator with a generated password.
	b.do(chromedp.Navigate(base+"users"), chromedp.WaitVisible(chromedp.ID("new-email")))
	b.do(chromedp.SendKeys(chromedp.ID("new-email"), "frank@acme.test"), chromedp.SendKeys(chromedp.ID("new-tags"), "admin, support"))
	require.Equal(t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`form.user-form button[type="submit"]`))))
	assert.Equal(t, "User frank@acme.test created", b.text("h1"))
	assert.Contains(t, b.text(".alert-warning"), "It will not be shown again")
	password := run(b, chromedp.Value(chromedp.ID("new-password")))
	require.Len(t, password, 26)
	b.do(chromedp.WaitVisible(chromedp.CSS(`button[data-copy]`)), chromedp.Click(chromedp.CSS(`button[data-copy]`)))
	b.do(chromedp.Poll[chromedp.Void](`document.getElementById("copy-status").textContent !== ""`, chromedp.WithPollingTimeout(5*time.Second)))
	frank := f.user(t, project, "frank@acme.test")
	assert.Equal(t, []string{"admin", "support"}, frank.Tags)

	// Sign in as them.
	b.signOut()
	require.Equal(t, http.StatusOK, b.signIn(base, "frank@acme.test", password))
	assert.Equal(t, base+"keys", b.location())
	assert.Contains(t, b.text(".account"), "frank@acme.test")
	b.signOut()
	require.Equal(t, http.StatusOK, b.signIn(base, adminEmail, adminPassword))

	// The developer has a session of the API; disabling them in the
	// browser ends it at the next request.
	token := f.apiLogin(t, project, devEmail, devPassword)
	require.Equal(t, http.StatusOK, f.apiStatus(t, project, token))
	b.do(chromedp.Navigate(base+"users"), chromedp.WaitVisible(chromedp.ID("search-email")))
	b.do(chromedp.SendKeys(chromedp.ID("search-email"), "dev@"))
	require.Equal(t, http.StatusOK, b.navigation(chromedp.KeyEvent("\r")))
	assert.Equal(t, []string{dev.ID}, b.rowIDs("user-id"))
	require.Equal(t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`tr[data-user-id="`+dev.ID+`"] a.btn`))))
	assert.Equal(t, devEmail, b.text("h1"))
	require.Equal(t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`a[href^="disable?"]`))))
	assert.Equal(t, "Disable dev@acme.test?", b.text("h1"))
	assert.Contains(t, b.text(".card-danger"), "Every session of this user ends at once, on every server")
	assert.Equal(t, http.StatusOK, f.apiStatus(t, project, token), "not before confirming")
	require.Equal(t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`form[action="disable"] button[type="submit"]`))))
	assert.Contains(t, b.text(".alert-success"), "Disabled dev@acme.test.")
	assert.Equal(t, http.StatusUnauthorized, f.apiStatus(t, project, token), "the same token is refused")

	// The audit log shows each of those actions, newest first, in pages.
	var want []string
	for _, e := range f.storedAudit(t, project, store.AuditFilter{}) {
		want = append(want, e.ID)
	}
	b.do(chromedp.Navigate(base+"audit?limit=4"), chromedp.WaitVisible(chromedp.ID("audit-log")))
	ids, sizes := b.pageThrough("entry-id")
	assert.Equal(t, want, ids)
	assert.Equal(t, 4, sizes[0])
	entries := f.storedAudit(t, project, store.AuditFilter{})
	var actions []string
	for _, e := range entries[:len(entries)-auditedBefore] {
		actions = append(actions, e.Action)
	}
	assert.Equal(t, []string{
		store.ActionUserDisable,
		store.ActionSignIn, store.ActionSignOut, // the administrator again, frank out
		store.ActionSignIn, store.ActionSignOut, // frank in, the administrator out
		store.ActionUserCreate,
		store.ActionSignIn, store.ActionSignInFailed,
	}, actions)

	// Filtering by an entry's action, by clicking it.
	b.do(chromedp.Navigate(base+"audit"), chromedp.WaitVisible(chromedp.ID("audit-log")))
	require.Equal(t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`tr[data-action="console.signin"] .cell-action a`))))
	shown := run(b, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("tbody tr")).map(e => e.getAttribute("data-action"))`))
	assert.Equal(t, []string{store.ActionSignIn, store.ActionSignIn, store.ActionSignIn}, shown)
	assert.Equal(t, store.ActionSignIn, run(b, chromedp.Value(chromedp.ID("filter-action"))))
	b.noConsoleErrors()

	// Nothing secret reached the page or the log.
	html := run(b, chromedp.OuterHTML(chromedp.CSS("html")))
	assert.NotContains(t, html, password)
	assert.NotContains(t, f.logs.String(), password)
}

func TestBrowser_TwoInstances(t *testing.T) {
	chromiumPath(t)
	f := newFixture(t, nil)
	ctx := context.Background()
	_, srvB := f.second(t)
	baseA := f.consoleURL(project)
	baseB := srvB.URL + "/p/" + project + "/console/"
	require.NotEqual(t, baseA, baseB)
	b := newBrowser(t)

	// Signed in on A; the same browser on B is signed in too (cookies do
	// not depend on the port), with no session kept in either's memory.
	require.Equal(t, http.StatusOK, b.signIn(baseA, adminEmail, adminPassword))
	require.Equal(t, http.StatusOK, b.navigation(chromedp.Navigate(baseB+"keys")))
	assert.Equal(t, baseB+"keys", b.location())
	assert.Contains(t, b.text(".account"), adminEmail)

	// A key created on B's form, revoked through A's confirmation.
	b.do(chromedp.SendKeys(chromedp.ID("key-name"), "made-on-b"))
	require.Equal(t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`form.create-form button[type="submit"]`))))
	token := strings.TrimSpace(run(b, chromedp.Value(chromedp.ID("api-token"))))
	require.Equal(t, http.StatusOK, f.apiStatus(t, project, token))
	keys, err := f.lk.APIKeys().List(ctx, project)
	require.NoError(t, err)
	require.Len(t, keys, 1)
	require.Equal(t, http.StatusOK, b.navigation(chromedp.Navigate(baseA+"revoke?id="+keys[0].ID)))
	require.Equal(t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`form[action="revoke"] button[type="submit"]`))))
	assert.Contains(t, b.text(".alert-success"), "Revoked “made-on-b”")
	assert.Equal(t, http.StatusUnauthorized, f.apiStatus(t, project, token))

	// Signed out on B: A sends the browser to sign in.
	require.Equal(t, http.StatusOK, b.navigation(chromedp.Navigate(baseB+"keys")))
	b.signOut()
	b.do(chromedp.Navigate(baseA+"keys"), chromedp.WaitVisible(chromedp.ID("signin-heading")))
	assert.Equal(t, baseA+"signin", b.location())
	b.noConsoleErrors()
}
