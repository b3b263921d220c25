package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/latchkey-dev/latchkey/store"
)

// ProblemContentType is the media type of every error response.
const ProblemContentType = "application/problem+json"

// RetryAfterUnavailable is the Retry-After, in seconds, of every 503
// unavailable answer: how long a client waits before it sends the same
// request again.
const RetryAfterUnavailable = 2

// Problem is the RFC 9457 body of every error response.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Code   string `json:"code"`
}

// problemType is the type URI of a code. The codes are documented in the
// OpenAPI document (openapi/openapi.json, schema ErrorCode) and the README;
// the URI is an identifier, not fetched.
func problemType(code string) string {
	return "https://latchkey.dev/problems/" + code
}

// WriteError writes err as problem+json, deciding the answer in this order:
//
//   - an error matching store.ErrUnavailable (errors.Is, so also an *Error
//     whose cause matches it) is answered 503 unavailable with a
//     Retry-After of RetryAfterUnavailable seconds; the error is logged at
//     Warn level on logger and never shown;
//   - an *Error (found with errors.As) is written as it says, and logged at
//     Error level when its status is 500 or above; a 503 unavailable
//     *Error without a Retry-After header gets that of
//     RetryAfterUnavailable;
//   - anything else is logged at Error level and answered with a generic
//     500 internal.
//
// Nothing is written once the request's context is cancelled, since no
// client is left to read it. A nil logger logs nothing.
func WriteError(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	var e *Error
	switch {
	case errors.Is(err, store.ErrUnavailable):
		if logger != nil {
			logger.WarnContext(r.Context(), "store unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		}
		e = New(CodeUnavailable, "The service is temporarily unavailable. Retry the request later.")
	case errors.As(err, &e):
		if e.Status >= 500 && logger != nil {
			logger.ErrorContext(r.Context(), "internal error", "method", r.Method, "path", r.URL.Path, "err", e)
		}
	default:
		if logger != nil {
			logger.ErrorContext(r.Context(), "internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		}
		e = New(CodeInternal, "The server could not complete the request.")
	}
	if e.Code == CodeUnavailable && e.Header.Get("Retry-After") == "" {
		withRetry := *e
		withRetry.Header = e.Header.Clone()
		e = withRetry.WithHeader("Retry-After", strconv.Itoa(RetryAfterUnavailable))
	}
	if errors.Is(r.Context().Err(), context.Canceled) {
		return
	}
	writeProblem(w, e)
}

// writeProblem writes e as problem+json, its body ending with a newline as
// every JSON body does.
func writeProblem(w http.ResponseWriter, e *Error) {
	h := w.Header()
	for k, vs := range e.Header {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	body, _ := json.Marshal(Problem{
		Type:   problemType(e.Code),
		Title:  Title(e.Status),
		Status: e.Status,
		Detail: e.Detail,
		Code:   e.Code,
	})
	body = append(body, '\n')
	h.Set("Content-Type", ProblemContentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}

// NotFound answers every request with 404 not_found.
func NotFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, New(CodeNotFound, "No resource at this path."))
	})
}

// MethodNotAllowed answers 405 method_not_allowed with the given Allow
// header value.
func MethodNotAllowed(w http.ResponseWriter, allow string) {
	writeProblem(w, New(CodeMethodNotAllowed, "This method is not allowed on this resource.").WithHeader("Allow", allow))
}
