package problem

import (
	"fmt"
	"net/http"
)

// Stable machine-readable error codes of the wire contract.
const (
	CodeInvalidRequest       = "invalid_request"
	CodeInvalidParameter     = "invalid_parameter"
	CodeInvalidCursor        = "invalid_cursor"
	CodeInvalidCredentials   = "invalid_credentials"
	CodeInvalidRefreshToken  = "invalid_refresh_token"
	CodeInvalidToken         = "invalid_token"
	CodeForbidden            = "forbidden"
	CodeNotFound             = "not_found"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodeRequestTooLarge      = "request_too_large"
	CodeUnsupportedMediaType = "unsupported_media_type"
	CodeRateLimited          = "rate_limited"
	CodeInternal             = "internal"
	CodeUnavailable          = "unavailable"
)

// statusOf maps each code to its HTTP status.
var statusOf = map[string]int{
	CodeInvalidRequest:       http.StatusBadRequest,
	CodeInvalidParameter:     http.StatusBadRequest,
	CodeInvalidCursor:        http.StatusBadRequest,
	CodeInvalidCredentials:   http.StatusUnauthorized,
	CodeInvalidRefreshToken:  http.StatusUnauthorized,
	CodeInvalidToken:         http.StatusUnauthorized,
	CodeForbidden:            http.StatusForbidden,
	CodeNotFound:             http.StatusNotFound,
	CodeMethodNotAllowed:     http.StatusMethodNotAllowed,
	CodeRequestTooLarge:      http.StatusRequestEntityTooLarge,
	CodeUnsupportedMediaType: http.StatusUnsupportedMediaType,
	CodeRateLimited:          http.StatusTooManyRequests,
	CodeInternal:             http.StatusInternalServerError,
	CodeUnavailable:          http.StatusServiceUnavailable,
}

// Error is an API error: what the client is told (Code, Detail and the
// headers) and, separately, what only the log sees (Cause).
type Error struct {
	// Status is the HTTP status, fixed by Code.
	Status int
	// Code is one of the Code constants.
	Code string
	// Detail is a client-safe sentence about this occurrence. It never
	// holds a secret, SQL or a stack trace.
	Detail string
	// Header holds extra response headers (Allow, Retry-After,
	// WWW-Authenticate).
	Header http.Header
	// Cause is the underlying error, logged and never sent.
	Cause error
}

// New returns an Error with the status of code and the given detail.
// An unknown code is treated as CodeInternal.
func New(code, detail string) *Error {
	st, ok := statusOf[code]
	if !ok {
		code, st = CodeInternal, http.StatusInternalServerError
	}
	return &Error{Status: st, Code: code, Detail: detail}
}

// Errorf is New with a formatted detail.
func Errorf(code, format string, args ...any) *Error {
	return New(code, fmt.Sprintf(format, args...))
}

// WithCause records the internal cause of e and returns e.
func (e *Error) WithCause(err error) *Error { e.Cause = err; return e }

// WithHeader adds a response header to e and returns e.
func (e *Error) WithHeader(key, value string) *Error {
	if e.Header == nil {
		e.Header = make(http.Header)
	}
	e.Header.Add(key, value)
	return e
}

// Error describes e for logs, including its cause.
func (e *Error) Error() string {
	if e.Cause != nil {
		return e.Code + ": " + e.Detail + ": " + e.Cause.Error()
	}
	return e.Code + ": " + e.Detail
}

// Unwrap returns the cause, so errors.Is and errors.As see through e.
func (e *Error) Unwrap() error { return e.Cause }

// Title returns the short, fixed summary of a code used as the problem's
// title: the HTTP status text.
func Title(status int) string { return http.StatusText(status) }
