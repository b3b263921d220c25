package keys_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

// A login token is valid while its session is live: from the next request
// after the session ends (logout, replay: a revoked family), every login
// token of the session is refused, cached or not, also when another handle
// on the database (another process) ended it.
func TestVerify_SessionRevoked(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	u := e.user("alpha")
	first, sid := e.loginTokenOf(u)
	second, _, err := e.kr.MintLoginToken(ctx, "alpha", u, sid) // minted by a refresh
	require.NoError(t, err)
	other, _ := e.loginTokenOf(u) // another session of the same user
	for _, tok := range []string{first, second, other} {
		requireOK(t, e.whoami("alpha", tok), "alpha", "user") // now cached
	}

	require.NoError(t, e.openSecond().RevokeRefreshFamily(ctx, "alpha", sid, e.clock.Now()))
	e.requireRejected("alpha", first, "session ended")
	e.requireRejected("alpha", second, "session ended")
	requireOK(t, e.whoami("alpha", other), "alpha", "user")

	_, err = e.v.Verify(ctx, "alpha", first)
	require.ErrorIs(t, err, keys.ErrTokenRevoked, "a client is told to sign in again, not to refresh")
}

// A session also ends when its refresh token expires unused and at its
// absolute end, whatever the login token's own exp says.
func TestVerify_SessionExpired(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	u := e.user("alpha")
	now := e.clock.Now()
	for _, f := range []store.RefreshFamily{
		{ExpiresAt: now.Add(time.Hour), EndsAt: now.Add(90 * 24 * time.Hour)}, // refresh token expires first
		{ExpiresAt: now.Add(30 * 24 * time.Hour), EndsAt: now.Add(2 * time.Hour)},
	} {
		f.ID, f.ProjectID, f.UserID = store.NewID(store.PrefixFamily), "alpha", u.ID
		f.IssuedAt, f.CreatedAt = now, now
		require.NoError(t, e.st.CreateRefreshFamily(ctx, f, u.PasswordHash))
		tok, _, err := e.kr.MintLoginToken(ctx, "alpha", u, f.ID)
		require.NoError(t, err)
		requireOK(t, e.whoami("alpha", tok), "alpha", "user")
		end := f.ExpiresAt
		if f.EndsAt.Before(end) {
			end = f.EndsAt
		}
		e.clock.Set(end.Add(-time.Second))
		requireOK(t, e.whoami("alpha", tok), "alpha", "user")
		e.clock.Set(end)
		e.requireRejected("alpha", tok, "session ended")
		e.clock.Set(now)
	}
}

// Disabling a user ends all their sessions: their login tokens are refused
// from the next request; enabling them again does not bring those back.
func TestVerify_UserDisabled(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	u, v := e.user("alpha"), e.user("alpha")
	a1, _ := e.loginTokenOf(u)
	a2, _ := e.loginTokenOf(u)
	b, _ := e.loginTokenOf(v)
	for _, tok := range []string{a1, a2, b} {
		requireOK(t, e.whoami("alpha", tok), "alpha", "user")
	}
	require.NoError(t, e.openSecond().DisableUser(ctx, "alpha", u.ID, e.clock.Now()))
	e.requireRejected("alpha", a1, "session ended")
	e.requireRejected("alpha", a2, "session ended")
	requireOK(t, e.whoami("alpha", b), "alpha", "user")
	require.NoError(t, e.st.EnableUser(ctx, "alpha", u.ID))
	e.requireRejected("alpha", a1, "session ended")
}

// A token that names a session of another user is refused, though it is
// signed (a key compromise cannot borrow another user's session state).
func TestVerify_SessionOfAnotherUser(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	u, v := e.user("alpha"), e.user("alpha")
	sid := e.session(v)
	tok, _, err := e.kr.MintLoginToken(ctx, "alpha", u, sid)
	require.NoError(t, err)
	e.requireRejected("alpha", tok, "session of another user")
}

// A login token without a sid (as minted before sessions existed) would
// skip every session and user check: a correctly signed one is refused,
// whether its user exists, is disabled or never did, and whether its
// check is made at once or deferred (BeginCheck, with the token
// warm in the verification cache).
func TestVerify_LoginTokenWithoutSessionIsRefused(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	k, err := e.st.ActiveSigningKey(ctx, "alpha")
	require.NoError(t, err)
	_, caller := e.apiKey("alpha")
	live, disabled := e.user("alpha"), e.user("alpha")
	err = e.st.DisableUser(ctx, "alpha", disabled.ID, e.clock.Now())
	require.NoError(t, err)
	for name, sub := range map[string]string{
		"live user":     live.ID,
		"disabled user": disabled.ID,
		"no such user":  store.NewID(store.PrefixUser),
	} {
		t.Run(name, func(t *testing.T) {
			c := e.loginClaims("alpha")
			c["sub"] = sub
			delete(c, "sid")
			tok := forge(t, edHeader(k.ID), c, ed25519Signer(e.privateKey(k)))
			e.requireRejected("alpha", tok, "login token without sid")
			status, _, body := e.introspect("alpha", caller, form(tok), formType)
			require.Equal(t, http.StatusOK, status, body)
			require.JSONEq(t, `{"active":false}`, body)
		})
	}
}
