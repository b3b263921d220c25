package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
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

// consoleOver serves the fixture's console a second time, its sessions
// kept by sessions, over a real HTTP server.
func (f *fixture) consoleOver(t testing.TB, sessions store.ConsoleSessionStore) *httptest.Server {
	t.Helper()
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

	serve := func(sessions store.ConsoleSessionStore) *httptest.Server { return f.consoleOver(t, sessions) }
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

// A password reset or a disable that lands while a sign-in is past its
// check but has not stored its session ends that sign-in too: it gets the
// wrong-password answer and no session. After it, the new password (or,
// once enabled again, the old one) signs in.
func TestConsole_ChangeDuringSignInStartsNoSession(t *testing.T) {
	const newPassword = "a brand new password"
	for _, c := range []struct {
		name     string
		change   func(ctx context.Context, f *fixture, id string) error
		undo     func(ctx context.Context, f *fixture, id string) error
		password string // signs in after undo
	}{
		{"password reset", func(ctx context.Context, f *fixture, id string) error {
			_, err := f.lk.Users().ResetPassword(ctx, project, id, newPassword)
			return err
		}, nil, newPassword},
		{"disable", func(ctx context.Context, f *fixture, id string) error {
			_, err := f.lk.Users().Disable(ctx, project, id)
			return err
		}, func(ctx context.Context, f *fixture, id string) error {
			_, err := f.lk.Users().Enable(ctx, project, id)
			return err
		}, adminPassword},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, nil)
			ctx := context.Background()
			admin := f.user(t, project, adminEmail)
			sessions := &resetBeforeSessionStarts{ConsoleSessionStore: f.st, reset: func() {
				require.NoError(t, c.change(ctx, f, admin.ID))
			}}
			cl := f.newClient(t, project)
			cl.base = f.consoleOver(t, sessions).URL + "/p/" + project + "/console/"

			r := cl.signIn(adminEmail, adminPassword)
			assert.Equal(t, http.StatusOK, r.status, "the sign-in answered %d, Location %q", r.status, r.header.Get("Location"))
			assert.Contains(t, r.body, "The email or password is incorrect.")
			if ck := r.cookie("latchkey_console_acme"); ck != nil {
				assert.Empty(t, ck.Value, "a session cookie was set")
			}
			sessions.mu.Lock()
			ids := sessions.ids
			sessions.mu.Unlock()
			require.Len(t, ids, 1, "the sign-in stored its session")
			_, err := f.st.GetConsoleSession(ctx, project, ids[0])
			assert.ErrorIs(t, err, store.ErrNotFound, "the session started during the change is gone")

			if c.undo != nil {
				require.NoError(t, c.undo(ctx, f, admin.ID))
			}
			r = cl.signIn(adminEmail, c.password)
			assert.Equal(t, http.StatusSeeOther, r.status, r.body)
			assert.Equal(t, "keys", r.header.Get("Location"))
		})
	}
}

// resetBeforeSessionStarts is a session store that runs reset (a change
// of the user) once, right before the first session is stored, and records
// the ids of the sessions it stores.
type resetBeforeSessionStarts struct {
	store.ConsoleSessionStore
	reset func()

	mu  sync.Mutex
	ids []string
}

func (s *resetBeforeSessionStarts) CreateConsoleSession(ctx context.Context, cs store.ConsoleSession) error {
	s.mu.Lock()
	s.ids = append(s.ids, cs.ID)
	first := len(s.ids) == 1
	s.mu.Unlock()
	if first {
		s.reset()
	}
	return s.ConsoleSessionStore.CreateConsoleSession(ctx, cs)
}
