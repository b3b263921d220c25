package latchkey_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/internal/testutil"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// Every endpoint of Latchkey's that takes an API key admits a key with
// scopes only when it holds the endpoint's scope, and answers 403
// forbidden otherwise; a key without scopes calls them all. A scoped key
// that is revoked is answered 401, not 403.
func TestScopedKeys_OnEveryEndpoint(t *testing.T) {
	a, _ := twoSQLiteNodes(t, nil)
	ctx := context.Background()
	createContact(t, a.lk.Store(), "default", "Grace")
	mk := func(scopes ...string) (string, string) {
		k, tok, err := a.lk.APIKeys().CreateKey(ctx, "default", keys.NewKey{Name: "svc", Scopes: scopes})
		require.NoError(t, err)
		return k.ID, tok
	}
	_, plain := mk()
	_, contacts := mk(keys.ScopeContactsRead)
	_, introspect := mk(keys.ScopeIntrospect)
	_, feed := mk(keys.ScopeRevocations)
	_, other := mk("reports:read")
	introspectAs := func(caller, token string) (int, string) {
		st, _, body := a.call(http.MethodPost, latchkey.PathIntrospect, "application/x-www-form-urlencoded",
			url.Values{"token": {token}}.Encode(), "Authorization", "Bearer "+caller)
		return st, body
	}
	forbidden := func(st int, body, what string) {
		t.Helper()
		require.Equalf(t, http.StatusForbidden, st, "%s: %s", what, body)
		require.Equalf(t, "forbidden", problemCode(t, body), "%s", what)
	}

	for name, tok := range map[string]string{"contacts:read": contacts, "no scopes": plain} {
		st, body := a.get(latchkey.PathContacts, tok)
		require.Equalf(t, http.StatusOK, st, "GET /v1/contacts with %s: %s", name, body)
	}
	for name, tok := range map[string]string{"identity:introspect": introspect, "reports:read": other} {
		st, body := a.get(latchkey.PathContacts, tok)
		forbidden(st, body, "GET /v1/contacts with "+name)
	}

	for name, tok := range map[string]string{"identity:introspect": introspect, "no scopes": plain} {
		st, body := introspectAs(tok, contacts)
		require.Equalf(t, http.StatusOK, st, "introspection with %s: %s", name, body)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(body), &got))
		require.Equal(t, true, got["active"])
		require.Equal(t, "contacts:read", got["scope"], "introspection's scope member")
	}
	for name, tok := range map[string]string{"contacts:read": contacts, "identity:revocations": feed} {
		st, body := introspectAs(tok, plain)
		forbidden(st, body, "introspection with "+name)
	}

	for name, tok := range map[string]string{"identity:revocations": feed, "no scopes": plain} {
		st, body := a.get(latchkey.PathRevocations, tok)
		require.Equalf(t, http.StatusOK, st, "the feed with %s: %s", name, body)
	}
	for name, tok := range map[string]string{"contacts:read": contacts, "identity:introspect": introspect} {
		st, body := a.get(latchkey.PathRevocations, tok)
		forbidden(st, body, "the feed with "+name)
	}

	// A revoked key is refused as revoked, whatever its scopes.
	id, revoked := mk(keys.ScopeIntrospect)
	st, body := a.get(latchkey.PathContacts, revoked) // cached as valid
	forbidden(st, body, "GET /v1/contacts before the revocation")
	require.NoError(t, a.lk.APIKeys().Revoke(ctx, "default", id))
	st, body = a.get(latchkey.PathContacts, revoked)
	require.Equal(t, http.StatusUnauthorized, st, body)
}

// getter calls one instance: GET path with a bearer token.
type getter func(path, token string) (int, string)

// testRollOverlap rolls a key with an overlap through the first instance
// of ins, on a clock they share: both keys work on every instance during
// the overlap; from its end the old key is refused by every instance, from
// the first request, and the new key keeps working; the feed lists the old
// key with the end of the overlap as revoked_at.
func testRollOverlap(t *testing.T, lk *latchkey.Latchkey, clock *testutil.Clock, ins []getter) {
	ctx := context.Background()
	p := "default"
	if lk.Store() != nil {
		if _, err := lk.Store().GetProject(ctx, "shared"); err == nil {
			p = "shared"
		}
	}
	_, reader, err := lk.APIKeys().Create(ctx, p, "feed reader")
	require.NoError(t, err)
	k, oldTok, err := lk.APIKeys().CreateKey(ctx, p, keys.NewKey{Name: "billing", Scopes: []string{keys.ScopeContactsRead}})
	require.NoError(t, err)
	all := func(tok string, want int, what string) {
		t.Helper()
		for i, get := range ins {
			st, body := get(latchkey.PathContacts, tok)
			require.Equalf(t, want, st, "%s, instance %d: %s", what, i, body)
		}
	}
	all(oldTok, http.StatusOK, "the key before the roll") // every instance keeps its record

	old, next, newTok, err := lk.APIKeys().Roll(ctx, p, k.ID, time.Hour)
	require.NoError(t, err)
	end := old.RevokesAt
	require.True(t, end.Equal(clock.Now().Truncate(time.Microsecond).Add(time.Hour)), "the overlap ends an hour after the roll: %s, now %s", end, clock.Now())
	require.Equal(t, k.Scopes, next.Scopes)
	all(oldTok, http.StatusOK, "the old key during the overlap")
	all(newTok, http.StatusOK, "the new key during the overlap")
	clock.Set(end.Add(-time.Microsecond))
	all(oldTok, http.StatusOK, "the old key at the overlap's last microsecond")

	clock.Set(end)
	all(oldTok, http.StatusUnauthorized, "the old key at the end of the overlap")
	all(newTok, http.StatusOK, "the new key after the overlap")

	// The feed lists by the real clock, which the test's clock is an hour
	// behind: the item is due.
	st, body := ins[len(ins)-1](latchkey.PathRevocations, reader)
	require.Equal(t, http.StatusOK, st, body)
	var page feedPage
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	require.Len(t, page.Data, 1, body)
	require.Equal(t, "api_key", page.Data[0].Kind)
	require.Equal(t, k.ID, page.Data[0].Subject)
	require.Equal(t, end.UTC().Format(paginate.TimeLayout), page.Data[0].RevokedAt, "the item's revoked_at is the end of the overlap")
}

// A roll with an overlap on two processes sharing one SQLite file, and on
// two instances sharing one MySQL or MariaDB database.
func TestRollOverlap_TwoInstances(t *testing.T) { onEachBackend(t, testRollOverlapTwoInstances) }

func testRollOverlapTwoInstances(t *testing.T, twoNodes nodePair) {
	clock := testutil.NewClock(time.Now().Add(-2 * time.Hour))
	a, b := twoNodes(t, func() *latchkey.Options { return &latchkey.Options{Now: clock.Now} })
	testRollOverlap(t, a.lk, clock, []getter{a.get, b.get})
}

// A roll with an overlap on two instances sharing one PostgreSQL database.
func TestRollOverlap_TwoInstancesPostgres(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	clock := testutil.NewClock(time.Now().Add(-2 * time.Hour))
	a := startInstance(t, dbURL, clock.Now)
	b := startInstance(t, dbURL, clock.Now)
	_, err := a.lk.CreateProject(context.Background(), "shared")
	require.NoError(t, err)
	get := func(in instance) getter {
		return func(path, token string) (int, string) { return in.call(t, http.MethodGet, path, token, "") }
	}
	testRollOverlap(t, a.lk, clock, []getter{get(a), get(b)})
}
