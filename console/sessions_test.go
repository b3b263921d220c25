package console_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/console"
	"github.com/latchkey-dev/latchkey/store"
)

// sessionSecret returns the value of c's session cookie for project p.
func (c *client) sessionSecret(p string) string {
	c.t.Helper()
	u, err := url.Parse(c.base)
	require.NoError(c.t, err)
	for _, ck := range c.hc.Jar.Cookies(u) {
		if ck.Name == "latchkey_console_"+p {
			return ck.Value
		}
	}
	c.t.Fatalf("no session cookie for %s", p)
	return ""
}

func hashHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// dbFiles returns the bytes of the SQLite database and its write-ahead
// log: everything the store has written.
func (f *fixture) dbFiles(t *testing.T) []byte {
	t.Helper()
	var all []byte
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(f.dbPath + suffix)
		if !os.IsNotExist(err) {
			require.NoError(t, err)
		}
		all = append(all, b...)
	}
	return all
}

func TestConsole_SessionsAreStored(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	c := f.newClient(t, project)
	formToken := c.mustSignIn()
	secret := c.sessionSecret(project)
	admin := f.user(t, project, adminEmail)

	rec, err := f.st.GetConsoleSession(ctx, project, hashHex(secret))
	require.NoError(t, err, "the store holds the session under the SHA-256 of the cookie")
	assert.Equal(t, admin.ID, rec.UserID)
	assert.Equal(t, project, rec.ProjectID)
	assert.True(t, rec.CreatedAt.Equal(store.Truncate(f.clock.Now())))
	_, err = f.st.GetConsoleSession(ctx, otherProject, hashHex(secret))
	assert.ErrorIs(t, err, store.ErrNotFound, "a session belongs to one project")

	assert.NotEqual(t, secret, formToken)
	assert.NotEqual(t, hashHex(secret), formToken)
	files := f.dbFiles(t)
	require.Contains(t, string(files), hashHex(secret), "the check below reads the files the store wrote")
	assert.NotContains(t, string(files), secret, "the store never holds the cookie's secret")
	assert.NotContains(t, string(files), formToken, "nor the form token")

	r := c.post("signout", url.Values{"form_token": {formToken}})
	require.Equal(t, http.StatusSeeOther, r.status)
	_, err = f.st.GetConsoleSession(ctx, project, hashHex(secret))
	assert.ErrorIs(t, err, store.ErrNotFound, "signing out deletes the stored session")
}

func TestConsole_LastSeenWrittenOnceAMinute(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	c := f.newClient(t, project)
	c.mustSignIn()
	id := hashHex(c.sessionSecret(project))
	lastSeen := func() time.Time {
		t.Helper()
		rec, err := f.st.GetConsoleSession(ctx, project, id)
		require.NoError(t, err)
		return rec.LastSeenAt
	}
	signedIn := lastSeen()

	for range 5 {
		f.clock.Advance(10 * time.Second)
		require.Equal(t, http.StatusOK, c.get("keys").status)
	}
	assert.True(t, lastSeen().Equal(signedIn), "five clicks within 50 seconds write nothing")

	f.clock.Advance(10 * time.Second)
	require.Equal(t, http.StatusOK, c.get("keys").status)
	touched := lastSeen()
	assert.True(t, touched.Equal(store.Truncate(f.clock.Now())), "a minute after the last write: written (%s)", touched)

	f.clock.Advance(59 * time.Second)
	require.Equal(t, http.StatusOK, c.get("users").status)
	assert.True(t, lastSeen().Equal(touched), "not again within the minute")

	// The idle timeout counts from the stored time: a session used only
	// within a minute of its last write ends up to a minute early.
	f.clock.Set(touched.Add(console.DefaultIdleTimeout))
	r := c.get("keys")
	assert.Equal(t, http.StatusSeeOther, r.status)
	assert.Equal(t, "signin?expired", r.header.Get("Location"))
	_, err := f.st.GetConsoleSession(ctx, project, id)
	assert.ErrorIs(t, err, store.ErrNotFound, "an ended session is deleted when it is next presented")
}

func TestConsole_TwoInstances(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	_, srvB := f.second(t)

	a := f.newClient(t, project)
	formToken := a.mustSignIn()
	// The same browser (one cookie jar) on the second instance: cookies
	// do not depend on the port.
	b := &client{t: t, f: f, hc: a.hc, base: srvB.URL + "/p/" + project + "/console/"}

	page := b.get("keys")
	require.Equal(t, http.StatusOK, page.status, "the session made on A is known to B")
	assert.Contains(t, page.body, adminEmail)
	assert.Equal(t, formToken, field(t, page.body, "form_token"), "both instances derive the same form token")

	// Created on B with the form token of A's page, revoked on A; the
	// one-time message set by A is shown by B.
	_, token := b.createKey(formToken, "made-on-b")
	list, err := f.lk.APIKeys().List(ctx, project)
	require.NoError(t, err)
	require.Len(t, list, 1)
	r := a.post("revoke", url.Values{"form_token": {formToken}, "id": {list[0].ID}})
	require.Equal(t, http.StatusSeeOther, r.status)
	shown := b.get("keys")
	assert.Contains(t, shown.body, "Revoked “made-on-b”", "A's message, shown by B")
	assert.NotContains(t, a.get("keys").body, "Revoked “made-on-b”", "once")
	assert.Equal(t, http.StatusUnauthorized, f.apiStatus(t, project, token))

	// Signing out on B ends the session on A too, even for a copy of the
	// cookie kept from before.
	u, err := url.Parse(a.base)
	require.NoError(t, err)
	saved := a.hc.Jar.Cookies(u)
	r = b.post("signout", url.Values{"form_token": {formToken}})
	require.Equal(t, http.StatusSeeOther, r.status)
	a.hc.Jar.SetCookies(u, saved)
	r = a.get("keys")
	assert.Equal(t, http.StatusSeeOther, r.status)
	assert.Equal(t, "signin?expired", r.header.Get("Location"))
}

func TestConsole_PruneSessions(t *testing.T) {
	f := newFixture(t, &fixtureOptions{console: console.Options{IdleTimeout: 10 * time.Minute, MaxLifetime: time.Hour}})
	ctx := context.Background()
	idle, busy, old := f.newClient(t, project), f.newClient(t, project), f.newClient(t, project)
	old.mustSignIn()
	for minute := 5; minute <= 60; minute += 5 {
		f.clock.Advance(5 * time.Minute)
		if minute == 45 {
			idle.mustSignIn()
			busy.mustSignIn()
		}
		if minute > 45 {
			require.Equal(t, http.StatusOK, busy.get("keys").status)
		}
		if minute < 60 {
			require.Equal(t, http.StatusOK, old.get("keys").status, "minute %d", minute)
		}
	}
	f.clock.Advance(time.Minute)
	// Now: idle was last seen 16 minutes ago, busy 1 minute ago, old 6
	// minutes ago; old signed in 61 minutes ago.
	require.NoError(t, f.lk.Prune(ctx))
	for name, tc := range map[string]struct {
		c    *client
		kept bool
	}{"idle": {idle, false}, "busy": {busy, true}, "past its lifetime": {old, false}} {
		_, err := f.st.GetConsoleSession(ctx, project, hashHex(tc.c.sessionSecret(project)))
		if tc.kept {
			assert.NoError(t, err, name)
		} else {
			assert.ErrorIs(t, err, store.ErrNotFound, name)
		}
	}
	assert.Equal(t, http.StatusOK, busy.get("keys").status)
}
