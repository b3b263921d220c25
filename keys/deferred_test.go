package keys_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/tenant"
)

// deferredServer serves h behind e's verifier's DeferredMiddleware, for
// project alpha.
func deferredServer(t *testing.T, e *env, h http.Handler) *httptest.Server {
	t.Helper()
	guarded := e.v.DeferredMiddleware(h)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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

// TestDeferredMiddleware_HoldsTheAnswer: on a store without
// CheckedContactLister (SQLite), a handler behind DeferredMiddleware that
// writes without deciding the check has its answer held until the records
// are read; a token revoked since it was cached gets the bearer check's 401
// and nothing of the handler's answer, headers included, whether the
// handler writes a body, only a status, or nothing.
func TestDeferredMiddleware_HoldsTheAnswer(t *testing.T) {
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
			}
			reads := e.st.getAPIKey.Load()
			other := e.openSecond()
			require.NoError(t, other.RevokeAPIKey(ctx, "alpha", k.ID, e.clock.Now()))
			res, body := deferredGet(t, srv, http.MethodGet, tok)
			require.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
			require.Equal(t, `Bearer error="invalid_token"`, res.Header.Get("WWW-Authenticate"))
			require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
			require.Empty(t, res.Header.Get("X-Secret"))
			require.NotContains(t, body, "secret")
			require.Contains(t, body, `"code":"invalid_token"`)
			require.Greater(t, e.st.getAPIKey.Load(), reads, "the records were not read")
			require.Equal(t, "revoked API key", e.lastReason())
		})
	}
}

// TestDeferredMiddleware_FirstUseChecksAtOnce: a token the verifier has not
// seen is checked before the handler runs, as Middleware checks it.
func TestDeferredMiddleware_FirstUseChecksAtOnce(t *testing.T) {
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
