package console_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/audit"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// A key created with scopes and an expiry in the console carries them; a
// bad scope is refused on the form and nothing is created.
func TestBrowser_CreateKeyWithScopes(t *testing.T) {
	chromiumPath(t)
	f := newFixture(t, nil)
	ctx := context.Background()
	b := newBrowser(t)
	base := f.consoleURL(project)
	require.Equal(t, http.StatusOK, b.signIn(base, adminEmail, adminPassword))

	// A bad scope: the form comes back with the error and what was typed.
	b.do(chromedp.SendKeys(chromedp.ID("key-name"), "bad"), chromedp.SendKeys(chromedp.ID("key-scopes"), "Contacts:Read"))
	require.Equal(t, http.StatusBadRequest, b.navigation(chromedp.Click(chromedp.CSS(`form.create-form button[type="submit"]`))))
	assert.Contains(t, b.text("#key-scopes-error"), "Scopes are names")
	assert.Equal(t, "Contacts:Read", run(b, chromedp.Value(chromedp.ID("key-scopes"))))
	ks, err := f.lk.APIKeys().List(ctx, project)
	require.NoError(t, err)
	require.Empty(t, ks, "a refused form created a key")

	b.do(chromedp.Navigate(base+"keys"), chromedp.WaitVisible(chromedp.ID("key-name")),
		chromedp.SendKeys(chromedp.ID("key-name"), "reports-sync"),
		chromedp.SendKeys(chromedp.ID("key-scopes"), "contacts:read, identity:introspect"),
		chromedp.SetValue(chromedp.ID("key-expires"), "720h"))
	require.Equal(t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`form.create-form button[type="submit"]`))))
	assert.Contains(t, b.text("h1"), "created")
	assert.Contains(t, b.text("#created-scopes"), "contacts:read")
	assert.Contains(t, b.text("#created-scopes"), "identity:introspect")
	token := strings.TrimSpace(run(b, chromedp.Value(chromedp.ID("api-token"))))
	assert.Equal(t, http.StatusOK, f.apiStatus(t, project, token), "contacts:read lists contacts")

	ks, err = f.lk.APIKeys().List(ctx, project)
	require.NoError(t, err)
	require.Len(t, ks, 1)
	assert.Equal(t, []string{"contacts:read", "identity:introspect"}, ks[0].Scopes)
	assert.WithinDuration(t, time.Now().Add(30*24*time.Hour), ks[0].ExpiresAt, time.Hour)

	b.do(chromedp.Navigate(base+"keys"), chromedp.WaitVisible(chromedp.ID("api-keys")))
	row := fmt.Sprintf(`tr[data-key-id=%q]`, ks[0].ID)
	assert.Contains(t, b.text(row+" .cell-scopes"), "contacts:read")
	assert.Contains(t, b.text(row+" .cell-expires"), "UTC")
	// (No check of the console's messages: the refused form's 400 is
	// logged there as a resource that failed to load.)
}

// Rolling a key through its confirmation: the page says when the old key
// stops; the new key is shown once and works, the old one keeps working
// during the overlap and the list says when it stops; the audit log
// records the roll.
func TestBrowser_RollKey(t *testing.T) {
	chromiumPath(t)
	f := newFixture(t, nil)
	ctx := audit.NewContext(context.Background(), audit.CLI)
	old, oldToken, err := f.lk.APIKeys().Create(ctx, project, "billing-worker")
	require.NoError(t, err)
	b := newBrowser(t)
	base := f.consoleURL(project)
	require.Equal(t, http.StatusOK, b.signIn(base, adminEmail, adminPassword))

	row := fmt.Sprintf(`tr[data-key-id=%q]`, old.ID)
	b.do(chromedp.Click(chromedp.CSS(row+` a[href^="roll?"]`)), chromedp.WaitVisible(chromedp.CSS(`form[action="roll"]`)))
	assert.Equal(t, base+"roll?id="+old.ID, b.location())
	assert.Contains(t, b.text("h1"), "Roll “billing-worker”?")
	assert.Contains(t, b.text("#roll-stops"), "at the end of the overlap the old key is refused")
	assert.Contains(t, b.text(`label[for="overlap-0"]`), "1 day: the old key stops at")
	assert.Equal(t, http.StatusOK, f.apiStatus(t, project, oldToken), "nothing changed before confirming")
	b.screenshot(t.TempDir(), "roll", 1280)

	require.Equal(t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`form[action="roll"] button[type="submit"]`))))
	assert.Contains(t, b.text("h1"), "rolled")
	assert.Contains(t, b.text("#rolled-note"), "keeps working until")
	newToken := strings.TrimSpace(run(b, chromedp.Value(chromedp.ID("api-token"))))
	require.NotEmpty(t, newToken)
	assert.Equal(t, http.StatusOK, f.apiStatus(t, project, newToken), "the new key")
	assert.Equal(t, http.StatusOK, f.apiStatus(t, project, oldToken), "the old key during the overlap")

	got, err := f.st.GetAPIKey(ctx, project, old.ID)
	require.NoError(t, err)
	require.NotEmpty(t, got.RolledTo)
	assert.WithinDuration(t, time.Now().Add(24*time.Hour), got.RevokesAt, time.Hour)

	b.do(chromedp.Navigate(base+"keys"), chromedp.WaitVisible(chromedp.ID("api-keys")))
	assert.Contains(t, b.text(row+" .cell-status"), "Rolled")
	assert.Contains(t, b.text(row+" .cell-status"), "stops")
	nodes := run(b, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll('%s a[href^="roll?"]').length`, row)))
	assert.Zero(t, nodes, "a rolled key offers no second roll")

	for _, action := range []string{store.ActionAPIKeyRoll, store.ActionAPIKeyCreate} {
		page, err := f.st.ListAudit(ctx, project, store.AuditFilter{Action: action}, paginate.Request{Limit: 10})
		require.NoError(t, err)
		require.NotEmptyf(t, page.Items, "audit entries of %s", action)
		assert.NotEqual(t, audit.CLI.ID, page.Items[0].Actor, "the roll is the signed-in user's")
	}
	b.do(chromedp.Navigate(base+"audit"), chromedp.WaitVisible(chromedp.ID("audit-log")))
	assert.Contains(t, b.text("#audit-log"), "API key rolled")
	b.noConsoleErrors()
}

// The key list pages like every list, and filters by the start of the
// name, keeping the filter across pages.
func TestBrowser_KeyListPages(t *testing.T) {
	chromiumPath(t)
	f := newFixture(t, nil)
	ctx := audit.NewContext(context.Background(), audit.CLI)
	for i := range 24 {
		name := fmt.Sprintf("worker-%02d", i)
		if i%2 == 1 {
			name = fmt.Sprintf("batch-%02d", i)
		}
		k, _, err := f.lk.APIKeys().Create(ctx, project, name)
		require.NoError(t, err)
		if i%3 == 0 {
			require.NoError(t, f.lk.APIKeys().Revoke(ctx, project, k.ID))
		}
	}
	b := newBrowser(t)
	base := f.consoleURL(project)
	require.Equal(t, http.StatusOK, b.signIn(base, adminEmail, adminPassword))
	names := func() []string {
		return run(b, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#api-keys .key-name")).map(e => e.textContent)`))
	}

	b.do(chromedp.Navigate(base+"keys?limit=10"), chromedp.WaitVisible(chromedp.ID("api-keys")))
	var seen []string
	for page := 0; ; page++ {
		require.Less(t, page, 5, "the pages do not end")
		got := names()
		require.LessOrEqual(t, len(got), 10)
		seen = append(seen, got...)
		more := run(b, chromedp.Evaluate[bool](`document.querySelector('a[rel="next"]') !== null`))
		if !more {
			break
		}
		b.do(chromedp.Click(chromedp.CSS(`a[rel="next"]`)), chromedp.WaitVisible(chromedp.CSS(`nav.pager`)))
		assert.Contains(t, b.location(), "cursor=")
		assert.Contains(t, b.location(), "limit=10")
	}
	require.Len(t, seen, 24, "every key once, over the pages")
	assert.Equal(t, "worker-00", seen[0], "oldest first")
	assert.Equal(t, "batch-23", seen[23])

	b.do(chromedp.Navigate(base+"keys?limit=5"), chromedp.WaitVisible(chromedp.ID("search-name")),
		chromedp.SendKeys(chromedp.ID("search-name"), "batch"))
	require.Equal(t, http.StatusOK, b.navigation(chromedp.Click(chromedp.CSS(`form.search-form button[type="submit"]`))))
	assert.Contains(t, b.text("#list-heading"), "“batch”")
	var filtered []string
	for page := 0; ; page++ {
		require.Less(t, page, 5)
		filtered = append(filtered, names()...)
		if !run(b, chromedp.Evaluate[bool](`document.querySelector('a[rel="next"]') !== null`)) {
			break
		}
		b.do(chromedp.Click(chromedp.CSS(`a[rel="next"]`)), chromedp.WaitVisible(chromedp.CSS(`nav.pager`)))
		assert.Contains(t, b.location(), "name=batch", "the filter is kept across pages")
	}
	require.Len(t, filtered, 12)
	for _, n := range filtered {
		assert.True(t, strings.HasPrefix(n, "batch-"), n)
	}
	b.do(chromedp.Navigate(base+"keys?name=nothing"), chromedp.WaitVisible(chromedp.CSS(".empty-title")))
	assert.Contains(t, b.text(".empty-title"), "No key's name starts with")
	b.noConsoleErrors()
}
