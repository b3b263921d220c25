package keys_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

// scopedKey creates an API key of the project with scopes and an expiry
// (zero: none).
func (e *env) scopedKey(project string, scopes []string, expiresIn time.Duration) (store.APIKey, string) {
	e.t.Helper()
	k, tok, err := e.ak.CreateKey(context.Background(), project, keys.NewKey{Name: "restricted", Scopes: scopes, ExpiresIn: expiresIn})
	require.NoError(e.t, err)
	return k, tok
}

// A key's scopes travel as the scope claim, space-separated, and reach the
// principal; its expiry as exp, equal to the record's; a key without either
// has neither claim.
func TestAPIKeys_ScopeAndExpClaims(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	k, tok := e.scopedKey("alpha", []string{"contacts:read", "reports:read"}, 90*24*time.Hour)
	require.Equal(t, []string{"contacts:read", "reports:read"}, k.Scopes)
	c := decodeClaims(t, tok)
	require.Equal(t, "contacts:read reports:read", c["scope"])
	require.EqualValues(t, e.clock.Now().Add(90*24*time.Hour).Unix(), c["exp"])
	require.True(t, k.ExpiresAt.Equal(time.Unix(int64(c["exp"].(float64)), 0)), "the record's expiry is the token's exp")
	got, err := e.st.GetAPIKey(context.Background(), "alpha", k.ID)
	require.NoError(t, err)
	require.Equal(t, k.Scopes, got.Scopes)
	require.True(t, k.ExpiresAt.Equal(got.ExpiresAt))

	r := e.whoami("alpha", tok)
	requireOK(t, r, "alpha", "api_key")
	require.Equal(t, []any{"contacts:read", "reports:read"}, r.body["scopes"], "the principal's scopes")

	_, plain := e.apiKey("alpha")
	c = decodeClaims(t, plain)
	require.NotContains(t, c, "scope", "a key without scopes")
	require.NotContains(t, c, "exp", "a permanent key")
	r = e.whoami("alpha", plain)
	requireOK(t, r, "alpha", "api_key")
	require.Nil(t, r.body["scopes"], "the principal of a key without scopes")
}

// CreateKey refuses bad scope names, too many, a scope twice and a bad
// expiry, and creates nothing.
func TestAPIKeys_InvalidScopesCreateNothing(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	many := make([]string, store.MaxScopes+1)
	for i := range many {
		many[i] = string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	for name, nk := range map[string]keys.NewKey{
		"upper case":   {Name: "k", Scopes: []string{"Contacts:read"}},
		"space":        {Name: "k", Scopes: []string{"contacts read"}},
		"empty":        {Name: "k", Scopes: []string{""}},
		"65 bytes":     {Name: "k", Scopes: []string{string(make([]byte, 65))}},
		"twice":        {Name: "k", Scopes: []string{"a", "a"}},
		"too many":     {Name: "k", Scopes: many},
		"negative exp": {Name: "k", ExpiresIn: -time.Hour},
		"tiny exp":     {Name: "k", ExpiresIn: time.Millisecond},
	} {
		_, tok, err := e.ak.CreateKey(ctx, "alpha", nk)
		require.Errorf(t, err, "CreateKey with %s", name)
		require.Truef(t, errors.Is(err, keys.ErrInvalidScope) || errors.Is(err, keys.ErrInvalidDuration), "CreateKey with %s: %v", name, err)
		require.Empty(t, tok)
	}
	ks, err := e.ak.List(ctx, "alpha")
	require.NoError(t, err)
	require.Empty(t, ks, "keys after refused creates")
}

// A key with an expiry works until it and is refused from it on, with no
// leeway, by every instance; introspection then says it is not active.
func TestVerify_ExpiredAPIKeyOnEveryInstance(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	_, caller := e.apiKey("alpha")
	k, tok := e.scopedKey("alpha", nil, time.Hour)
	other := keys.NewVerifier(e.openSecond(), &keys.VerifierOptions{Now: e.clock.Now, Logger: testLogger(t)})

	e.clock.Set(k.ExpiresAt.Add(-time.Second))
	requireOK(t, e.whoami("alpha", tok), "alpha", "api_key")
	_, err := other.Verify(ctx, "alpha", tok)
	require.NoError(t, err, "the other instance, a second before the expiry")
	requireActive(t, e, caller, tok, true)

	e.clock.Set(k.ExpiresAt)
	e.requireRejected("alpha", tok, "expired")
	_, err = other.Verify(ctx, "alpha", tok)
	require.ErrorIs(t, err, keys.ErrTokenExpired, "the other instance, at the expiry")
	requireActive(t, e, caller, tok, false)
}

// requireActive introspects tok with caller and checks its activity.
func requireActive(t *testing.T, e *env, caller, tok string, active bool) map[string]any {
	t.Helper()
	status, _, body := e.introspect("alpha", caller, form(tok), formType)
	require.Equal(t, http.StatusOK, status, body)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	require.Equal(t, active, got["active"], body)
	if !active {
		require.Equal(t, map[string]any{"active": false}, got)
	}
	return got
}

// Introspection returns a key's scopes as scope and its expiry as exp.
func TestIntrospect_ScopeAndExp(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	_, caller := e.apiKey("alpha")
	k, tok := e.scopedKey("alpha", []string{"contacts:read", "reports:read"}, time.Hour)
	got := requireActive(t, e, caller, tok, true)
	require.Equal(t, "contacts:read reports:read", got["scope"])
	require.EqualValues(t, k.ExpiresAt.Unix(), got["exp"])
	_, plain := e.apiKey("alpha")
	got = requireActive(t, e, caller, plain, true)
	require.NotContains(t, got, "scope")
	require.NotContains(t, got, "exp")
}

// A roll with an overlap: both keys work on two instances during the
// overlap; from its end the old one is refused by both, from the first
// request, and the new one keeps working.
func TestAPIKeys_RollOverlapOnTwoInstances(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	_, caller := e.apiKey("alpha")
	k, oldTok := e.scopedKey("alpha", []string{"reports:read"}, 0)
	other := keys.NewVerifier(e.openSecond(), &keys.VerifierOptions{Now: e.clock.Now, Logger: testLogger(t)})
	both := func(tok string) error {
		t.Helper()
		if r := e.whoami("alpha", tok); r.status != http.StatusOK {
			return errors.New("refused by the first instance")
		}
		_, err := other.Verify(ctx, "alpha", tok)
		return err
	}
	// Both instances have used and kept the old key's record.
	require.NoError(t, both(oldTok))

	e.clock.Advance(time.Minute)
	rolledAt := e.clock.Now()
	old, next, newTok, err := e.ak.Roll(ctx, "alpha", k.ID, time.Hour)
	require.NoError(t, err)
	require.Equal(t, next.ID, old.RolledTo)
	require.Equal(t, k.ID, next.RolledFrom)
	require.Equal(t, k.Name, next.Name)
	require.Equal(t, k.Scopes, next.Scopes)
	require.True(t, old.RevokesAt.Equal(rolledAt.Add(time.Hour)), "the old key stops at the end of the overlap: %s", old.RevokesAt)
	require.Equal(t, "reports:read", decodeClaims(t, newTok)["scope"], "the successor's scope claim")

	require.NoError(t, both(oldTok), "the old key right after the roll")
	require.NoError(t, both(newTok), "the new key right after the roll")
	e.clock.Set(old.RevokesAt.Add(-time.Microsecond))
	require.NoError(t, both(oldTok), "the old key at the last microsecond of the overlap")
	requireActive(t, e, caller, oldTok, true)

	e.clock.Set(old.RevokesAt)
	e.requireRejected("alpha", oldTok, "rolled API key past its overlap")
	_, err = other.Verify(ctx, "alpha", oldTok)
	require.ErrorIs(t, err, keys.ErrTokenRevoked, "the other instance at the end of the overlap")
	requireActive(t, e, caller, oldTok, false)
	require.NoError(t, both(newTok), "the new key after the overlap")
}

// A rolled key with an expiry gets the old key's lifetime again, whole,
// from the roll: exp minus iat is the same on both tokens, whatever
// fraction of a second the key was created and rolled at, however often
// it is rolled.
func TestAPIKeys_RollKeepsTheLifetime(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	e.clock.Advance(700 * time.Millisecond)
	k, tok := e.scopedKey("alpha", nil, time.Hour)
	lifetime := func(tok string) float64 {
		c := decodeClaims(t, tok)
		return c["exp"].(float64) - c["iat"].(float64)
	}
	require.EqualValues(t, 3600, lifetime(tok))
	for range 3 {
		e.clock.Advance(10*time.Minute + 600*time.Millisecond)
		_, next, newTok, err := e.ak.Roll(ctx, "alpha", k.ID, 0)
		require.NoError(t, err)
		require.EqualValues(t, 3600, lifetime(newTok), "the successor's exp - iat")
		require.True(t, next.ExpiresAt.Equal(e.clock.Now().Truncate(time.Second).Add(time.Hour)), "expires_at %s", next.ExpiresAt)
		k = next
	}
}

// A roll with no overlap revokes the old key at once; a revoked, unknown or
// already rolled key does not roll, and nothing is created.
func TestAPIKeys_RollRefused(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	k, tok := e.apiKey("alpha")
	_, _, newTok, err := e.ak.Roll(ctx, "alpha", k.ID, 0)
	require.NoError(t, err)
	e.requireRejected("alpha", tok, "revoked API key")
	requireOK(t, e.whoami("alpha", newTok), "alpha", "api_key")

	revokedKey, _ := e.apiKey("alpha")
	require.NoError(t, e.ak.Revoke(ctx, "alpha", revokedKey.ID))
	before, err := e.ak.List(ctx, "alpha")
	require.NoError(t, err)
	for name, c := range map[string]struct {
		id   string
		want error
	}{
		"revoked":        {revokedKey.ID, store.ErrRevoked},
		"unknown":        {store.NewID(store.PrefixAPIKey), store.ErrNotFound},
		"rolled already": {k.ID, store.ErrConflict},
	} {
		_, _, tok, err := e.ak.Roll(ctx, "alpha", c.id, time.Hour)
		require.ErrorIsf(t, err, c.want, "Roll of a %s key", name)
		require.Empty(t, tok)
	}
	_, _, _, err = e.ak.Roll(ctx, "alpha", revokedKey.ID, -time.Second)
	require.ErrorIs(t, err, keys.ErrInvalidDuration)
	after, err := e.ak.List(ctx, "alpha")
	require.NoError(t, err)
	require.Len(t, after, len(before), "refused rolls created a key")
}

// RequireScope admits a key holding the scope, a key without scopes and a
// login token, and answers a key without the scope 403 forbidden.
func TestRequireScope(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	_, holds := e.scopedKey("alpha", []string{"reports:read", "contacts:read"}, 0)
	_, lacks := e.scopedKey("alpha", []string{"contacts:read"}, 0)
	_, plain := e.apiKey("alpha")
	for name, tok := range map[string]string{"holding the scope": holds, "without scopes": plain, "login token": e.loginToken("alpha")} {
		r := e.get("/p/alpha/v1/reports", "Bearer "+tok)
		require.Equalf(t, http.StatusOK, r.status, "%s: %v", name, r.body)
	}
	r := e.get("/p/alpha/v1/reports", "Bearer "+lacks)
	require.Equal(t, http.StatusForbidden, r.status, "a key lacking the scope")
	require.Equal(t, "application/problem+json", r.header.Get("Content-Type"))
	require.Equal(t, "forbidden", r.body["code"])
	require.EqualValues(t, 403, r.body["status"])
	require.Contains(t, r.body["detail"], `"reports:read"`)
	r = e.get("/p/alpha/v1/reports", "")
	require.Equal(t, http.StatusUnauthorized, r.status, "no token")

	require.Panics(t, func() { keys.RequireScope("Reports") }, "RequireScope of a bad scope name")
	require.True(t, keys.Principal{Kind: keys.KindUser}.HasScope("anything"))
	require.False(t, keys.Principal{Kind: keys.KindAPIKey, Scopes: []string{"a"}}.HasScope("b"))
}
