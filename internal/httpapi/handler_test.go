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

	"github.com/latchkey-dev/latchkey/problem"
)

func newTestLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, nil))
}

func TestHandle_WritesProblem(t *testing.T) {
	h := Handle(nil, func(w http.ResponseWriter, r *http.Request) error {
		return problem.New(problem.CodeRateLimited, "Too many attempts.").WithHeader("Retry-After", "30")
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, 429, rec.Code)
	assert.Equal(t, problem.ContentType, rec.Header().Get("Content-Type"))
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

func TestWriteJSON_EndsWithNewline(t *testing.T) {
	rec := httptest.NewRecorder()
	require.NoError(t, WriteJSON(rec, 200, map[string]int{"a": 1}))
	assert.Equal(t, "{\"a\":1}\n", rec.Body.String())
	assert.Equal(t, "8", rec.Header().Get("Content-Length"))
}
