package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
)

// ProblemContentType is the media type of every error response.
const ProblemContentType = "application/problem+json"

// Problem is the RFC 9457 body of every error response.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Code   string `json:"code"`
}

// problemType is the type URI of a code. The codes are documented in the
// README under that anchor; the URI is an identifier, not fetched.
func problemType(code string) string {
	return "https://latchkey.dev/problems/" + code
}

// WriteError writes err as problem+json. An *Error (found with errors.As) is
// written as it says; anything else is logged at Error level on logger and
// answered with a generic 500. Nothing is written once the request's
// context is done, since no client is left to read it.
func WriteError(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	var e *Error
	if !errors.As(err, &e) {
		if logger != nil {
			logger.ErrorContext(r.Context(), "internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		}
		e = New(CodeInternal, "The server could not complete the request.")
	} else if e.Status >= 500 && logger != nil {
		logger.ErrorContext(r.Context(), "internal error", "method", r.Method, "path", r.URL.Path, "err", e)
	}
	if errors.Is(r.Context().Err(), context.Canceled) {
		return
	}
	writeProblem(w, e)
}

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
