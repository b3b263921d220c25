package console_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/audit"
	"github.com/latchkey-dev/latchkey/console"
	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/store"
)

// rowOf returns the table row of the API key id in body.
func rowOf(t *testing.T, body, id string) string {
	t.Helper()
	start := strings.Index(body, `data-key-id="`+id+`"`)
	require.GreaterOrEqual(t, start, 0, "no row of %s", id)
	end := strings.Index(body[start:], "</tr>")
	require.GreaterOrEqual(t, end, 0)
	return body[start : start+end]
}

func TestConsole_SecurityHeaders(t *testing.T) {
	f := newFixture(t, nil)
	c := f.newClient(t, project)
	formToken := c.mustSignIn()

	check := func(t *testing.T, r response, page bool) {
		t.Helper()
		assert.Equal(t, console.ContentSecurityPolicy, r.header.Get("Content-Security-Policy"))
		assert.Equal(t, "DENY", r.header.Get("X-Frame-Options"))
		assert.Equal(t, "no-referrer", r.header.Get("Referrer-Policy"))
		assert.Equal(t, "nosniff", r.header.Get("X-Content-Type-Options"))
		if page {
			assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
			assert.Equal(t, "text/html; charset=utf-8", r.header.Get("Content-Type"))
			assert.NotContains(t, r.body, "<script>", "no inline script")
			assert.NotContains(t, r.body, "style=", "no inline style")
			assert.NotContains(t, r.body, "<style", "no inline style")
		}
	}
	assert.Equal(t, "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; "+
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'", console.ContentSecurityPolicy)

	pages := map[string]response{
		"keys":         c.get("keys"),
		"signing-keys": c.get("signing-keys"),
		"not found":    c.get("nope"),
		"signin":       f.newClient(t, project).get("signin"),
		"bad token":    c.post("keys", url.Values{"name": {"x"}}),
		"cross-origin": c.post("keys", url.Values{"name": {"x"}, "form_token": {formToken}}, "Origin", "https://evil.example"),
	}
	created, _ := c.createKey(formToken, "headers")
	pages["created"] = created
	keys, err := f.lk.APIKeys().List(context.Background(), project)
	require.NoError(t, err)
	pages["revoke"] = c.get("revoke?id=" + keys[0].ID)
	pages["rotate"] = c.get("rotate")
	old, err := f.st.ActiveSigningKey(context.Background(), project)
	require.NoError(t, err)
	require.Equal(t, http.StatusSeeOther, c.post("rotate", url.Values{"form_token": {formToken}}).status)
	pages["retire"] = c.get("retire?kid=" + old.ID)
	dev := f.user(t, project, devEmail)
	pages["users"] = c.get("users")
	pages["user"] = c.get("user?id=" + dev.ID)
	pages["disable"] = c.get("disable?id=" + dev.ID)
	pages["user created"] = c.post("users", url.Values{"form_token": {formToken}, "email": {"new@acme.test"}})
	pages["new password"] = c.post("user-password", url.Values{"form_token": {formToken}, "id": {dev.ID}})
	pages["user refused"] = c.post("users", url.Values{"form_token": {formToken}, "email": {"not an email"}})
	pages["audit"] = c.get("audit")
	pages["audit refused"] = c.get("audit?action=nope")
	pages["no such user"] = c.get("user?id=usr_nope")
	for name, r := range pages {
		t.Run(name, func(t *testing.T) {
			check(t, r, true)
			assert.NotEqual(t, http.StatusInternalServerError, r.status)
		})
	}
	for _, name := range []string{"console.css", "console.js", "icon.svg"} {
		t.Run(name, func(t *testing.T) {
			r := c.get("static/" + name)
			require.Equal(t, http.StatusOK, r.status)
			check(t, r, false)
			assert.NotEmpty(t, r.header.Get("ETag"))
		})
	}
	t.Run("redirect", func(t *testing.T) {
		r := f.newClient(t, project).get("keys")
		require.Equal(t, http.StatusSeeOther, r.status)
		check(t, r, false)
	})
}

func TestConsole_CookieAttributes(t *testing.T) {
	t.Run("plain HTTP", func(t *testing.T) {
		f := newFixture(t, nil)
		for _, tc := range []struct{ project, path, name string }{
			{project, "/p/acme/console/", "latchkey_console_acme"},
			{"", "/console/", "latchkey_console_default"},
		} {
			c := f.newClient(t, tc.project)
			r := c.signIn(adminEmail, adminPassword)
			require.Equal(t, http.StatusSeeOther, r.status, r.body)
			ck := r.cookie(tc.name)
			require.NotNil(t, ck, "Set-Cookie: %v", r.header.Values("Set-Cookie"))
			assert.True(t, ck.HttpOnly)
			assert.Equal(t, http.SameSiteStrictMode, ck.SameSite)
			assert.False(t, ck.Secure)
			assert.Equal(t, tc.path, ck.Path)
			assert.Equal(t, int(console.DefaultMaxLifetime/time.Second), ck.MaxAge)
			assert.Len(t, ck.Value, 43, "256 random bits, base64url")
			signin := r.cookie(strings.Replace(tc.name, "console", "signin", 1))
			require.NotNil(t, signin, "the sign-in cookie is cleared")
			assert.Equal(t, -1, signin.MaxAge)
		}
	})
	t.Run("TLS", func(t *testing.T) {
		f := newFixture(t, &fixtureOptions{tls: true})
		c := f.newClient(t, project)
		page := c.get("signin")
		pre := page.cookie("__Host-latchkey_signin_acme")
		require.NotNil(t, pre)
		assert.True(t, pre.Secure)
		assert.Equal(t, "/", pre.Path)
		r := c.signIn(adminEmail, adminPassword)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		ck := r.cookie("__Host-latchkey_console_acme")
		require.NotNil(t, ck, "Set-Cookie: %v", r.header.Values("Set-Cookie"))
		assert.True(t, ck.Secure)
		assert.True(t, ck.HttpOnly)
		assert.Equal(t, http.SameSiteStrictMode, ck.SameSite)
		assert.Equal(t, "/", ck.Path, "__Host- needs Path=/")
		assert.Empty(t, ck.Domain)
		assert.Equal(t, http.StatusOK, c.get("keys").status)
	})
}

func TestConsole_SignIn(t *testing.T) {
	f := newFixture(t, nil)

	t.Run("success redirects relatively", func(t *testing.T) {
		for _, p := range []string{project, ""} {
			c := f.newClient(t, p)
			r := c.get("")
			assert.Equal(t, http.StatusSeeOther, r.status)
			assert.Equal(t, "keys", r.header.Get("Location"))
			r = c.get("keys")
			assert.Equal(t, http.StatusSeeOther, r.status)
			assert.Equal(t, "signin", r.header.Get("Location"))
			c.mustSignIn()
			r = c.get("signin")
			assert.Equal(t, http.StatusSeeOther, r.status, "signed in: the form leads to the keys")
			assert.Equal(t, "keys", r.header.Get("Location"))
		}
	})

	t.Run("the form says what the console offers", func(t *testing.T) {
		r := f.newClient(t, project).get("signin")
		require.Equal(t, http.StatusOK, r.status)
		for _, s := range []string{"API keys", "signing keys", "users", "audit log"} {
			assert.Contains(t, r.body, s)
		}
	})

	t.Run("wrong password and unknown email look the same", func(t *testing.T) {
		c := f.newClient(t, project)
		wrong := c.signIn(adminEmail, "not the password")
		unknown := c.signIn("nobody@acme.test", adminPassword)
		for _, r := range []response{wrong, unknown} {
			assert.Equal(t, http.StatusOK, r.status)
			assert.Contains(t, r.body, "The email or password is incorrect.")
			assert.Nil(t, r.cookie("latchkey_console_acme"), "no session")
		}
		assert.Equal(t, wrong.status, unknown.status)
		strip := func(r response, email string) string {
			b := strings.ReplaceAll(r.body, email, "EMAIL")
			return strings.ReplaceAll(b, field(t, r.body, "signin_token"), "TOKEN")
		}
		assert.Equal(t, strip(wrong, adminEmail), strip(unknown, "nobody@acme.test"))
	})

	t.Run("missing fields", func(t *testing.T) {
		c := f.newClient(t, project)
		r := c.signIn(adminEmail, "")
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, r.body, "Enter your email and your password.")
	})

	t.Run("not an administrator", func(t *testing.T) {
		c := f.newClient(t, project)
		r := c.signIn(devEmail, devPassword)
		assert.Equal(t, http.StatusForbidden, r.status)
		assert.Contains(t, r.body, "Not an administrator")
		if ck := r.cookie("latchkey_console_acme"); ck != nil {
			assert.Equal(t, -1, ck.MaxAge, "no session for a non-admin")
		}
		assert.Equal(t, http.StatusSeeOther, c.get("keys").status)
	})

	t.Run("admin of another project", func(t *testing.T) {
		// dev@acme.test does not exist in "other": the same generic answer.
		c := f.newClient(t, otherProject)
		r := c.signIn(devEmail, devPassword)
		assert.Equal(t, http.StatusOK, r.status)
		assert.Contains(t, r.body, "The email or password is incorrect.")
	})

	t.Run("sign-in form token", func(t *testing.T) {
		c := f.newClient(t, project)
		page := c.get("signin")
		form := url.Values{"email": {adminEmail}, "password": {adminPassword}}
		r := c.post("signin", form)
		assert.Equal(t, http.StatusForbidden, r.status, "no token")
		assert.Contains(t, r.body, "This sign-in form has expired.")
		form.Set("signin_token", strings.Repeat("A", 43))
		r = c.post("signin", form)
		assert.Equal(t, http.StatusForbidden, r.status, "wrong token")

		// A fresh client has the token of the page but not the cookie.
		other := f.newClient(t, project)
		form.Set("signin_token", field(t, page.body, "signin_token"))
		r = other.post("signin", form)
		assert.Equal(t, http.StatusForbidden, r.status, "no cookie")
		assert.Nil(t, r.cookie("latchkey_console_acme"))
	})

	t.Run("password never in logs", func(t *testing.T) {
		assert.NotContains(t, f.logs.String(), adminPassword)
		assert.NotContains(t, f.logs.String(), devPassword)
	})
}

func TestConsole_SignIn_RateLimited(t *testing.T) {
	f := newFixture(t, &fixtureOptions{limiter: identity.NewMemoryLimiter(&identity.LimiterOptions{AccountLimit: 2})})
	c := f.newClient(t, project)
	for range 2 {
		r := c.signIn(adminEmail, "wrong")
		require.Equal(t, http.StatusOK, r.status)
	}
	r := c.signIn(adminEmail, adminPassword)
	assert.Equal(t, http.StatusTooManyRequests, r.status)
	assert.NotEmpty(t, r.header.Get("Retry-After"))
	assert.Contains(t, r.body, "Too many failed sign-in attempts. Try again in 15 minutes.")
	assert.Nil(t, r.cookie("latchkey_console_acme"))
}

func TestConsole_FormToken(t *testing.T) {
	f := newFixture(t, nil)
	c := f.newClient(t, project)
	formToken := c.mustSignIn()
	ctx := context.Background()
	dev := f.user(t, project, devEmail)
	audited := len(f.storedAudit(t, project, store.AuditFilter{}))

	for _, tc := range []struct {
		name, page string
		form       url.Values
	}{
		{"create without token", "keys", url.Values{"name": {"no-token"}}},
		{"create with a wrong token", "keys", url.Values{"name": {"bad-token"}, "form_token": {strings.Repeat("x", 43)}}},
		{"create with an empty token", "keys", url.Values{"name": {"empty-token"}, "form_token": {""}}},
		{"rotate without token", "rotate", url.Values{}},
		{"sign out without token", "signout", url.Values{}},
		{"create a user without token", "users", url.Values{"email": {"mallory@acme.test"}, "tags": {"admin"}}},
		{"set tags without token", "user-tags", url.Values{"id": {dev.ID}, "tags": {"admin"}}},
		{"set a password without token", "user-password", url.Values{"id": {dev.ID}, "password": {"mallory's"}}},
		{"disable without token", "disable", url.Values{"id": {dev.ID}}},
		{"enable with a wrong token", "enable", url.Values{"id": {dev.ID}, "form_token": {strings.Repeat("x", 43)}}},
		{"retire without token", "retire", url.Values{"kid": {"sk_x"}}},
		{"revoke without token", "revoke", url.Values{"id": {"key_x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.post(tc.page, tc.form)
			assert.Equal(t, http.StatusForbidden, r.status)
			assert.Contains(t, r.body, "nothing was changed")
		})
	}
	t.Run("token in the query string is not read", func(t *testing.T) {
		r := c.post("keys?form_token="+url.QueryEscape(formToken), url.Values{"name": {"query-token"}})
		assert.Equal(t, http.StatusForbidden, r.status)
	})
	list, err := f.lk.APIKeys().List(ctx, project)
	require.NoError(t, err)
	assert.Empty(t, list, "no key was created")
	sk, err := f.st.ListSigningKeys(ctx, project)
	require.NoError(t, err)
	assert.Len(t, sk, 1, "no rotation")
	assert.Equal(t, dev, f.user(t, project, devEmail), "the user is unchanged")
	_, err = f.lk.Users().GetByEmail(ctx, project, "mallory@acme.test")
	assert.ErrorIs(t, err, store.ErrNotFound, "no user was created")
	assert.Len(t, f.storedAudit(t, project, store.AuditFilter{}), audited, "nothing was done")
	assert.Equal(t, http.StatusOK, c.get("keys").status, "still signed in")
	f.apiLogin(t, project, devEmail, devPassword)

	t.Run("with the token", func(t *testing.T) {
		_, token := c.createKey(formToken, "good")
		assert.NotEmpty(t, token)
	})
}

func TestConsole_CrossOrigin(t *testing.T) {
	f := newFixture(t, nil)
	c := f.newClient(t, project)
	formToken := c.mustSignIn()
	form := url.Values{"name": {"csrf"}, "form_token": {formToken}}
	dev := f.user(t, project, devEmail)
	for _, h := range [][]string{
		{"Origin", "https://evil.example"},
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"},
	} {
		r := c.post("keys", form, h...)
		assert.Equal(t, http.StatusForbidden, r.status, "%v", h)
		assert.Contains(t, r.body, "came from another site")
		for page, form := range map[string]url.Values{
			"users":     {"email": {"mallory@acme.test"}, "tags": {"admin"}, "form_token": {formToken}},
			"user-tags": {"id": {dev.ID}, "tags": {"admin"}, "form_token": {formToken}},
			"disable":   {"id": {dev.ID}, "form_token": {formToken}},
		} {
			r := c.post(page, form, h...)
			assert.Equal(t, http.StatusForbidden, r.status, "%s %v", page, h)
		}
	}
	assert.Equal(t, dev, f.user(t, project, devEmail), "the user is unchanged")
	// The sign-in form too.
	r := c.post("signin", url.Values{"email": {adminEmail}, "password": {adminPassword}}, "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusForbidden, r.status)

	list, err := f.lk.APIKeys().List(context.Background(), project)
	require.NoError(t, err)
	assert.Empty(t, list)

	// The same request from the console's own origin goes through.
	r = c.post("keys", form, "Origin", f.srv.URL, "Sec-Fetch-Site", "same-origin")
	assert.Equal(t, http.StatusOK, r.status)
}

func TestConsole_WrongProject(t *testing.T) {
	f := newFixture(t, nil)
	a := f.newClient(t, project)
	a.mustSignIn()
	sid := ""
	u, _ := url.Parse(a.base)
	for _, ck := range a.hc.Jar.Cookies(u) {
		if ck.Name == "latchkey_console_acme" {
			sid = ck.Value
		}
	}
	require.NotEmpty(t, sid)

	// The same admin exists in "other"; acme's session is useless there,
	// under either project's cookie name and on either path.
	for _, tc := range []struct{ path, cookie string }{
		{"/p/other/console/keys", "latchkey_console_other"},
		{"/p/other/console/keys", "latchkey_console_acme"},
		{"/console/keys", "latchkey_console_default"},
		{"/p/default/console/keys", "latchkey_console_acme"},
	} {
		req, err := http.NewRequest(http.MethodGet, f.srv.URL+tc.path, nil)
		require.NoError(t, err)
		req.AddCookie(&http.Cookie{Name: tc.cookie, Value: sid})
		resp, err := a.hc.Transport.RoundTrip(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusSeeOther, resp.StatusCode, "%s with %s", tc.path, tc.cookie)
		assert.Contains(t, resp.Header.Get("Location"), "signin", "%s with %s", tc.path, tc.cookie)
	}
	assert.Equal(t, http.StatusOK, a.get("keys").status, "acme's session still works in acme")
}

func TestConsole_Expiry(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		f := newFixture(t, nil)
		c := f.newClient(t, project)
		c.mustSignIn()
		f.clock.Advance(console.DefaultIdleTimeout - time.Minute)
		require.Equal(t, http.StatusOK, c.get("keys").status)
		f.clock.Advance(console.DefaultIdleTimeout - time.Minute)
		require.Equal(t, http.StatusOK, c.get("keys").status, "each request restarts the idle timer")
		f.clock.Advance(console.DefaultIdleTimeout)
		r := c.get("keys")
		assert.Equal(t, http.StatusSeeOther, r.status)
		assert.Equal(t, "signin?expired", r.header.Get("Location"))
		ck := r.cookie("latchkey_console_acme")
		require.NotNil(t, ck)
		assert.Equal(t, -1, ck.MaxAge, "the dead cookie is cleared")
		page := c.get("signin?expired")
		assert.Contains(t, page.body, "Your session has ended.")
	})
	t.Run("absolute", func(t *testing.T) {
		f := newFixture(t, nil)
		c := f.newClient(t, project)
		c.mustSignIn()
		var elapsed time.Duration
		for elapsed+20*time.Minute < console.DefaultMaxLifetime {
			f.clock.Advance(20 * time.Minute)
			elapsed += 20 * time.Minute
			require.Equal(t, http.StatusOK, c.get("keys").status, "after %s", elapsed)
		}
		f.clock.Advance(console.DefaultMaxLifetime - elapsed)
		r := c.get("keys")
		assert.Equal(t, http.StatusSeeOther, r.status)
		assert.Equal(t, "signin?expired", r.header.Get("Location"))
	})
	t.Run("options", func(t *testing.T) {
		f := newFixture(t, &fixtureOptions{console: console.Options{IdleTimeout: time.Minute, MaxLifetime: time.Hour}})
		c := f.newClient(t, project)
		r := c.signIn(adminEmail, adminPassword)
		assert.Equal(t, 3600, r.cookie("latchkey_console_acme").MaxAge)
		f.clock.Advance(time.Minute)
		assert.Equal(t, http.StatusSeeOther, c.get("keys").status)
	})
}

func TestConsole_SignOut(t *testing.T) {
	f := newFixture(t, nil)
	c := f.newClient(t, project)
	formToken := c.mustSignIn()
	u, _ := url.Parse(c.base)
	saved := c.hc.Jar.Cookies(u)

	r := c.post("signout", url.Values{"form_token": {formToken}})
	assert.Equal(t, http.StatusSeeOther, r.status)
	assert.Equal(t, "signin?signedout", r.header.Get("Location"))
	assert.Equal(t, -1, r.cookie("latchkey_console_acme").MaxAge)
	assert.Contains(t, c.get("signin?signedout").body, "You have signed out.")

	// The old cookie, replayed, is dead on the server.
	c.hc.Jar.SetCookies(u, saved)
	r = c.get("keys")
	assert.Equal(t, http.StatusSeeOther, r.status)
	assert.Equal(t, "signin?expired", r.header.Get("Location"))
	r = c.post("keys", url.Values{"form_token": {formToken}, "name": {"after-signout"}})
	assert.Equal(t, http.StatusSeeOther, r.status)
	list, err := f.lk.APIKeys().List(context.Background(), project)
	require.NoError(t, err)
	assert.Empty(t, list)
}

func TestConsole_APIKeyLifecycle(t *testing.T) {
	f := newFixture(t, nil)
	c := f.newClient(t, project)
	formToken := c.mustSignIn()

	r, token := c.createKey(formToken, "  billing-worker  ")
	assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
	assert.Contains(t, r.body, "It will not be shown again")
	for name, vs := range r.header {
		for _, v := range vs {
			assert.NotContains(t, v, token, "header %s", name)
		}
	}
	assert.Equal(t, http.StatusOK, f.apiStatus(t, project, token))
	assert.Equal(t, http.StatusUnauthorized, f.apiStatus(t, otherProject, token), "another project refuses it")

	list, err := f.lk.APIKeys().List(context.Background(), project)
	require.NoError(t, err)
	require.Len(t, list, 1)
	k := list[0]
	assert.Equal(t, "billing-worker", k.Name)

	keysPage := c.get("keys")
	assert.Contains(t, keysPage.body, k.ID)
	assert.Contains(t, keysPage.body, "billing-worker")
	admin := f.user(t, project, adminEmail)
	assert.Equal(t, admin.ID, k.CreatedBy)
	require.NotEmpty(t, k.SigningKeyID)
	row := rowOf(t, keysPage.body, k.ID)
	assert.Contains(t, row, `by <a href="user?id=`+admin.ID+`">`+adminEmail+`</a>`, "the creator")
	assert.Contains(t, row, `<td data-label="Signed with"><code class="id id-wrap">`+k.SigningKeyID+`</code>`, "the signing key")
	assert.NotContains(t, keysPage.body, token, "the token is never shown again")
	assert.Contains(t, keysPage.body, "1 active · 0 revoked")

	confirm := c.get("revoke?id=" + k.ID)
	assert.Equal(t, http.StatusOK, confirm.status)
	assert.Contains(t, confirm.body, "This cannot be undone.")
	assert.Equal(t, http.StatusOK, f.apiStatus(t, project, token), "the confirmation page changes nothing")

	r = c.post("revoke", url.Values{"form_token": {formToken}, "id": {k.ID}})
	assert.Equal(t, http.StatusSeeOther, r.status)
	assert.Equal(t, "keys", r.header.Get("Location"))
	assert.Equal(t, http.StatusUnauthorized, f.apiStatus(t, project, token), "refused at once")
	keysPage = c.get("keys")
	assert.Contains(t, keysPage.body, "Requests using it are refused from now on.")
	assert.Contains(t, keysPage.body, "0 active · 1 revoked")
	assert.NotContains(t, c.get("keys").body, "refused from now on", "the message is shown once")

	t.Run("creators", func(t *testing.T) {
		ctx := context.Background()
		cli, _, err := f.lk.APIKeys().Create(audit.NewContext(ctx, audit.CLI), project, "from-the-cli")
		require.NoError(t, err)
		unknown, _, err := f.lk.APIKeys().Create(ctx, project, "from-nobody")
		require.NoError(t, err)
		page := c.get("keys")
		assert.Contains(t, rowOf(t, page.body, cli.ID), `by <span class="who-label">Command line</span>`)
		assert.Contains(t, rowOf(t, page.body, unknown.ID), `by <span class="who-label">Unknown</span>`)
	})
	t.Run("bad name", func(t *testing.T) {
		r := c.post("keys", url.Values{"form_token": {formToken}, "name": {"   "}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, r.body, "Give the key a name")
	})
	t.Run("bad search", func(t *testing.T) {
		for _, q := range []string{"name=a%00", "name=%FF", "name=an%C3"} {
			r := c.get("keys?" + q)
			assert.Equal(t, http.StatusBadRequest, r.status, q)
			assert.Contains(t, r.body, "Invalid search", q)
		}
	})
	t.Run("unknown key", func(t *testing.T) {
		assert.Equal(t, http.StatusNotFound, c.get("revoke?id=key_nope").status)
		r := c.post("revoke", url.Values{"form_token": {formToken}, "id": {"key_nope"}})
		assert.Equal(t, http.StatusNotFound, r.status)
	})
	t.Run("a key of another project", func(t *testing.T) {
		other, _, err := f.lk.APIKeys().Create(context.Background(), otherProject, "theirs")
		require.NoError(t, err)
		r := c.post("revoke", url.Values{"form_token": {formToken}, "id": {other.ID}})
		assert.Equal(t, http.StatusNotFound, r.status)
		list, err := f.lk.APIKeys().List(context.Background(), otherProject)
		require.NoError(t, err)
		assert.False(t, list[0].Revoked())
	})
	t.Run("never in logs or URLs", func(t *testing.T) {
		logs := f.logs.String()
		assert.NotContains(t, logs, token)
		assert.Contains(t, logs, "console: API key created")
		assert.Contains(t, logs, "console: API key revoked")
	})
}

func TestConsole_SigningKeys(t *testing.T) {
	f := newFixture(t, nil)
	c := f.newClient(t, project)
	formToken := c.mustSignIn()
	ctx := context.Background()

	before, err := f.st.ListSigningKeys(ctx, project)
	require.NoError(t, err)
	require.Len(t, before, 1)
	first := before[0].ID
	_, oldToken := c.createKey(formToken, "signed-by-first")
	_, _, err = f.lk.APIKeys().Create(ctx, project, "also-first")
	require.NoError(t, err)
	revoked, _, err := f.lk.APIKeys().Create(ctx, project, "revoked-first")
	require.NoError(t, err)
	require.NoError(t, f.lk.APIKeys().Revoke(ctx, project, revoked.ID))

	page := c.get("signing-keys")
	assert.Equal(t, http.StatusOK, page.status)
	assert.Contains(t, page.body, first)
	assert.Contains(t, page.body, `id="pub-`+first+`">`+base64.RawURLEncoding.EncodeToString(before[0].PublicKey)+`</code>`,
		"the whole public key, for copying")
	assert.NotContains(t, page.body, "retire?kid=", "the only key is active")

	// Rotation asks first.
	assert.Contains(t, page.body, `href="rotate"`)
	confirmRotate := c.get("rotate")
	assert.Equal(t, http.StatusOK, confirmRotate.status)
	assert.Contains(t, confirmRotate.body, "Rotate the signing key?")
	assert.Contains(t, confirmRotate.body, first+"</code>, keeps verifying")
	unchanged, err := f.st.ListSigningKeys(ctx, project)
	require.NoError(t, err)
	assert.Len(t, unchanged, 1, "the confirmation changes nothing")

	r := c.post("rotate", url.Values{"form_token": {formToken}})
	assert.Equal(t, http.StatusSeeOther, r.status)
	assert.Equal(t, "signing-keys", r.header.Get("Location"))
	after, err := f.st.ListSigningKeys(ctx, project)
	require.NoError(t, err)
	require.Len(t, after, 2)
	second := after[1].ID
	page = c.get("signing-keys")
	assert.Contains(t, page.body, second+" is the new active signing key.")
	assert.Contains(t, page.body, "retire?kid="+first)
	assert.NotContains(t, page.body, "retire?kid="+second)
	assert.Equal(t, http.StatusOK, f.apiStatus(t, project, oldToken), "older keys keep verifying")

	// The active key cannot be retired.
	r = c.get("retire?kid=" + second)
	assert.Equal(t, http.StatusSeeOther, r.status)
	r = c.post("retire", url.Values{"form_token": {formToken}, "kid": {second}})
	assert.Equal(t, http.StatusSeeOther, r.status)
	assert.Contains(t, c.get("signing-keys").body, "The active signing key cannot be retired.")

	// The confirmation counts the active API keys the retirement stops:
	// the first key signed three, one of them revoked; the second, one.
	c.createKey(formToken, "signed-by-second")
	confirm := c.get("retire?kid=" + first)
	assert.Equal(t, http.StatusOK, confirm.status)
	assert.Contains(t, confirm.body, "This cannot be undone.")
	assert.Contains(t, confirm.body, "Retiring it stops 2 active API keys")
	r = c.post("retire", url.Values{"form_token": {formToken}, "kid": {first}})
	assert.Equal(t, http.StatusSeeOther, r.status)
	assert.Equal(t, http.StatusUnauthorized, f.apiStatus(t, project, oldToken), "retiring refuses what the key signed")
	page = c.get("signing-keys")
	assert.Contains(t, page.body, "Retired "+first)
	keysPage := c.get("keys")
	assert.Contains(t, keysPage.body, "1 active · 2 stopped · 1 revoked", "a key whose signing key is retired is stopped")

	assert.Equal(t, http.StatusNotFound, c.get("retire?kid=sk_nope").status)
	assert.Equal(t, http.StatusNotFound, c.post("retire", url.Values{"form_token": {formToken}, "kid": {"sk_nope"}}).status)
	for _, kid := range []string{"sk_\x00", "sk_\xff", "not an id"} {
		assert.Equalf(t, http.StatusNotFound, c.get("retire?kid="+url.QueryEscape(kid)).status, "GET retire %q", kid)
		assert.Equalf(t, http.StatusNotFound, c.post("retire", url.Values{"form_token": {formToken}, "kid": {kid}}).status, "POST retire %q", kid)
	}
}

func TestConsole_Routing(t *testing.T) {
	f := newFixture(t, nil)
	c := f.newClient(t, project)
	formToken := c.mustSignIn()

	r := c.get("a/b/c")
	assert.Equal(t, http.StatusNotFound, r.status)
	assert.Contains(t, r.body, `href="../../static/console.css"`, "the error page finds its stylesheet")

	r = c.post("signing-keys", url.Values{"form_token": {formToken}})
	assert.Equal(t, http.StatusMethodNotAllowed, r.status)
	assert.Equal(t, "GET, HEAD", r.header.Get("Allow"))

	req, err := http.NewRequest(http.MethodGet, f.srv.URL+"/p/acme/console", nil)
	require.NoError(t, err)
	r = c.do(req)
	assert.Equal(t, http.StatusMovedPermanently, r.status)
	assert.Equal(t, "console/", r.header.Get("Location"))

	big := url.Values{"form_token": {formToken}, "name": {strings.Repeat("x", 70<<10)}}
	assert.Equal(t, http.StatusRequestEntityTooLarge, c.post("keys", big).status)
}

func TestNew_PanicsWithoutDeps(t *testing.T) {
	assert.Panics(t, func() { console.New(console.Deps{}, nil) })
}
