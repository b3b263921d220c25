package remote

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

func TestMiddleware(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	_, feedKey := h.apiKey("feed")
	revokedID, revoked := h.apiKey("revoked")
	userID := h.user("ann@example.com", "admin")
	login, _ := h.login("ann@example.com")
	var logs logBuffer
	v := h.verifier(feedKey, &Options{Logger: logs.logger()})
	require.NoError(t, h.lk.APIKeys().Revoke(context.Background(), store.DefaultProject, revokedID))
	refusedWithin(t, v, revoked, keys.ErrTokenRevoked, time.Second)

	var seen *keys.Claims
	handler := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := ClaimsFromContext(r.Context())
		require.True(t, ok)
		seen = c
		_, _ = w.Write([]byte(c.Subject))
	}))
	do := func(mod func(r *http.Request)) *httptest.ResponseRecorder {
		seen = nil
		req := httptest.NewRequest(http.MethodGet, "/whoami", nil)
		mod(req)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		return rec
	}
	bearer := func(value string) func(r *http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", value) }
	}

	for _, tc := range []struct {
		name, scheme string
	}{
		{"Bearer", "Bearer "},
		{"lower case scheme", "bearer "},
		{"upper case scheme", "BEARER "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(bearer(tc.scheme + login))
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			assert.Equal(t, userID, rec.Body.String())
			require.NotNil(t, seen)
			assert.Equal(t, []string{"admin"}, seen.Tags)
		})
	}

	for _, tc := range []struct {
		name      string
		mod       func(r *http.Request)
		challenge string
	}{
		{"no header", func(r *http.Request) {}, "Bearer"},
		{"another scheme", bearer("Basic YW5uOnB3"), "Bearer"},
		{"token in the query only", func(r *http.Request) { r.URL.RawQuery = "access_token=" + login }, "Bearer"},
		{"token in a form only", func(r *http.Request) {
			r.Method = http.MethodPost
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.Body = http.NoBody
			r.URL.RawQuery = ""
			r.Form = map[string][]string{"access_token": {login}}
		}, "Bearer"},
		{"empty token", bearer("Bearer "), `Bearer error="invalid_token"`},
		{"not a b64token", bearer("Bearer " + login + ",x"), `Bearer error="invalid_token"`},
		{"two headers", func(r *http.Request) {
			r.Header.Add("Authorization", "Bearer "+login)
			r.Header.Add("Authorization", "Bearer "+login)
		}, `Bearer error="invalid_token"`},
		{"garbage", bearer("Bearer abc.def.ghi"), `Bearer error="invalid_token"`},
		{"revoked", bearer("Bearer " + revoked), `Bearer error="invalid_token"`},
		{"too large", bearer("Bearer " + strings.Repeat("a", keys.MaxTokenBytes+1)), `Bearer error="invalid_token"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(tc.mod)
			require.Equal(t, http.StatusUnauthorized, rec.Code)
			assert.Nil(t, seen, "next was called")
			assert.Equal(t, tc.challenge, rec.Header().Get("WWW-Authenticate"))
			assert.Equal(t, "application/problem+json", rec.Header().Get("Content-Type"))
			var p struct {
				Code   string `json:"code"`
				Status int    `json:"status"`
			}
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
			assert.Equal(t, "invalid_token", p.Code)
			assert.Equal(t, http.StatusUnauthorized, p.Status)
		})
	}
	assert.Contains(t, logs.String(), "revoked API key")
	for _, secret := range []string{login, revoked, feedKey} {
		assert.NotContains(t, logs.String(), secret, "a token was logged")
	}

	_, ok := ClaimsFromContext(context.Background())
	assert.False(t, ok)
}
