package problem

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/latchkey-dev/latchkey/requestid"
	"github.com/latchkey-dev/latchkey/store"
)

// ContentType is the media type of every error response.
const ContentType = "application/problem+json"

// RetryAfterUnavailable is the Retry-After, in seconds, of every 503
// unavailable answer: how long a client waits before it sends the same
// request again.
const RetryAfterUnavailable = 2

// Body is the RFC 9457 body of every error response.
type Body struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Code   string `json:"code"`
	// RequestID is the request's id (package requestid), omitted when the
	// request has none in its context.
	RequestID string `json:"request_id,omitempty"`
}

// TypeURI returns the type URI of a code: "https://latchkey.dev/problems/"
// followed by the code. The codes are documented in the OpenAPI document
// (schema ErrorCode); the URI is an identifier, not fetched.
func TypeURI(code string) string {
	return "https://latchkey.dev/problems/" + code
}

// Write writes err as problem+json, deciding the answer in this order:
//
//   - an error matching store.ErrUnavailable (errors.Is, so also an *Error
//     whose cause matches it), or any error but a 4xx *Error of a request
//     whose context ended with a cause matching store.ErrUnavailable (a
//     deadline on the request's store work, see StoreTimedOut), is
//     answered 503 unavailable with a Retry-After of RetryAfterUnavailable
//     seconds; the error is logged at Warn level on logger and never shown;
//   - an *Error (found with errors.As) is written as it says, and logged at
//     Error level when its status is 500 or above; a 503 unavailable
//     *Error without a Retry-After header gets that of
//     RetryAfterUnavailable;
//   - anything else is logged at Error level and answered with a generic
//     500 internal.
//
// A cause that is the request's own cancellation (ClientGone: the client
// disconnected) is no fault of the server: it is logged at Debug level as
// "client disconnected", never at Warn or Error level.
//
// The body carries the request id of r's context (requestid.FromContext) as
// request_id, and so do the log lines. The answer is written even once the
// request's context is done: a client whose body read timed out is still
// reading, and nothing written would reach it as an empty 200. A nil
// logger logs nothing.
func Write(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	var e *Error
	clientError := errors.As(err, &e) && e.Status < 500
	switch {
	case errors.Is(err, store.ErrUnavailable) && ClientGone(r.Context(), err):
		logFailure(r, logger, slog.LevelDebug, "client disconnected", err)
		e = New(CodeUnavailable, "The service is temporarily unavailable. Retry the request later.")
	case errors.Is(err, store.ErrUnavailable), !clientError && StoreTimedOut(r.Context()):
		logFailure(r, logger, slog.LevelWarn, "store unavailable", err)
		e = New(CodeUnavailable, "The service is temporarily unavailable. Retry the request later.")
	case e != nil:
		if e.Status >= 500 {
			logInternal(r, logger, e)
		}
	default:
		logInternal(r, logger, err)
		e = New(CodeInternal, "The server could not complete the request.")
	}
	if e.Code == CodeUnavailable && e.Header.Get("Retry-After") == "" {
		withRetry := *e
		withRetry.Header = e.Header.Clone()
		e = withRetry.WithHeader("Retry-After", strconv.Itoa(RetryAfterUnavailable))
	}
	// Written even when the request's context is done. net/http cancels
	// it both when the client has gone (the answer then goes nowhere) and
	// when it gives up reading the body (ReadTimeout): that client is
	// still there and reads whatever is sent, and a handler that writes
	// nothing is sent net/http's implicit 200 OK. A request the server
	// gave up on is never a 200: a body that could not be read is 400
	// invalid_request (DecodeJSON), a store that could not answer 503.
	write(w, r, e)
}

// StoreTimedOut reports whether ctx, a request's context, has ended with a
// cause matching store.ErrUnavailable: a deadline its server set on the
// request's store work (context.WithTimeoutCause) passed. Whatever failed
// then failed for want of a store answer in time: 503 unavailable, safe to
// retry.
func StoreTimedOut(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), store.ErrUnavailable)
}

// ClientGone reports whether err is the cancellation of ctx, a request's
// context: the client disconnected (net/http cancels the context of a
// request whose connection closed) and whatever the request was doing was
// abandoned for that reason, not for a fault of the server.
func ClientGone(ctx context.Context, err error) bool {
	return errors.Is(err, context.Canceled) && errors.Is(ctx.Err(), context.Canceled)
}

// logInternal logs the cause of a 500 answer at Error level, or at Debug
// level when the cause is the client's disconnection (ClientGone).
func logInternal(r *http.Request, logger *slog.Logger, err error) {
	if ClientGone(r.Context(), err) {
		logFailure(r, logger, slog.LevelDebug, "client disconnected", err)
		return
	}
	logFailure(r, logger, slog.LevelError, "internal error", err)
}

// logFailure logs the cause of a 5xx answer with the request's method, path
// and id.
func logFailure(r *http.Request, logger *slog.Logger, level slog.Level, msg string, err error) {
	if logger == nil {
		return
	}
	ctx := r.Context()
	attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path)}
	if id := requestid.FromContext(ctx); id != "" {
		attrs = append(attrs, slog.String("request_id", id))
	}
	logger.LogAttrs(ctx, level, msg, append(attrs, slog.Any("err", err))...)
}

// write writes e as problem+json, its body ending with a newline as every
// JSON body does.
func write(w http.ResponseWriter, r *http.Request, e *Error) {
	h := w.Header()
	for k, vs := range e.Header {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	body, _ := json.Marshal(Body{
		Type:      TypeURI(e.Code),
		Title:     Title(e.Status),
		Status:    e.Status,
		Detail:    e.Detail,
		Code:      e.Code,
		RequestID: requestid.FromContext(r.Context()),
	})
	body = append(body, '\n')
	h.Set("Content-Type", ContentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}

// NotFound answers every request with 404 not_found.
func NotFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		write(w, r, New(CodeNotFound, "No resource at this path."))
	})
}

// MethodNotAllowed answers r with 405 method_not_allowed and the given
// Allow header value.
func MethodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	write(w, r, New(CodeMethodNotAllowed, "This method is not allowed on this resource.").WithHeader("Allow", allow))
}

// Unauthorized returns the 401 invalid_token answer to a request that
// bears no acceptable bearer token, with the RFC 6750 challenge:
// "WWW-Authenticate: Bearer" when it presented none, and
// `Bearer error="invalid_token"` when the one it presented is malformed or
// refused. The detail never says which refusal it was.
func Unauthorized(presented bool) *Error {
	if presented {
		return New(CodeInvalidToken, "The bearer token is malformed, expired, revoked or not valid for this project.").
			WithHeader("WWW-Authenticate", `Bearer error="invalid_token"`)
	}
	return New(CodeInvalidToken, "This endpoint needs an Authorization: Bearer token.").
		WithHeader("WWW-Authenticate", "Bearer")
}
