package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
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
		CodeUnavailable: 503,
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

// TestWriteError_Unavailable covers every way a store outage reaches the
// writer: 503 unavailable with Retry-After, the cause logged at Warn level
// and never shown.
func TestWriteError_Unavailable(t *testing.T) {
	cause := fmt.Errorf("sqlite: list contacts: SQLITE_BUSY after 5s: %w", store.ErrUnavailable)
	for name, err := range map[string]error{
		"store error":            cause,
		"wrapped again":          fmt.Errorf("contacts: %w", cause),
		"an *Error with it":      New(CodeInternal, "x").WithCause(cause),
		"a 4xx *Error with it":   New(CodeInvalidCredentials, "x").WithCause(cause),
		"the sentinel by itself": store.ErrUnavailable,
	} {
		t.Run(name, func(t *testing.T) {
			var logged strings.Builder
			rec := httptest.NewRecorder()
			WriteError(rec, httptest.NewRequest(http.MethodGet, "/v1/contacts", nil), newTestLogger(&logged), err)

			assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
			assert.Equal(t, ProblemContentType, rec.Header().Get("Content-Type"))
			assert.Equal(t, strconv.Itoa(RetryAfterUnavailable), rec.Header().Get("Retry-After"))
			var p Problem
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
			assert.Equal(t, Problem{
				Type: "https://latchkey.dev/problems/unavailable", Title: "Service Unavailable",
				Status: 503, Detail: p.Detail, Code: CodeUnavailable,
			}, p)
			assert.NotEmpty(t, p.Detail)
			assert.NotContains(t, rec.Body.String(), "store:")
			assert.NotContains(t, rec.Body.String(), "SQLITE")

			assert.Contains(t, logged.String(), "level=WARN")
			assert.NotContains(t, logged.String(), "level=ERROR")
			assert.Contains(t, logged.String(), "store: unavailable", "the cause is logged for operators")
		})
	}
}

func TestWriteError_UnavailableCodeGetsRetryAfter(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteError(rec, httptest.NewRequest(http.MethodGet, "/", nil), nil, New(CodeUnavailable, "Down."))
	assert.Equal(t, 503, rec.Code)
	assert.Equal(t, strconv.Itoa(RetryAfterUnavailable), rec.Header().Get("Retry-After"))

	rec = httptest.NewRecorder()
	e := New(CodeUnavailable, "Down.").WithHeader("Retry-After", "30")
	WriteError(rec, httptest.NewRequest(http.MethodGet, "/", nil), nil, e)
	assert.Equal(t, []string{"30"}, rec.Header().Values("Retry-After"), "a handler's own Retry-After is kept")
	assert.Equal(t, []string{"30"}, e.Header.Values("Retry-After"), "the *Error is not changed")
}

func TestWriteError_NotUnavailable(t *testing.T) {
	for name, err := range map[string]error{
		"not found":     fmt.Errorf("x: %w", store.ErrNotFound),
		"conflict":      store.ErrConflict,
		"deadline":      context.DeadlineExceeded,
		"other failure": errors.New("disk I/O error"),
	} {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			WriteError(rec, httptest.NewRequest(http.MethodGet, "/", nil), nil, err)
			assert.Equal(t, 500, rec.Code)
			assert.Empty(t, rec.Header().Get("Retry-After"))
		})
	}
}

func TestWriteError_CancelledRequestGetsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	WriteError(rec, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx), nil, store.ErrUnavailable)
	assert.Empty(t, rec.Body.String())
}

// TestBodiesEndWithNewline checks that every problem body, like every
// WriteJSON body, is one JSON value followed by one newline.
func TestBodiesEndWithNewline(t *testing.T) {
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	writers := map[string]func(w http.ResponseWriter){
		"WriteError *Error":      func(w http.ResponseWriter) { WriteError(w, req, nil, New(CodeForbidden, "No.")) },
		"WriteError internal":    func(w http.ResponseWriter) { WriteError(w, req, nil, errors.New("boom")) },
		"WriteError unavailable": func(w http.ResponseWriter) { WriteError(w, req, nil, store.ErrUnavailable) },
		"NotFound":               func(w http.ResponseWriter) { NotFound().ServeHTTP(w, req) },
		"MethodNotAllowed":       func(w http.ResponseWriter) { MethodNotAllowed(w, "GET") },
		"WriteJSON":              func(w http.ResponseWriter) { _ = WriteJSON(w, 200, map[string]int{"a": 1}) },
	}
	for name, write := range writers {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			write(rec)
			body := rec.Body.String()
			require.True(t, strings.HasSuffix(body, "}\n"), "body %q", body)
			assert.True(t, json.Valid([]byte(body)))
			assert.Equal(t, strconv.Itoa(len(body)), rec.Header().Get("Content-Length"))
			assert.Equal(t, 1, strings.Count(body, "\n"))
		})
	}
}
