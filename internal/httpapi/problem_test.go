package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newTestLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, nil))
}

func TestHandle_WritesProblem(t *testing.T) {
	h := Handle(nil, func(w http.ResponseWriter, r *http.Request) error {
		return New(CodeRateLimited, "Too many attempts.").WithHeader("Retry-After", "30")
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, 429, rec.Code)
	assert.Equal(t, ProblemContentType, rec.Header().Get("Content-Type"))
	assert.Equal(t, "30", rec.Header().Get("Retry-After"))
	var p map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
	assert.Equal(t, map[string]any{
		"type": "https://latchkey.dev/problems/rate_limited", "title": "Too Many Requests",
		"status": float64(429), "detail": "Too many attempts.", "code": "rate_limited",
	}, p)
}

func TestHandle_InternalErrorHidesCause(t *testing.T) {
	var logged strings.Builder
	logger := newTestLogger(&logged)
	h := Handle(logger, func(w http.ResponseWriter, r *http.Request) error {
		return errors.New("SELECT secret FROM users: disk I/O error")
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/contacts", nil))
	assert.Equal(t, 500, rec.Code)
	assert.NotContains(t, rec.Body.String(), "SELECT")
	assert.Contains(t, rec.Body.String(), `"code":"internal"`)
	assert.Contains(t, logged.String(), "disk I/O error", "the cause is logged for operators")
}

func TestNew_EveryCodeHasItsStatus(t *testing.T) {
	want := map[string]int{
		CodeInvalidRequest: 400, CodeInvalidParameter: 400, CodeInvalidCursor: 400,
		CodeInvalidCredentials: 401, CodeInvalidRefreshToken: 401, CodeInvalidToken: 401,
		CodeForbidden: 403, CodeNotFound: 404, CodeMethodNotAllowed: 405,
		CodeRequestTooLarge: 413, CodeUnsupportedMediaType: 415, CodeRateLimited: 429, CodeInternal: 500,
	}
	for code, status := range want {
		assert.Equal(t, status, New(code, "d").Status, code)
	}
	assert.Equal(t, CodeInternal, New("made_up", "d").Code)
}

func TestMethodNotAllowed(t *testing.T) {
	rec := httptest.NewRecorder()
	MethodNotAllowed(rec, "GET, HEAD")
	assert.Equal(t, 405, rec.Code)
	assert.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
	assert.Contains(t, rec.Body.String(), `"code":"method_not_allowed"`)
}
