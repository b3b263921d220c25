package problem

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

	"github.com/latchkey-dev/latchkey/requestid"
	"github.com/latchkey-dev/latchkey/store"
)

func newTestLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, nil))
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
	MethodNotAllowed(rec, httptest.NewRequest(http.MethodGet, "/", nil), "GET, HEAD")
	assert.Equal(t, 405, rec.Code)
	assert.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
	assert.Contains(t, rec.Body.String(), `"code":"method_not_allowed"`)
}

// TestWrite_Unavailable covers every way a store outage reaches the
// writer: 503 unavailable with Retry-After, the cause logged at Warn level
// and never shown.
func TestWrite_Unavailable(t *testing.T) {
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
			Write(rec, httptest.NewRequest(http.MethodGet, "/v1/contacts", nil), newTestLogger(&logged), err)

			assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
			assert.Equal(t, ContentType, rec.Header().Get("Content-Type"))
			assert.Equal(t, strconv.Itoa(RetryAfterUnavailable), rec.Header().Get("Retry-After"))
			var p Body
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
			assert.Equal(t, Body{
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

func TestWrite_UnavailableCodeGetsRetryAfter(t *testing.T) {
	rec := httptest.NewRecorder()
	Write(rec, httptest.NewRequest(http.MethodGet, "/", nil), nil, New(CodeUnavailable, "Down."))
	assert.Equal(t, 503, rec.Code)
	assert.Equal(t, strconv.Itoa(RetryAfterUnavailable), rec.Header().Get("Retry-After"))

	rec = httptest.NewRecorder()
	e := New(CodeUnavailable, "Down.").WithHeader("Retry-After", "30")
	Write(rec, httptest.NewRequest(http.MethodGet, "/", nil), nil, e)
	assert.Equal(t, []string{"30"}, rec.Header().Values("Retry-After"), "a handler's own Retry-After is kept")
	assert.Equal(t, []string{"30"}, e.Header.Values("Retry-After"), "the *Error is not changed")
}

func TestWrite_NotUnavailable(t *testing.T) {
	for name, err := range map[string]error{
		"not found":     fmt.Errorf("x: %w", store.ErrNotFound),
		"conflict":      store.ErrConflict,
		"deadline":      context.DeadlineExceeded,
		"other failure": errors.New("disk I/O error"),
	} {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Write(rec, httptest.NewRequest(http.MethodGet, "/", nil), nil, err)
			assert.Equal(t, 500, rec.Code)
			assert.Empty(t, rec.Header().Get("Retry-After"))
		})
	}
}

// TestWrite_CancelledRequestIsStillAnswered: a request whose context is
// cancelled (net/http does so when it gives up reading the body, with the
// client still waiting) gets its error written, never nothing, which
// net/http would send as an empty 200.
func TestWrite_CancelledRequestIsStillAnswered(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest(http.MethodPost, "/v1/identity/login", nil).WithContext(ctx)
	rec := httptest.NewRecorder()
	Write(rec, req, nil, New(CodeInvalidRequest, "The request body could not be read."))
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), `"code":"invalid_request"`)

	rec = httptest.NewRecorder()
	Write(rec, req, nil, store.ErrUnavailable)
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
}

// TestWrite_ClientGoneIsNotAnError: a request abandoned because its client
// disconnected (its context cancelled, the cause the cancellation) is
// logged at Debug level as a disconnect, never as an internal error, while
// a cancellation of some other context, with the request's own live, still
// is one.
func TestWrite_ClientGoneIsNotAnError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	gone := httptest.NewRequest(http.MethodGet, "/v1/contacts", nil).WithContext(ctx)
	for name, err := range map[string]error{
		"bare":          context.Canceled,
		"wrapped":       fmt.Errorf("listing contacts: %w", context.Canceled),
		"as an *Error":  New(CodeInternal, "x").WithCause(context.Canceled),
		"store gave up": fmt.Errorf("%w: %w", store.ErrUnavailable, context.Canceled),
	} {
		t.Run(name, func(t *testing.T) {
			var logged strings.Builder
			logger := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
			Write(httptest.NewRecorder(), gone, logger, err)
			assert.Contains(t, logged.String(), "level=DEBUG")
			assert.Contains(t, logged.String(), "client disconnected")
			assert.NotContains(t, logged.String(), "level=ERROR")
			assert.NotContains(t, logged.String(), "level=WARN")
		})
	}

	var logged strings.Builder
	Write(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil), newTestLogger(&logged), context.Canceled)
	assert.Contains(t, logged.String(), "level=ERROR", "a live request's cancelled call is the server's fault")
}

// TestBodiesEndWithNewline checks that every problem body is one JSON value
// followed by one newline.
func TestBodiesEndWithNewline(t *testing.T) {
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	writers := map[string]func(w http.ResponseWriter){
		"Write *Error":        func(w http.ResponseWriter) { Write(w, req, nil, New(CodeForbidden, "No.")) },
		"WriteError internal": func(w http.ResponseWriter) { Write(w, req, nil, errors.New("boom")) },
		"Write unavailable":   func(w http.ResponseWriter) { Write(w, req, nil, store.ErrUnavailable) },
		"NotFound":            func(w http.ResponseWriter) { NotFound().ServeHTTP(w, req) },
		"MethodNotAllowed":    func(w http.ResponseWriter) { MethodNotAllowed(w, req, "GET") },
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

func TestWrite_RequestID(t *testing.T) {
	var logged strings.Builder
	req := httptest.NewRequest(http.MethodGet, "/v1/contacts", nil)
	req = req.WithContext(requestid.NewContext(req.Context(), "req-42"))
	for name, err := range map[string]error{
		"an *Error":   New(CodeForbidden, "No."),
		"internal":    errors.New("boom"),
		"unavailable": store.ErrUnavailable,
	} {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Write(rec, req, newTestLogger(&logged), err)
			var p Body
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
			assert.Equal(t, "req-42", p.RequestID)
		})
	}
	assert.Contains(t, logged.String(), "request_id=req-42", "the log lines of 5xx answers carry the id")

	rec := httptest.NewRecorder()
	NotFound().ServeHTTP(rec, req)
	assert.Contains(t, rec.Body.String(), `"request_id":"req-42"`)

	rec = httptest.NewRecorder()
	Write(rec, httptest.NewRequest(http.MethodGet, "/", nil), nil, New(CodeForbidden, "No."))
	assert.NotContains(t, rec.Body.String(), "request_id", "no id in the context: none in the body")
}

func TestUnauthorized(t *testing.T) {
	for presented, challenge := range map[bool]string{false: "Bearer", true: `Bearer error="invalid_token"`} {
		e := Unauthorized(presented)
		assert.Equal(t, 401, e.Status)
		assert.Equal(t, CodeInvalidToken, e.Code)
		assert.Equal(t, []string{challenge}, e.Header.Values("WWW-Authenticate"))
	}
}

// TestWrite_StoreTimedOut: once a deadline on the request's store work has
// passed (its context's cause matches store.ErrUnavailable), whatever error
// the interrupted call returned is answered 503 unavailable with
// Retry-After; an answer about the request itself (a 4xx) is kept.
func TestWrite_StoreTimedOut(t *testing.T) {
	cause := fmt.Errorf("the request's store work took too long: %w", store.ErrUnavailable)
	ctx, cancel := context.WithTimeoutCause(context.Background(), 0, cause)
	defer cancel()
	<-ctx.Done()
	req := httptest.NewRequest(http.MethodGet, "/v1/contacts", nil).WithContext(ctx)
	for name, err := range map[string]error{
		"deadline":     fmt.Errorf("listing: %w", context.DeadlineExceeded),
		"driver's own": errors.New("sqlite: interrupted"),
		"a 500 *Error": New(CodeInternal, "x"),
		"already 503":  store.ErrUnavailable,
	} {
		rec := httptest.NewRecorder()
		Write(rec, req, nil, err)
		assert.Equal(t, http.StatusServiceUnavailable, rec.Code, name)
		assert.NotEmpty(t, rec.Header().Get("Retry-After"), name)
	}
	rec := httptest.NewRecorder()
	Write(rec, req, nil, New(CodeInvalidCursor, "bad cursor"))
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.True(t, StoreTimedOut(ctx))
	assert.False(t, StoreTimedOut(context.Background()))
}
