package latchkey

import (
	"context"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
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

// reportStatus records the status of the response rec recorded on span,
// and marks the span failed for a 5xx answer.
func reportStatus(span trace.Span, rec *httpapi.Recorder) {
	status := rec.Status()
	span.SetAttributes(attribute.Int(attrStatus, status))
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
}
