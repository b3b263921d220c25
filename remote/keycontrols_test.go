package remote

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/internal/testutil"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// A scoped key's scopes reach the claims, and RequireScope answers a key
// lacking the scope 403; a key with an expiry is refused from its exp on,
// with no leeway, from the cache and afresh.
func TestVerify_scopesAndKeyExpiry(t *testing.T) {
	t.Parallel()
	clock := testutil.NewClock(time.Now().Truncate(time.Second))
	h := newHarness(t, clock)
	_, reader := h.apiKey("svc")
	v := h.verifier(reader, &Options{Leeway: 30 * time.Second})
	ctx := context.Background()
	k, tok, err := h.lk.APIKeys().CreateKey(ctx, store.DefaultProject,
		keys.NewKey{Name: "reports", Scopes: []string{"reports:read"}, ExpiresIn: time.Hour})
	require.NoError(t, err)

	c, err := v.Verify(ctx, tok)
	require.NoError(t, err)
	require.Equal(t, []string{"reports:read"}, c.Scopes)
	require.Equal(t, "reports:read", c.Scope())
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	require.Equal(t, http.StatusNoContent, serve(v.Middleware(RequireScope("reports:read")(ok)), tok).Code)
	rec := serve(v.Middleware(RequireScope("billing:write")(ok)), tok)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Contains(t, rec.Body.String(), `"code":"forbidden"`)
	require.Equal(t, http.StatusNoContent, serve(v.Middleware(RequireScope("billing:write")(ok)), reader).Code, "a key without scopes")

	clock.Set(k.ExpiresAt.Add(-time.Second))
	_, err = v.Verify(ctx, tok)
	require.NoError(t, err, "a second before the expiry")
	clock.Set(k.ExpiresAt)
	for range 2 {
		_, err = v.Verify(ctx, tok)
		require.ErrorIs(t, err, keys.ErrTokenExpired, "at the expiry, despite the leeway")
	}
	_, err = v.Verify(ctx, reader)
	require.NoError(t, err, "a permanent key")
}

// The old key of a roll keeps verifying during the overlap and is refused
// once it ends: the feed lists it then, with the end of the overlap as
// revoked_at, and the verifier's long poll brings it. The new key keeps
// verifying.
func TestVerify_rolledKeyRefusedAtTheEndOfTheOverlap(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil) // real time: the feed lists a scheduled item by the clock
	_, reader := h.apiKey("svc")
	v := h.verifier(reader, &Options{Wait: 20 * time.Second, StaleAfter: time.Minute})
	ctx := context.Background()
	oldID, oldTok := h.apiKey("backend")
	_, err := v.Verify(ctx, oldTok)
	require.NoError(t, err)

	const overlap = 2 * time.Second
	old, _, newTok, err := h.lk.APIKeys().Roll(ctx, store.DefaultProject, oldID, overlap)
	require.NoError(t, err)
	end := old.RevokesAt
	for _, tok := range []string{oldTok, newTok} {
		_, err = v.Verify(ctx, tok)
		if time.Now().Before(end) {
			require.NoError(t, err, "during the overlap")
		}
	}
	refusedWithin(t, v, oldTok, keys.ErrTokenRevoked, 20*time.Second)
	require.False(t, time.Now().Before(end), "the old key was refused before the overlap ended")
	_, err = v.Verify(ctx, newTok)
	require.NoError(t, err, "the new key after the overlap")

	page, err := h.st.ListRevocations(ctx, store.DefaultProject, paginate.Request{Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	require.Equal(t, oldID, page.Items[0].Subject)
	require.True(t, end.Equal(page.Items[0].RevokedAt), "the item's revoked_at %s is the end of the overlap %s", page.Items[0].RevokedAt, end)
}
