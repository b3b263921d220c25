package latchkey

import (
	"context"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Attributes of a request's span (OpenTelemetry's HTTP semantic
// conventions, and the project).
const (
	attrMethod  = "http.request.method"
	attrRoute   = "http.route"
	attrStatus  = "http.response.status_code"
	attrProject = "latchkey.project"
)

// serverSpan are the options of every request's span, built once.
var serverSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}

// startSpan starts the span of request r, a child of the trace context the
// propagator reads from r's headers, and returns r's context with it.
func (l *Latchkey) startSpan(r *http.Request) (context.Context, trace.Span) {
	ctx := l.propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := l.tracer.Start(ctx, r.Method, serverSpan...)
	if span.IsRecording() {
		span.SetAttributes(attribute.String(attrMethod, r.Method))
	}
	return ctx, span
}

// nameSpan names a request's span by its method and the route of the
// routing table that serves it, and records the route.
func nameSpan(span trace.Span, method, pattern string) {
	route := pattern
	if _, p, ok := strings.Cut(pattern, " "); ok {
		route = p
	}
	span.SetName(method + " " + route)
	span.SetAttributes(attribute.String(attrRoute, route))
}

// statusWriter records the status of a response for its span.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer (the
// revocation feed's long polls extend their write deadline through it).
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// report records the response's status on span, and marks the span failed
// for a 5xx answer.
func (s *statusWriter) report(span trace.Span) {
	status := s.status
	if status == 0 {
		status = http.StatusOK
	}
	span.SetAttributes(attribute.Int(attrStatus, status))
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
}
