package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

var (
	userRowID     = regexp.MustCompile(`<tr data-user-id="([^"]+)"`)
	nextPageLink  = regexp.MustCompile(`<a class="btn btn-secondary btn-small" href="([^"]+)" rel="next">`)
	passwordField = regexp.MustCompile(`<input id="new-password" class="token token-line"[^>]* value="([^"]+)">`)
)

// listedUsers pages through the user list from page, following the next
// links, and returns the ids in the order shown and the number of pages.
func (c *client) listedUsers(page string) ([]string, []int) {
	c.t.Helper()
	var ids []string
	var sizes []int
	for page != "" {
		r := c.get(page)
		require.Equal(c.t, http.StatusOK, r.status, r.body)
		n := 0
		for _, m := range userRowID.FindAllStringSubmatch(r.body, -1) {
			ids = append(ids, m[1])
			n++
		}
		sizes = append(sizes, n)
		page = ""
		if m := nextPageLink.FindStringSubmatch(r.body); m != nil {
			page = strings.ReplaceAll(m[1], "&amp;", "&")
		}
		require.Less(c.t, len(sizes), 100, "the pages never end")
	}
	return ids, sizes
}

// manyTags returns n distinct tags, separated by spaces.
func manyTags(n int) string {
	tags := make([]string, n)
	for i := range tags {
		tags[i] = "t" + strconv.Itoa(i)
	}
	return strings.Join(tags, " ")
}

// generatedPassword returns the password a page shows once.
func generatedPassword(t *testing.T, body string) string {
	t.Helper()
	m := passwordField.FindStringSubmatch(body)
	require.NotNil(t, m, "no password on the page:\n%s", body)
	return m[1]
}

func TestConsole_UserList(t *testing.T) {
	f := newFixture(t, nil)
	c := f.newClient(t, project)
	c.mustSignIn()
	seeded := f.seedUsers(t, project, 60)
	all := append([]string{f.user(t, project, adminEmail).ID, f.user(t, project, devEmail).ID}, seeded...)

	t.Run("every user, oldest first, in pages", func(t *testing.T) {
		ids, sizes := c.listedUsers("users")
		assert.Equal(t, all, ids)
		assert.Equal(t, []int{25, 25, 12}, sizes)
		ids, sizes = c.listedUsers("users?limit=7")
		assert.Equal(t, all, ids, "the limit is kept from page to page")
		assert.Equal(t, []int{7, 7, 7, 7, 7, 7, 7, 7, 6}, sizes)
		r := c.get("users")
		assert.Contains(t, r.body, "Oldest first")
		assert.Contains(t, r.body, "25 shown, more follow")
	})
	t.Run("search by email prefix keeps keyset paging", func(t *testing.T) {
		ids, sizes := c.listedUsers("users?limit=4&email=" + url.QueryEscape("  USER-1"))
		assert.Equal(t, seeded[10:20], ids, "user-10 to user-19, case-insensitively")
		assert.Equal(t, []int{4, 4, 2}, sizes)
		r := c.get("users?email=user-1&limit=4")
		assert.Contains(t, r.body, `value="user-1"`, "the search box keeps the search")
		ids, _ = c.listedUsers("users?email=nobody")
		assert.Empty(t, ids)
		ids, _ = c.listedUsers("users?email=" + url.QueryEscape("user_"))
		assert.Empty(t, ids, "_ is a character, not a wildcard")
	})
	t.Run("bad links", func(t *testing.T) {
		for _, q := range []string{"limit=0", "limit=x", "cursor=nope", "cursor=usr_1:2026", "limit=1&limit=2"} {
			r := c.get("users?" + q)
			assert.Equal(t, http.StatusBadRequest, r.status, q)
			assert.Contains(t, r.body, "Invalid page link", q)
		}
		r := c.get("users?email=" + strings.Repeat("a", 255))
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, r.body, "Search for at most 254 characters.")
		for _, q := range []string{"email=a%00", "email=%FF", "email=an%C3"} {
			r := c.get("users?" + q)
			assert.Equal(t, http.StatusBadRequest, r.status, q)
			assert.Contains(t, r.body, "Invalid search", q)
		}
		ids, sizes := c.listedUsers("users?limit=1000")
		assert.Equal(t, all, ids, "a limit above the largest is clamped, not refused")
		assert.Equal(t, []int{len(all)}, sizes)
		assert.Contains(t, c.get("users?limit=1000").body, "up to 100 a page")
	})
}

func TestConsole_CreateUser(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	c := f.newClient(t, project)
	formToken := c.mustSignIn()
	count := func() int {
		t.Helper()
		page, err := f.lk.Users().List(ctx, project, "", paginate.Request{Limit: paginate.MaxLimit})
		require.NoError(t, err)
		return len(page.Items)
	}
	before := count()

	t.Run("with a password", func(t *testing.T) {
		r := c.post("users", url.Values{"form_token": {formToken}, "email": {" Carol@Acme.test "}, "tags": {"support, admin support"}, "password": {"carol's own password"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		u := f.user(t, project, "carol@acme.test")
		assert.Equal(t, "user?id="+u.ID, r.header.Get("Location"))
		assert.Equal(t, "Carol@Acme.test", u.Email)
		assert.Equal(t, []string{"support", "admin"}, u.Tags)
		assert.Contains(t, c.get(r.header.Get("Location")).body, "Created Carol@Acme.test with the password you gave.")
		other := f.newClient(t, project)
		assert.Equal(t, http.StatusSeeOther, other.signIn("carol@acme.test", "carol's own password").status, "carol signs in")
	})
	t.Run("with a generated password, shown once", func(t *testing.T) {
		r := c.post("users", url.Values{"form_token": {formToken}, "email": {"dave@acme.test"}, "tags": {""}, "password": {""}})
		require.Equal(t, http.StatusOK, r.status, r.body)
		assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
		assert.Contains(t, r.body, "It will not be shown again")
		password := generatedPassword(t, r.body)
		assert.Len(t, password, 26, "128 random bits")
		for name, vs := range r.header {
			for _, v := range vs {
				assert.NotContains(t, v, password, "header %s", name)
			}
		}
		u := f.user(t, project, "dave@acme.test")
		assert.Empty(t, u.Tags)
		token := f.apiLogin(t, project, "dave@acme.test", password)
		assert.Equal(t, http.StatusOK, f.apiStatus(t, project, token), "dave logs in to the API with it")
		assert.NotContains(t, c.get("user?id="+u.ID).body, password, "never shown again")
		assert.NotContains(t, f.logs.String(), password)
	})
	t.Run("refused", func(t *testing.T) {
		n := count()
		for _, tc := range []struct {
			name     string
			form     url.Values
			status   int
			msg      string
			keptForm string
		}{
			{"bad email", url.Values{"email": {"not an email"}, "tags": {"ops"}}, http.StatusBadRequest, "Email is not an address such as ann@example.com.", `value="ops"`},
			{"named email", url.Values{"email": {"Ann <ann@acme.test>"}}, http.StatusBadRequest, "Email is not an address such as ann@example.com.", ""},
			{"bad tags", url.Values{"email": {"erin@acme.test"}, "tags": {"ok, not!ok"}}, http.StatusBadRequest, "A tag may hold only letters, digits and - _ . :", `value="erin@acme.test"`},
			{"a tag too long", url.Values{"email": {"erin@acme.test"}, "tags": {strings.Repeat("t", 65)}}, http.StatusBadRequest, "A tag must be 1 to 64 characters.", ""},
			{"too many tags", url.Values{"email": {"erin@acme.test"}, "tags": {manyTags(store.MaxTags + 1)}}, http.StatusBadRequest, "More than 32 tags.", ""},
			{"long password", url.Values{"email": {"erin@acme.test"}, "password": {strings.Repeat("p", identity.MaxPasswordLen+1)}}, http.StatusBadRequest, "Password longer than 1024 bytes.", ""},
			{"short password", url.Values{"email": {"erin@acme.test"}, "password": {"pppp"}}, http.StatusBadRequest, "Password shorter than 8 characters.", `value="erin@acme.test"`},
			{"taken email", url.Values{"email": {"ADMIN@acme.test"}}, http.StatusConflict, "This project already has a user with this email.", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				tc.form.Set("form_token", formToken)
				r := c.post("users", tc.form)
				assert.Equal(t, tc.status, r.status)
				assert.Contains(t, r.body, tc.msg)
				assert.Contains(t, r.body, `aria-invalid="true"`)
				assert.Contains(t, r.body, tc.keptForm)
				assert.NotContains(t, r.body, strings.Repeat("p", 100), "a refused password is not echoed")
			})
		}
		assert.Equal(t, n, count(), "nothing was created")
	})
	t.Run("without the form token", func(t *testing.T) {
		r := c.post("users", url.Values{"email": {"mallory@acme.test"}})
		assert.Equal(t, http.StatusForbidden, r.status)
		_, err := f.lk.Users().GetByEmail(ctx, project, "mallory@acme.test")
		assert.ErrorIs(t, err, store.ErrNotFound)
	})
	assert.Equal(t, before+2, count())
}

func TestConsole_ChangeUser(t *testing.T) {
	f := newFixture(t, nil)
	c := f.newClient(t, project)
	formToken := c.mustSignIn()
	admin := f.user(t, project, adminEmail)
	dev := f.user(t, project, devEmail)
	post := func(page string, form url.Values) response {
		t.Helper()
		form.Set("form_token", formToken)
		return c.post(page, form)
	}

	t.Run("tags", func(t *testing.T) {
		page := c.get("user?id=" + dev.ID)
		require.Equal(t, http.StatusOK, page.status)
		assert.Contains(t, page.body, `value="dev"`)
		r := post("user-tags", url.Values{"id": {dev.ID}, "tags": {"dev,  oncall"}})
		require.Equal(t, http.StatusSeeOther, r.status)
		assert.Equal(t, "user?id="+dev.ID, r.header.Get("Location"))
		assert.Equal(t, []string{"dev", "oncall"}, f.user(t, project, devEmail).Tags)
		assert.Contains(t, c.get("user?id="+dev.ID).body, "Saved the tags of dev@acme.test.")

		r = post("user-tags", url.Values{"id": {dev.ID}, "tags": {"bad tag!"}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, r.body, "A tag may hold only letters, digits and - _ . :")
		assert.Equal(t, []string{"dev", "oncall"}, f.user(t, project, devEmail).Tags, "unchanged")
	})
	t.Run("an administrator keeps their own admin tag", func(t *testing.T) {
		page := c.get("user?id=" + admin.ID)
		assert.Contains(t, page.body, "You cannot remove your own <code>admin</code> tag")
		r := post("user-tags", url.Values{"id": {admin.ID}, "tags": {"ops"}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, r.body, "You cannot remove your own admin tag: you would lose access to the console")
		assert.Equal(t, []string{"ops", "admin"}, f.user(t, project, adminEmail).Tags, "unchanged")
		r = post("user-tags", url.Values{"id": {admin.ID}, "tags": {"admin ops owner"}})
		assert.Equal(t, http.StatusSeeOther, r.status, "other changes are fine")
		assert.Equal(t, []string{"admin", "ops", "owner"}, f.user(t, project, adminEmail).Tags)
	})
	t.Run("password", func(t *testing.T) {
		// A new password ends every session the user had, as the CLI's
		// user set-password does.
		token := f.apiLogin(t, project, devEmail, mustPassword(t, f, dev.ID))
		require.Equal(t, http.StatusOK, f.apiStatus(t, project, token))
		r := post("user-password", url.Values{"id": {dev.ID}, "password": {"a brand new password"}})
		require.Equal(t, http.StatusSeeOther, r.status)
		assert.Contains(t, c.get("user?id="+dev.ID).body, "Every session they had started has ended")
		assert.Equal(t, http.StatusUnauthorized, f.apiStatus(t, project, token), "a login token of a session started before")
		token = f.apiLogin(t, project, devEmail, "a brand new password")

		r = post("user-password", url.Values{"id": {dev.ID}, "password": {""}})
		require.Equal(t, http.StatusOK, r.status)
		assert.Equal(t, http.StatusUnauthorized, f.apiStatus(t, project, token), "a generated password ends the sessions too")

		generated := generatedPassword(t, r.body)
		token = f.apiLogin(t, project, devEmail, generated)

		r = post("user-password", url.Values{"id": {dev.ID}, "password": {strings.Repeat("x", identity.MaxPasswordLen+1)}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, r.body, "Password longer than 1024 bytes.")
		f.apiLogin(t, project, devEmail, generated)
		r = post("user-password", url.Values{"id": {dev.ID}, "password": {"1234567"}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, r.body, "Password shorter than 8 characters.")
		assert.NotContains(t, r.body, "1234567", "a refused password is not echoed")
		f.apiLogin(t, project, devEmail, generated)
		assert.Equal(t, http.StatusOK, f.apiStatus(t, project, token), "a refused password ends nothing")
		assert.NotContains(t, f.logs.String(), generated)
	})
	t.Run("disable and enable", func(t *testing.T) {
		token := f.apiLogin(t, project, devEmail, mustPassword(t, f, dev.ID))
		require.Equal(t, http.StatusOK, f.apiStatus(t, project, token))

		page := c.get("disable?id=" + dev.ID)
		require.Equal(t, http.StatusOK, page.status)
		assert.Contains(t, page.body, "Every session of this user ends at once, on every server:")
		assert.Equal(t, http.StatusOK, f.apiStatus(t, project, token), "the confirmation changes nothing")

		r := post("disable", url.Values{"id": {dev.ID}})
		require.Equal(t, http.StatusSeeOther, r.status)
		assert.True(t, f.user(t, project, devEmail).Disabled())
		assert.Equal(t, http.StatusUnauthorized, f.apiStatus(t, project, token), "the session ended at once")
		assert.Contains(t, c.get("user?id="+dev.ID).body, "Every session of theirs has ended, on every server")
		r = c.get("disable?id=" + dev.ID)
		assert.Equal(t, http.StatusSeeOther, r.status, "already disabled")

		r = post("enable", url.Values{"id": {dev.ID}})
		require.Equal(t, http.StatusSeeOther, r.status)
		assert.False(t, f.user(t, project, devEmail).Disabled())
		assert.Equal(t, http.StatusUnauthorized, f.apiStatus(t, project, token), "ended sessions stay ended")
		assert.Contains(t, c.get("user?id="+dev.ID).body, "the sessions that ended when they were disabled stay ended")
	})
	t.Run("an administrator cannot disable themselves", func(t *testing.T) {
		page := c.get("user?id=" + admin.ID)
		assert.Contains(t, page.body, "You cannot disable your own account")
		assert.NotContains(t, page.body, "disable?id=")
		r := c.get("disable?id=" + admin.ID)
		assert.Equal(t, http.StatusSeeOther, r.status)
		r = post("disable", url.Values{"id": {admin.ID}})
		assert.Equal(t, http.StatusSeeOther, r.status)
		assert.Contains(t, c.get("user?id="+admin.ID).body, "You cannot disable your own account: it would sign you out")
		assert.False(t, f.user(t, project, adminEmail).Disabled())
		assert.Equal(t, http.StatusOK, c.get("keys").status, "still signed in")
	})
	t.Run("unknown users and other projects' users", func(t *testing.T) {
		theirs := f.user(t, otherProject, adminEmail)
		for _, id := range []string{"", "usr_nope", theirs.ID, "bad id"} {
			assert.Equal(t, http.StatusNotFound, c.get("user?id="+url.QueryEscape(id)).status, id)
			assert.Equal(t, http.StatusNotFound, c.get("disable?id="+url.QueryEscape(id)).status, id)
			for _, page := range []string{"user-tags", "user-password", "disable", "enable"} {
				r := post(page, url.Values{"id": {id}, "tags": {"admin"}, "password": {"p"}})
				assert.Equal(t, http.StatusNotFound, r.status, "%s %s", page, id)
			}
		}
		after := f.user(t, otherProject, adminEmail)
		assert.Equal(t, theirs, after, "the other project's user is untouched")
	})
}

// An administrator who sets their own password ends their own sessions
// too, the console's included: they are sent to the sign-in page, told
// why, and sign in with the new password.
func TestConsole_OwnPassword(t *testing.T) {
	f := newFixture(t, nil)
	c := f.newClient(t, project)
	formToken := c.mustSignIn()
	admin := f.user(t, project, adminEmail)
	token := f.apiLogin(t, project, adminEmail, adminPassword)

	r := c.post("user-password", url.Values{"form_token": {formToken}, "id": {admin.ID}, "password": {"my own new password"}})
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	assert.Equal(t, "signin?passwordset", r.header.Get("Location"))
	page := c.get("signin?passwordset")
	require.Equal(t, http.StatusOK, page.status)
	assert.Contains(t, page.body, "Your password has changed and your sessions have ended. Sign in with the new password.")
	assert.Equal(t, http.StatusSeeOther, c.get("users").status, "the console session ended")
	assert.Equal(t, http.StatusUnauthorized, f.apiStatus(t, project, token), "the API session ended")

	assert.Contains(t, c.signIn(adminEmail, adminPassword).body, "The email or password is incorrect.", "the old password is refused")
	r = c.signIn(adminEmail, "my own new password")
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	users := c.get("users")
	require.Equal(t, http.StatusOK, users.status)

	// A generated one is shown once, and the page leads to the sign-in.
	r = c.post("user-password", url.Values{"form_token": {field(t, users.body, "form_token")}, "id": {admin.ID}, "password": {""}})
	require.Equal(t, http.StatusOK, r.status, r.body)
	generated := generatedPassword(t, r.body)
	assert.Contains(t, r.body, `href="signin?passwordset">Done, sign in again</a>`)
	assert.Contains(t, r.body, "Your sessions have ended: sign in again with it.")
	assert.Equal(t, http.StatusSeeOther, c.get("users").status, "the console session ended")
	r = c.signIn(adminEmail, generated)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	assert.Equal(t, http.StatusOK, c.get("users").status)
}

// mustPassword gives user id a known password through the service and
// returns it.
func mustPassword(t *testing.T, f *fixture, id string) string {
	t.Helper()
	const pw = "a password for the test"
	require.NoError(t, f.lk.Users().SetPassword(context.Background(), project, id, pw))
	return pw
}

func TestConsole_DisabledOrDemotedAdminIsOut(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	for _, email := range []string{"second@acme.test", "third@acme.test"} {
		_, err := f.lk.Users().Create(ctx, project, email, adminPassword, []string{"admin"})
		require.NoError(t, err)
	}
	c := f.newClient(t, project)
	formToken := c.mustSignIn()
	second, third := f.newClient(t, project), f.newClient(t, project)
	for _, tc := range []struct {
		c     *client
		email string
	}{{second, "second@acme.test"}, {third, "third@acme.test"}} {
		require.Equal(t, http.StatusSeeOther, tc.c.signIn(tc.email, adminPassword).status)
		require.Equal(t, http.StatusOK, tc.c.get("keys").status)
	}

	r := c.post("disable", url.Values{"form_token": {formToken}, "id": {f.user(t, project, "second@acme.test").ID}})
	require.Equal(t, http.StatusSeeOther, r.status)
	r = second.get("keys")
	assert.Equal(t, http.StatusSeeOther, r.status, "a disabled administrator is out at the next click")
	assert.Equal(t, "signin?expired", r.header.Get("Location"))
	assert.Equal(t, http.StatusOK, second.signIn("second@acme.test", adminPassword).status, "and cannot sign in again")

	r = c.post("user-tags", url.Values{"form_token": {formToken}, "id": {f.user(t, project, "third@acme.test").ID}, "tags": {"ops"}})
	require.Equal(t, http.StatusSeeOther, r.status)
	r = third.get("keys")
	assert.Equal(t, http.StatusForbidden, r.status, "one who lost the admin tag too")
	assert.Contains(t, r.body, "Not an administrator")
	assert.Equal(t, http.StatusOK, c.get("keys").status)
}
