package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

var auditRowRE = regexp.MustCompile(`<tr data-entry-id="([^"]+)" data-action="([^"]+)">`)

// listedAudit pages through the audit log from page, following the next
// links, and returns the entry ids and actions in the order shown, and the
// page sizes.
func (c *client) listedAudit(page string) (ids, actions []string, sizes []int) {
	c.t.Helper()
	for page != "" {
		r := c.get(page)
		require.Equal(c.t, http.StatusOK, r.status, r.body)
		rows := auditRowRE.FindAllStringSubmatch(r.body, -1)
		for _, m := range rows {
			ids = append(ids, m[1])
			actions = append(actions, m[2])
		}
		sizes = append(sizes, len(rows))
		page = ""
		if m := nextPageLink.FindStringSubmatch(r.body); m != nil {
			page = strings.ReplaceAll(m[1], "&amp;", "&")
		}
		require.Less(c.t, len(sizes), 100, "the pages never end")
	}
	return ids, actions, sizes
}

// storedAudit returns the project's whole audit log, newest first, as the
// store lists it.
func (f *fixture) storedAudit(t *testing.T, p string, filter store.AuditFilter) []store.AuditEntry {
	t.Helper()
	page, err := f.st.ListAudit(context.Background(), p, filter, paginate.Request{Limit: paginate.MaxLimit})
	require.NoError(t, err)
	require.False(t, page.HasMore)
	return page.Items
}

func TestConsole_AuditLog(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	admin := f.user(t, project, adminEmail)
	dev := f.user(t, project, devEmail)
	c := f.newClient(t, project)
	setup := len(f.storedAudit(t, project, store.AuditFilter{})) // the fixture's users and first signing key
	otherSetup := f.storedAudit(t, otherProject, store.AuditFilter{})

	// Sign-in failures: an unknown account, a wrong password, a user who
	// is not an administrator.
	require.Equal(t, http.StatusOK, c.signIn("nobody@acme.test", adminPassword).status)
	require.Equal(t, http.StatusOK, c.signIn(devEmail, "wrong").status)
	require.Equal(t, http.StatusForbidden, c.signIn(devEmail, devPassword).status)
	formToken := c.mustSignIn()
	post := func(page string, form url.Values) response {
		t.Helper()
		form.Set("form_token", formToken)
		r := c.post(page, form)
		require.Less(t, r.status, 400, "%s: %s", page, r.body)
		return r
	}

	// Keys and signing keys.
	c.createKey(formToken, "audited")
	keys, err := f.lk.APIKeys().List(ctx, project)
	require.NoError(t, err)
	key := keys[0].ID
	post("revoke", url.Values{"id": {key}})
	firstSK, err := f.st.ActiveSigningKey(ctx, project)
	require.NoError(t, err)
	post("rotate", url.Values{})
	secondSK, err := f.st.ActiveSigningKey(ctx, project)
	require.NoError(t, err)
	post("retire", url.Values{"kid": {firstSK.ID}})

	// Users.
	post("users", url.Values{"email": {"erin@acme.test"}, "password": {"erin's password"}})
	erin := f.user(t, project, "erin@acme.test")
	post("user-tags", url.Values{"id": {erin.ID}, "tags": {"support"}})
	post("user-password", url.Values{"id": {erin.ID}, "password": {"another password"}})
	_, refresh := f.apiSession(t, project, "erin@acme.test", "another password")
	f.apiLogout(t, project, refresh)
	post("disable", url.Values{"id": {erin.ID}})
	post("enable", url.Values{"id": {erin.ID}})
	post("signout", url.Values{})

	type entry struct{ action, actor, target string }
	want := []entry{
		{store.ActionSignOut, admin.ID, admin.ID},
		{store.ActionUserEnable, admin.ID, erin.ID},
		{store.ActionUserDisable, admin.ID, erin.ID},
		{store.ActionSessionLogout, "", "rf_"},
		{store.ActionUserPassword, admin.ID, erin.ID},
		{store.ActionUserUpdate, admin.ID, erin.ID},
		{store.ActionUserCreate, admin.ID, erin.ID},
		{store.ActionSigningRetire, admin.ID, firstSK.ID},
		{store.ActionSigningRotate, admin.ID, secondSK.ID},
		{store.ActionAPIKeyRevoke, admin.ID, key},
		{store.ActionAPIKeyCreate, admin.ID, key},
		{store.ActionSignIn, admin.ID, admin.ID},
		{store.ActionSignInFailed, dev.ID, dev.ID},
		{store.ActionSignInFailed, "", dev.ID},
		{store.ActionSignInFailed, "", ""},
	}
	stored := f.storedAudit(t, project, store.AuditFilter{})
	require.Len(t, stored, setup+len(want))
	for i, w := range want {
		e := stored[i]
		assert.Equal(t, w.action, e.Action, "entry %d", i)
		if w.action == store.ActionSessionLogout {
			assert.True(t, strings.HasPrefix(e.Target, w.target), "a logout names the session")
			continue
		}
		assert.Equal(t, w.actor, e.Actor, "entry %d (%s)", i, w.action)
		assert.Equal(t, w.target, e.Target, "entry %d (%s)", i, w.action)
		assert.Equal(t, "127.0.0.1", e.ClientAddr, "entry %d (%s)", i, w.action)
		assert.Equal(t, project, e.ProjectID)
	}
	assert.Equal(t, otherSetup, f.storedAudit(t, otherProject, store.AuditFilter{}), "nothing crosses into another project")

	// The page lists them newest first, by the list rules, however it is
	// paged.
	c.mustSignIn()
	stored = f.storedAudit(t, project, store.AuditFilter{})
	var storedIDs, storedActions []string
	for _, e := range stored {
		storedIDs = append(storedIDs, e.ID)
		storedActions = append(storedActions, e.Action)
	}
	ids, actions, sizes := c.listedAudit("audit")
	assert.Equal(t, storedIDs, ids)
	assert.Equal(t, storedActions, actions)
	total := setup + len(want) + 1 // and the sign-in just now
	assert.Equal(t, []int{total}, sizes)
	ids, _, sizes = c.listedAudit("audit?limit=5")
	assert.Equal(t, storedIDs, ids)
	assert.Equal(t, []int{5, 5, 5, total - 15}, sizes)

	page := c.get("audit")
	for _, s := range []string{adminEmail, admin.ID, erin.ID, "127.0.0.1", "Nobody signed in", "Console sign-in failed", "API key “audited”"} {
		assert.Contains(t, page.body, s)
	}
	for _, e := range stored[:3] {
		assert.Contains(t, page.body, e.At.Format("2006-01-02")+`<span class="sep"> </span><span class="clock">`+e.At.Format("15:04:05.000000")+"</span>",
			"times to the microsecond")
	}
	assert.NotContains(t, page.body, "nobody@acme.test", "a failed sign-in's email is nowhere")
	assert.NotContains(t, string(f.dbFiles(t)), "nobody@acme.test")

	t.Run("filters", func(t *testing.T) {
		_, actions, _ := c.listedAudit("audit?limit=1&action=" + store.ActionSignInFailed)
		assert.Equal(t, []string{store.ActionSignInFailed, store.ActionSignInFailed, store.ActionSignInFailed}, actions)
		ids, _, sizes := c.listedAudit("audit?limit=2&target=" + erin.ID)
		var want []string
		for _, e := range f.storedAudit(t, project, store.AuditFilter{Target: erin.ID}) {
			want = append(want, e.ID)
		}
		assert.Equal(t, want, ids)
		assert.Len(t, ids, 5)
		assert.Equal(t, []int{2, 2, 1}, sizes)
		_, actions, _ = c.listedAudit("audit?action=" + store.ActionUserUpdate + "&target=" + erin.ID)
		assert.Equal(t, []string{store.ActionUserUpdate}, actions)
		r := c.get("audit?action=" + store.ActionUserUpdate)
		assert.Contains(t, r.body, `<option value="user.update" selected>`)
		ids, _, _ = c.listedAudit("audit?target=usr_nobody")
		assert.Empty(t, ids)
	})
	t.Run("bad filters and links", func(t *testing.T) {
		for q, msg := range map[string]string{
			"action=made.up":                     "Unknown action",
			"target=" + url.QueryEscape("a b"):   "Invalid target",
			"target=" + strings.Repeat("x", 129): "Invalid target",
			"cursor=nope":                        "Invalid page link",
			"limit=-1":                           "Invalid page link",
		} {
			r := c.get("audit?" + q)
			assert.Equal(t, http.StatusBadRequest, r.status, q)
			assert.Contains(t, r.body, msg, q)
		}
	})
}

// TestConsole_AuditLogFirstSigningKey checks that a project's first signing
// key is logged as created, and only later keys as rotated.
func TestConsole_AuditLogFirstSigningKey(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	first, err := f.st.ActiveSigningKey(ctx, project)
	require.NoError(t, err)
	created := f.storedAudit(t, project, store.AuditFilter{Target: first.ID})
	require.Len(t, created, 1)
	assert.Equal(t, store.ActionSigningCreate, created[0].Action)

	c := f.newClient(t, project)
	formToken := c.mustSignIn()
	form := url.Values{"form_token": {formToken}}
	require.Less(t, c.post("rotate", form).status, 400)
	second, err := f.st.ActiveSigningKey(ctx, project)
	require.NoError(t, err)
	rotated := f.storedAudit(t, project, store.AuditFilter{Target: second.ID})
	require.Len(t, rotated, 1)
	assert.Equal(t, store.ActionSigningRotate, rotated[0].Action)

	_, actions, _ := c.listedAudit("audit?target=" + first.ID)
	assert.Equal(t, []string{store.ActionSigningCreate}, actions)
	assert.Contains(t, c.get("audit?target="+first.ID).body, ">Signing key created</a>")
	assert.Contains(t, c.get("audit?target="+second.ID).body, ">Signing key rotated</a>")
}
