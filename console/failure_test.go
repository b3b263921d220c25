package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/audit"
	"github.com/latchkey-dev/latchkey/console"
	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/tenant"
)

// brokenSessions is a session store whose reads or deletes fail as a
// database that cannot be reached does.
type brokenSessions struct {
	store.ConsoleSessionStore
	reads, deletes bool
}

var errDown = fmt.Errorf("database down: %w", store.ErrUnavailable)

func (s brokenSessions) GetConsoleSession(ctx context.Context, projectID, id string) (store.ConsoleSession, error) {
	if s.reads {
		return store.ConsoleSession{}, errDown
	}
	return s.ConsoleSessionStore.GetConsoleSession(ctx, projectID, id)
}

func (s brokenSessions) DeleteConsoleSession(ctx context.Context, projectID, id string) error {
	if s.deletes {
		return errDown
	}
	return s.ConsoleSessionStore.DeleteConsoleSession(ctx, projectID, id)
}

// TestConsole_StoreFailuresFailClosed serves the fixture's console a
// second time over sessions whose store fails: a session that cannot be
// read lets nothing through, and a sign-out that cannot be stored says so
// instead of pretending.
func TestConsole_StoreFailuresFailClosed(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	c := f.newClient(t, project)
	formToken := c.mustSignIn()
	secret := c.sessionSecret(project)

	serve := func(sessions store.ConsoleSessionStore) *httptest.Server {
		hasher := identity.NewHasher(nil)
		h := console.New(console.Deps{
			Authenticator: identity.NewAuthenticator(f.st, hasher, identity.NewMemoryLimiter(nil), nil),
			APIKeys:       f.lk.APIKeys(),
			Keyring:       f.lk.Keyring(),
			SigningKeys:   f.st,
			Users:         f.lk.Users(),
			Sessions:      sessions,
			AuditLog:      f.st,
			Audit:         audit.New(f.st, nil),
		}, &console.Options{Now: f.clock.Now})
		mux := http.NewServeMux()
		for _, rt := range h.Routes() {
			mux.Handle(rt.Pattern, rt.Handler)
		}
		srv := httptest.NewServer(tenant.ByPath("/p/", store.DefaultProject, mux))
		t.Cleanup(srv.Close)
		return srv
	}
	send := func(srv *httptest.Server, method, page string, form url.Values) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+"/p/acme/console/"+page, strings.NewReader(form.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: "latchkey_console_acme", Value: secret})
		resp, err := http.DefaultTransport.RoundTrip(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp
	}

	down := serve(brokenSessions{ConsoleSessionStore: f.st, reads: true})
	for _, page := range []string{"keys", "users", "audit", "signin"} {
		resp := send(down, http.MethodGet, page, nil)
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, page)
		assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	}
	resp := send(down, http.MethodPost, "users", url.Values{"form_token": {formToken}, "email": {"x@acme.test"}, "tags": {"admin"}})
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	_, err := f.lk.Users().GetByEmail(ctx, project, "x@acme.test")
	assert.ErrorIs(t, err, store.ErrNotFound, "nothing was done")

	stuck := serve(brokenSessions{ConsoleSessionStore: f.st, deletes: true})
	resp = send(stuck, http.MethodPost, "signout", url.Values{"form_token": {formToken}})
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "a sign-out that was not stored is an error")
	for _, ck := range resp.Cookies() {
		assert.NotEqual(t, "latchkey_console_acme", ck.Name, "the cookie is kept: the session goes on")
	}
	assert.Equal(t, http.StatusOK, c.get("keys").status, "and it does")
}
