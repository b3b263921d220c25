package keys_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/internal/checkedlist"
	"github.com/latchkey-dev/latchkey/internal/telemetry/telemetrytest"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/tenant"
)

// The check of a token split where it reads the store (Verifier.BeginCheck,
// Check), as the checked list of contacts (internal/checkedlist) uses it.

// deferredServer serves h behind the bearer check of the checked list of
// e's store, for project alpha, with the header X-Before set before the
// check runs.
func deferredServer(t *testing.T, e *env, h http.Handler) *httptest.Server {
	t.Helper()
	list := checkedlist.Contacts(e.v, e.st)
	require.True(t, list.Combines())
	guarded := list.Middleware(h)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Before", "kept")
		guarded.ServeHTTP(w, r.WithContext(tenant.NewContext(r.Context(), "alpha")))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func deferredGet(t *testing.T, srv *httptest.Server, method, token string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+"/", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(b)
}

// TestBeginCheck_HoldsTheAnswer: on a store without
// CheckedContactLister (SQLite), a handler behind the deferred check that
// writes without deciding the check has its answer held until the records
// are read; a token revoked since it was cached gets the bearer check's 401
// and nothing of the handler's answer, headers included, whether the
// handler writes a body, only a status, or nothing.
func TestBeginCheck_HoldsTheAnswer(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	writes := map[string]http.HandlerFunc{
		"body": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Secret", "yes")
			_, _ = io.WriteString(w, "the secret page")
		},
		"status": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Secret", "yes")
			w.WriteHeader(http.StatusAccepted)
		},
		"flush": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Secret", "yes")
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, "the secret page")
		},
		"nothing": func(w http.ResponseWriter, r *http.Request) {},
	}
	for name, h := range writes {
		t.Run(name, func(t *testing.T) {
			srv := deferredServer(t, e, h)
			k, tok := e.apiKey("alpha")
			for range 2 { // the second request is admitted with its check pending
				res, body := deferredGet(t, srv, http.MethodGet, tok)
				require.Less(t, res.StatusCode, 300, body)
				if name != "nothing" {
					require.Equal(t, "yes", res.Header.Get("X-Secret"))
				}
				require.Equal(t, "kept", res.Header.Get("X-Before"))
			}
			reads := e.st.getAPIKey.Load()
			other := e.openSecond()
			require.NoError(t, other.RevokeAPIKey(ctx, "alpha", k.ID, e.clock.Now()))
			res, body := deferredGet(t, srv, http.MethodGet, tok)
			require.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
			require.Equal(t, `Bearer error="invalid_token"`, res.Header.Get("WWW-Authenticate"))
			require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
			require.Empty(t, res.Header.Get("X-Secret"))
			require.Equal(t, "kept", res.Header.Get("X-Before"))
			require.NotContains(t, body, "secret")
			require.Contains(t, body, `"code":"invalid_token"`)
			require.Greater(t, e.st.getAPIKey.Load(), reads, "the records were not read")
			require.Equal(t, "revoked API key", e.lastReason())
		})
	}
}

// TestBeginCheck_FirstUseChecksAtOnce: a token the verifier has not
// seen is checked before the handler runs, as Middleware checks it.
func TestBeginCheck_FirstUseChecksAtOnce(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ran := false
	srv := deferredServer(t, e, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran = true }))
	res, body := deferredGet(t, srv, http.MethodGet, strings.Repeat("x", 20))
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	require.False(t, ran, "the handler ran for a malformed token")

	k, tok := e.apiKey("alpha")
	require.NoError(t, e.ak.Revoke(context.Background(), "alpha", k.ID))
	res, body = deferredGet(t, srv, http.MethodHead, tok)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	require.False(t, ran, "the handler ran for a revoked token")
}

// TestBeginCheck_VersionedOneRead: on a store.VersionedContactLister
// (SQLite), a list behind the deferred check whose token's records the
// verifier keeps reads the store once per request: the page with the change
// version, and neither a separate ChangeVersion nor a record. An API key
// revoked, or a session ended, through another handle of the file (another
// process) is refused by the very next request, with the bearer check's
// 401 and nothing of the page, its headers included; an admitted list's
// headers, set once the read decided the check, are sent.
func TestBeginCheck_VersionedOneRead(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	list := checkedlist.Contacts(e.v, e.st)
	require.True(t, list.Combines(), "the verifier's own store")
	other := e.openSecond()
	require.False(t, checkedlist.Contacts(e.v, other).Combines(), "another store's versions say nothing of the verifier's records")
	require.False(t, e.v.KeepsRecordsAt(other))
	require.True(t, e.v.KeepsRecordsAt(e.st))

	_, err := e.st.CreateContact(ctx, store.Contact{ID: "ct_secret", ProjectID: "alpha", Name: "Secret Contact", CreatedAt: e.clock.Now()})
	require.NoError(t, err)
	contacts := checkedlist.ContactStore(e.st, list)
	srv := deferredServer(t, e, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, err := contacts.ListContacts(r.Context(), "alpha", paginate.Request{Limit: 10})
		if err != nil {
			w.Header().Set("X-Secret", "yes")
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.Header().Set("X-Page", "yes")
		for _, c := range page.Items {
			_, _ = io.WriteString(w, c.Name)
		}
	}))
	reads := func() [5]int64 {
		return [5]int64{e.st.listVersioned.Load(), e.st.changeVersion.Load(), e.st.getSigningKey.Load(), e.st.getAPIKey.Load(), e.st.getSession.Load()}
	}
	admitted := func(t *testing.T, tok string) {
		t.Helper()
		for range 3 { // the first use checks at once, and may touch the key
			res, body := deferredGet(t, srv, http.MethodGet, tok)
			require.Equal(t, http.StatusOK, res.StatusCode, body)
			require.Equal(t, "Secret Contact", body)
			require.Equal(t, "yes", res.Header.Get("X-Page"))
			require.Equal(t, "kept", res.Header.Get("X-Before"))
		}
		before := reads()
		for range 2 {
			res, body := deferredGet(t, srv, http.MethodGet, tok)
			require.Equal(t, http.StatusOK, res.StatusCode, body)
			require.Equal(t, "yes", res.Header.Get("X-Page"))
		}
		require.Equal(t, [5]int64{before[0] + 2, before[1], before[2], before[3], before[4]}, reads(),
			"reads per kind (versioned page, ChangeVersion, signing key, API key, session) over two requests")
	}
	refused := func(t *testing.T, tok, reason string) {
		t.Helper()
		res, body := deferredGet(t, srv, http.MethodGet, tok)
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
		require.Equal(t, `Bearer error="invalid_token"`, res.Header.Get("WWW-Authenticate"))
		require.NotContains(t, body, "Secret")
		require.Empty(t, res.Header.Get("X-Secret"))
		require.Empty(t, res.Header.Get("X-Page"))
		require.Equal(t, "kept", res.Header.Get("X-Before"))
		require.Equal(t, reason, e.lastReason())
	}

	t.Run("APIKeyRevoked", func(t *testing.T) {
		k, tok := e.apiKey("alpha")
		admitted(t, tok)
		require.NoError(t, other.RevokeAPIKey(ctx, "alpha", k.ID, e.clock.Now()))
		refused(t, tok, "revoked API key")
	})
	t.Run("SessionEnded", func(t *testing.T) {
		tok, sid := e.loginTokenOf(e.user("alpha"))
		admitted(t, tok)
		require.NoError(t, other.RevokeRefreshFamily(ctx, "alpha", sid, e.clock.Now()))
		refused(t, tok, "session ended")
	})
}

// TestBeginCheck_OneVerificationPerRequest: a request behind the checked
// list verifies its token once, whichever step decides its records (the
// list's read, the guard, or BeginCheck itself for a token the cache does
// not hold or that expired): the verification counter counts one per
// request, by its cache hit or miss and its result.
func TestBeginCheck_OneVerificationPerRequest(t *testing.T) {
	meters := telemetrytest.NewMeters(t)
	e := newEnv(t, &keys.VerifierOptions{MeterProvider: meters}, "alpha")
	ctx := context.Background()
	list := checkedlist.Contacts(e.v, e.st)
	contacts := checkedlist.ContactStore(e.st, list)
	lists := deferredServer(t, e, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := contacts.ListContacts(r.Context(), "alpha", paginate.Request{Limit: 10}); err != nil {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	writes := deferredServer(t, e, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "no list: the guard decides")
	}))

	k, tok := e.apiKey("alpha")
	for range 3 {
		res, body := deferredGet(t, lists, http.MethodGet, tok) // miss, then hits decided by the read
		require.Equal(t, http.StatusOK, res.StatusCode, body)
	}
	for range 2 {
		res, body := deferredGet(t, writes, http.MethodGet, tok) // hits decided by the guard
		require.Equal(t, http.StatusOK, res.StatusCode, body)
	}
	require.NoError(t, e.openSecond().RevokeAPIKey(ctx, "alpha", k.ID, e.clock.Now()))
	res, body := deferredGet(t, lists, http.MethodGet, tok) // hit, revoked by the read's records
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	login := e.loginToken("alpha")
	res, body = deferredGet(t, lists, http.MethodGet, login) // miss
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	e.clock.Advance(25 * time.Hour)
	res, body = deferredGet(t, lists, http.MethodGet, login) // hit, expired
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, body)

	assert.Equal(t, map[string]float64{
		"cache=miss,result=ok":     2,
		"cache=hit,result=ok":      4,
		"cache=hit,result=revoked": 1,
		"cache=hit,result=expired": 1,
	}, meters.Values(t, "latchkey.verifications"))
}
