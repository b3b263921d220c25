package latchkey_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/internal/testutil"
)

// TestSecurityLogLines_CarryRequestID: the log lines of a failed sign-in,
// a throttled one and a refresh-token replay carry the request's id, as
// its answer does, and a refused bearer token's line carries the client
// address.
func TestSecurityLogLines_CarryRequestID(t *testing.T) {
	logs := &testutil.Buffer{}
	st := openStore(t)
	lk, err := latchkey.New(st, testMasterKey, &latchkey.Options{
		Logger:   slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
		Limiter:  identity.NewMemoryLimiter(&identity.LimiterOptions{AccountLimit: 1}),
		Identity: &identity.Options{NoReuseWindow: true},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = lk.Close() })
	_, err = lk.Users().Create(context.Background(), "default", "alice@example.com", "correct horse", nil)
	require.NoError(t, err)
	_, err = lk.Users().Create(context.Background(), "default", "bob@example.com", "battery staple", nil)
	require.NoError(t, err)
	h := lk.Handler()
	send := func(id, method, path, token, body string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("X-Request-Id", id)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	line := func(msg string) string {
		t.Helper()
		for l := range strings.Lines(logs.String()) {
			if strings.Contains(l, `msg="`+msg) {
				return l
			}
		}
		t.Fatalf("no log line %q in:\n%s", msg, logs.String())
		return ""
	}

	require.Equal(t, http.StatusUnauthorized, send("req-failed", "POST", "/v1/identity/login", "", `{"email":"alice@example.com","password":"wrong"}`).Code)
	assert.Contains(t, line("sign-in failed"), "request_id=req-failed")
	require.Equal(t, http.StatusTooManyRequests, send("req-throttled", "POST", "/v1/identity/login", "", `{"email":"alice@example.com","password":"wrong"}`).Code)
	assert.Contains(t, line("sign-in throttled"), "request_id=req-throttled")

	res := send("req-login", "POST", "/v1/identity/login", "", `{"email":"bob@example.com","password":"battery staple"}`)
	require.Equal(t, http.StatusOK, res.Code, res.Body.String())
	var ts struct {
		RefreshToken string `json:"refresh_token"`
	}
	require.NoError(t, json.Unmarshal(res.Body.Bytes(), &ts))
	refresh := `{"refresh_token":"` + ts.RefreshToken + `"}`
	require.Equal(t, http.StatusOK, send("req-refresh", "POST", "/v1/identity/refresh", "", refresh).Code)
	require.Equal(t, http.StatusUnauthorized, send("req-replay", "POST", "/v1/identity/refresh", "", refresh).Code)
	assert.Contains(t, line("refresh token replayed"), "request_id=req-replay")

	require.Equal(t, http.StatusUnauthorized, send("req-bearer", "GET", "/v1/contacts", "not-a-token", "").Code)
	bearer := line("authentication failed")
	assert.Contains(t, bearer, "request_id=req-bearer")
	assert.Contains(t, bearer, "client=192.0.2.1", "httptest's client address")

	for _, secret := range []string{"correct horse", "battery staple", ts.RefreshToken, "not-a-token"} {
		assert.NotContains(t, logs.String(), secret)
	}
}
