package identity_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// sidOf returns the sid claim of an access token (unverified: the tests of
// package keys verify tokens).
func sidOf(t *testing.T, access string) string {
	t.Helper()
	claims := jwt.MapClaims{}
	_, _, err := jwt.NewParser().ParseUnverified(access, claims)
	require.NoError(t, err)
	sid, _ := claims["sid"].(string)
	return sid
}

// A login starts a session: its login tokens carry sid, the id of the
// refresh family, and every refresh keeps it.
func TestLogin_StartsASession(t *testing.T) {
	e := newEnv(t, envConfig{})
	u, ts := e.loggedIn(t, "", "default")
	sid := sidOf(t, ts.AccessToken)
	require.True(t, strings.HasPrefix(sid, store.PrefixFamily+"_"), "sid %q", sid)
	f, err := e.st.GetRefreshFamily(context.Background(), "default", sid)
	require.NoError(t, err)
	assert.Equal(t, u.ID, f.UserID)
	assert.True(t, f.EndsAt.Equal(store.Truncate(e.clock.Now().Add(identity.DefaultSessionLifetime))), "EndsAt %s", f.EndsAt)

	next := e.refresh(t, "", ts.RefreshToken).tokens(t)
	assert.Equal(t, sid, sidOf(t, next.AccessToken), "a refresh stays in the session")
	other := e.login(t, "", "alice@example.com", "correct horse").tokens(t)
	assert.NotEqual(t, sid, sidOf(t, other.AccessToken), "each login is a session of its own")
}

// Logout ends the session: 204, and the refresh token (any generation of
// the family) is refused from then on.
func TestLogout(t *testing.T) {
	e := newEnv(t, envConfig{})
	_, ts := e.loggedIn(t, "", "default")
	first := ts.RefreshToken
	second := e.refresh(t, "", first).tokens(t).RefreshToken

	res := e.logout(t, "", second)
	require.Equal(t, http.StatusNoContent, res.status, "body %s", res.body)
	assert.Empty(t, res.body)
	f, err := e.st.GetRefreshFamily(context.Background(), "default", sidOf(t, ts.AccessToken))
	require.NoError(t, err)
	assert.False(t, f.RevokedAt.IsZero(), "the session is revoked")
	for _, tok := range []string{first, second} {
		res := e.refresh(t, "", tok)
		assert.Equal(t, http.StatusUnauthorized, res.status)
		assert.Equal(t, "invalid_refresh_token", res.code(t))
	}
	// Again: still 204.
	assert.Equal(t, http.StatusNoContent, e.logout(t, "", second).status)

	// An older generation ends the session too.
	_, ts = e.loggedIn2(t)
	newer := e.refresh(t, "", ts.RefreshToken).tokens(t).RefreshToken
	require.Equal(t, http.StatusNoContent, e.logout(t, "", ts.RefreshToken).status)
	assert.Equal(t, http.StatusUnauthorized, e.refresh(t, "", newer).status)
}

// loggedIn2 logs a second user in.
func (e *env) loggedIn2(t *testing.T) (store.User, tokenSet) {
	t.Helper()
	u := e.createUser(t, "default", "bob@example.com", "battery staple", "")
	return u, e.login(t, "", "bob@example.com", "battery staple").tokens(t)
}

// Logout tells nothing about a token: unknown, forged and foreign tokens
// get 204 too, and change nothing. The body rules are refresh's.
func TestLogout_NoOracle(t *testing.T) {
	e := newEnv(t, envConfig{projects: []string{"acme"}})
	_, ts := e.loggedIn(t, "", "default")
	// The token with a bit of its MAC flipped: always another token (a
	// new last text character could be the one it had).
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(ts.RefreshToken, "rt_"))
	require.NoError(t, err)
	raw[len(raw)-1] ^= 1
	for name, tok := range map[string]string{
		"garbage":            "rt_garbage",
		"not rt":             "hello",
		"unknown family":     identity.RefreshToken(e.masterKey, "default", store.NewID(store.PrefixFamily), 0),
		"forged MAC":         "rt_" + base64.RawURLEncoding.EncodeToString(raw),
		"of another project": identity.RefreshToken(e.masterKey, "acme", store.NewID(store.PrefixFamily), 0),
	} {
		res := e.logout(t, "", tok)
		assert.Equal(t, http.StatusNoContent, res.status, name)
		assert.Empty(t, res.body, name)
	}
	// Another project's logout does not end this session.
	assert.Equal(t, http.StatusNoContent, e.logout(t, "/p/acme", ts.RefreshToken).status)
	e.refresh(t, "", ts.RefreshToken).tokens(t)

	for _, c := range []struct {
		name, contentType, body, code string
		status                        int
	}{
		{"text/plain", "text/plain", `{"refresh_token":"x"}`, "unsupported_media_type", 415},
		{"latin1", "application/json; charset=latin1", `{"refresh_token":"x"}`, "unsupported_media_type", 415},
		{"too large", "application/json", `{"refresh_token":"` + strings.Repeat("x", 70<<10) + `"}`, "request_too_large", 413},
		{"missing", "application/json", `{}`, "invalid_request", 400},
		{"empty", "application/json", `{"refresh_token":""}`, "invalid_request", 400},
		{"not an object", "application/json", `["x"]`, "invalid_request", 400},
		{"twice", "application/json", `{"refresh_token":"a","REFRESH_TOKEN":"b"}`, "invalid_request", 400},
	} {
		res := e.do(t, http.MethodPost, "/v1/identity/logout", c.contentType, []byte(c.body))
		assert.Equal(t, c.status, res.status, c.name)
		assert.Equal(t, c.code, res.code(t), c.name)
	}
}

// A session ends at its absolute lifetime, however often it is refreshed,
// and its refresh tokens never outlive it.
func TestSession_AbsoluteLifetime(t *testing.T) {
	e := newEnv(t, envConfig{opts: identity.Options{SessionLifetime: 3 * time.Hour, RefreshTTL: 2 * time.Hour}})
	_, ts := e.loggedIn(t, "", "default")
	tok := ts.RefreshToken
	for range 2 {
		e.clock.Advance(time.Hour + 20*time.Minute)
		tok = e.refresh(t, "", tok).tokens(t).RefreshToken
	}
	f, err := e.st.GetRefreshFamily(context.Background(), "default", sidOf(t, ts.AccessToken))
	require.NoError(t, err)
	assert.True(t, f.ExpiresAt.Equal(f.EndsAt), "the last token expires with the session: %s vs %s", f.ExpiresAt, f.EndsAt)
	e.clock.Advance(21 * time.Minute) // 3 h 1 min after login
	res := e.refresh(t, "", tok)
	assert.Equal(t, http.StatusUnauthorized, res.status)
	assert.Equal(t, "invalid_refresh_token", res.code(t))
}

// A login token that would outlive its session has the session's end
// scheduled in the revocation feed, so that verifiers that follow only the
// feed refuse it from then on; a token that expires first schedules
// nothing.
func TestSession_EndScheduledWhenATokenOutlivesIt(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envConfig{opts: identity.Options{SessionLifetime: 36 * time.Hour, RefreshTTL: 30 * time.Hour}})
	next := func(e *env) time.Time {
		n, err := e.st.NextScheduledRevocation(ctx, "default")
		require.NoError(t, err)
		return n
	}
	_, ts := e.loggedIn(t, "", "default")
	assert.True(t, next(e).IsZero(), "a login token of a day, the session ending in 36 h: nothing scheduled")
	e.clock.Advance(11 * time.Hour)
	tok := e.refresh(t, "", ts.RefreshToken).tokens(t).RefreshToken
	assert.True(t, next(e).IsZero(), "a token minted 11 h in expires before the end: nothing scheduled")
	e.clock.Advance(2 * time.Hour)
	e.refresh(t, "", tok).tokens(t)
	f, err := e.st.GetRefreshFamily(ctx, "default", sidOf(t, ts.AccessToken))
	require.NoError(t, err)
	assert.True(t, next(e).Equal(f.EndsAt), "a token minted 13 h in outlives the session: its end %s is scheduled, got %s", f.EndsAt, next(e))
	revs, err := e.st.ListRevocations(ctx, "default", paginate.Request{Limit: 10})
	require.NoError(t, err)
	assert.Empty(t, revs.Items, "not in the feed before the session's end")

	// Sessions shorter than a login token's day: every login schedules.
	short := newEnv(t, envConfig{opts: identity.Options{SessionLifetime: time.Hour}})
	_, ts = short.loggedIn(t, "", "default")
	f, err = short.st.GetRefreshFamily(ctx, "default", sidOf(t, ts.AccessToken))
	require.NoError(t, err)
	assert.True(t, next(short).Equal(f.EndsAt), "a session of an hour: its end %s is scheduled at login, got %s", f.EndsAt, next(short))
}

// A disabled user cannot log in: the same answer as a wrong password, after
// the same hash; their sessions have ended; enabling restores login, not
// the sessions.
func TestLogin_DisabledUser(t *testing.T) {
	e := newEnv(t, envConfig{})
	ctx := context.Background()
	users := identity.NewUsers(e.st, e.hasher, &identity.UsersOptions{Now: e.clock.Now})
	u, ts := e.loggedIn(t, "", "default")

	got, err := users.Disable(ctx, "default", u.ID)
	require.NoError(t, err)
	assert.False(t, got.DisabledAt.IsZero())

	disabled := e.login(t, "", "alice@example.com", "correct horse")
	wrong := e.login(t, "", "alice@example.com", "wrong horse")
	assert.Equal(t, http.StatusUnauthorized, disabled.status)
	assert.Equal(t, string(wrong.body), string(disabled.body))
	disabled.header.Del("Date")
	wrong.header.Del("Date")
	assert.Equal(t, wrong.header, disabled.header)
	assert.Equal(t, http.StatusUnauthorized, e.refresh(t, "", ts.RefreshToken).status, "the session ended")

	// A disabled user's login costs the hash a wrong password costs.
	release, err := e.hasher.HoldSlots(ctx)
	require.NoError(t, err)
	hctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	req, err := http.NewRequestWithContext(hctx, http.MethodPost, e.srv.URL+"/v1/identity/login",
		strings.NewReader(`{"email":"alice@example.com","password":"correct horse"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	res, err := e.srv.Client().Do(req)
	if err == nil {
		res.Body.Close()
	}
	cancel()
	release()
	assert.ErrorIs(t, err, context.DeadlineExceeded, "a disabled user answered without hashing")

	_, err = users.Enable(ctx, "default", u.ID)
	require.NoError(t, err)
	e.login(t, "", "alice@example.com", "correct horse").tokens(t)
	assert.Equal(t, http.StatusUnauthorized, e.refresh(t, "", ts.RefreshToken).status, "enabling does not restore a session")
}

// A password reset that lands while a login with the old password is past
// its check but has not started its session ends that login too: it gets
// the wrong-password answer, no session of it is live, and the new
// password signs in.
func TestLogin_ResetDuringSignInStartsNoSession(t *testing.T) {
	ctx := context.Background()
	var reset func()
	starts := &resetBeforeSession{reset: func() { reset() }}
	e := newEnv(t, envConfig{refresh: func(rs store.RefreshStore) store.RefreshStore {
		starts.RefreshStore = rs
		return starts
	}})
	users := identity.NewUsers(e.st, e.hasher, &identity.UsersOptions{Now: e.clock.Now})
	u := e.createUser(t, "default", "alice@example.com", "correct horse", "")
	reset = func() {
		_, err := users.ResetPassword(ctx, "default", u.ID, "battery staple")
		require.NoError(t, err)
	}

	res := e.login(t, "", "alice@example.com", "correct horse")
	assert.Equal(t, http.StatusUnauthorized, res.status)
	assert.Equal(t, "invalid_credentials", res.code(t))
	starts.mu.Lock()
	calls, families := starts.calls, starts.families
	starts.mu.Unlock()
	assert.Equal(t, 1, calls, "the login reached the start of its session")
	var live int
	for _, id := range families {
		f, err := e.st.GetRefreshFamily(ctx, "default", id)
		if err == nil && f.Live(e.clock.Now()) {
			live++
		}
	}
	assert.Zero(t, live, "sessions of the old password live after the reset")

	e.login(t, "", "alice@example.com", "battery staple").tokens(t)
}

// resetBeforeSession is a RefreshStore that runs reset once, right before
// the first session starts, and records the families it was asked for.
type resetBeforeSession struct {
	store.RefreshStore
	reset func()

	mu       sync.Mutex
	calls    int
	families []string
}

func (r *resetBeforeSession) CreateRefreshFamily(ctx context.Context, f store.RefreshFamily, passwordHash string) error {
	r.mu.Lock()
	r.families = append(r.families, f.ID)
	r.calls++
	first := r.calls == 1
	r.mu.Unlock()
	if first {
		r.reset()
	}
	return r.RefreshStore.CreateRefreshFamily(ctx, f, passwordHash)
}

// failingLimiter refuses to check or count.
type failingLimiter struct {
	identity.Limiter
	failCheck, failCount bool
}

var errLimiterDown = errors.New("the throttle table is locked")

func (l failingLimiter) Check(ctx context.Context, account, address string, inFlight identity.InFlight) (time.Duration, error) {
	if l.failCheck {
		return 0, errLimiterDown
	}
	return l.Limiter.Check(ctx, account, address, inFlight)
}

func (l failingLimiter) Failure(ctx context.Context, account, address string) error {
	if l.failCount {
		return errLimiterDown
	}
	return l.Limiter.Failure(ctx, account, address)
}

// Throttling fails closed: an attempt that cannot be checked, or a failure
// that cannot be counted, is refused with 503 unavailable, never answered
// as if it had been counted.
func TestLogin_ThrottleFailsClosed(t *testing.T) {
	for _, c := range []struct {
		name             string
		failCheck, count bool
	}{{"check", true, false}, {"count", false, true}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, envConfig{limiter: func(st store.Store, now func() time.Time) identity.Limiter {
				return failingLimiter{identity.NewMemoryLimiter(&identity.LimiterOptions{Now: now}), c.failCheck, c.count}
			}})
			e.createUser(t, "default", "alice@example.com", "correct horse", "")
			res := e.login(t, "", "alice@example.com", "wrong horse")
			assert.Equal(t, http.StatusServiceUnavailable, res.status, "body %s", res.body)
			assert.Equal(t, "unavailable", res.code(t))
			assert.NotEmpty(t, res.header.Get("Retry-After"))
			assert.NotContains(t, string(res.body), "throttle table", "the cause is not shown")
		})
	}
}

// Users.Create checks what it is given before hashing, with the store's
// rules, and never stores a refused user.
func TestUsers_CreateChecks(t *testing.T) {
	e := newEnv(t, envConfig{})
	ctx := context.Background()
	users := identity.NewUsers(e.st, e.hasher, nil)
	release, err := e.hasher.HoldSlots(ctx)
	require.NoError(t, err)
	for name, c := range map[string]struct {
		email, password string
		tags            []string
	}{
		"not an email":     {"notanemail", "password", nil},
		"empty email":      {"  ", "password", nil},
		"empty password":   {"a@example.com", "", nil},
		"long password":    {"a@example.com", strings.Repeat("p", identity.MaxPasswordLen+1), nil},
		"empty tag":        {"a@example.com", "password", []string{"admin", ""}},
		"tag with a space": {"a@example.com", "password", []string{"Ops Team"}},
	} {
		_, err := users.Create(ctx, "default", c.email, c.password, c.tags)
		assert.ErrorIs(t, err, store.ErrInvalid, name)
	}
	release()
	u, err := users.Create(ctx, "default", "  Ann@Example.com ", "password", nil)
	require.NoError(t, err)
	assert.Equal(t, "Ann@Example.com", u.Email, "trimmed")
	assert.Equal(t, []string{}, u.Tags)
	_, err = users.Create(ctx, "default", "ann@example.COM", "password", nil)
	assert.ErrorIs(t, err, store.ErrConflict)
	page, err := users.List(ctx, "default", "", paginateAll())
	require.NoError(t, err)
	assert.Len(t, page.Items, 1)
}

func paginateAll() paginate.Request { return paginate.Request{Limit: paginate.MaxLimit} }

// Logouts and replays are in the audit log, with the session's user as the
// actor and the client address, never a token.
func TestSession_Audited(t *testing.T) {
	e := newEnv(t, envConfig{opts: identity.Options{NoReuseWindow: true}, auditLog: true})
	u, ts := e.loggedIn(t, "", "default")
	e.refresh(t, "", ts.RefreshToken).tokens(t)
	require.Equal(t, http.StatusUnauthorized, e.refresh(t, "", ts.RefreshToken).status, "a replay")
	_, ts2 := e.loggedIn2(t)
	e.clock.Advance(time.Second)
	require.Equal(t, http.StatusNoContent, e.logout(t, "", ts2.RefreshToken).status)

	page, err := e.st.ListAudit(context.Background(), "default", store.AuditFilter{}, paginateAll())
	require.NoError(t, err)
	require.Len(t, page.Items, 2)
	logout, replay := page.Items[0], page.Items[1] // newest first
	assert.Equal(t, store.ActionSessionLogout, logout.Action)
	assert.Equal(t, sidOf(t, ts2.AccessToken), logout.Target)
	assert.NotEqual(t, u.ID, logout.Actor)
	assert.Equal(t, "127.0.0.1", logout.ClientAddr)
	assert.Equal(t, store.ActionSessionReplayed, replay.Action)
	assert.Equal(t, u.ID, replay.Actor)
	assert.Equal(t, sidOf(t, ts.AccessToken), replay.Target)
}
