// Package storetrace wraps a store.Store so that each of its calls made
// within a traced request is a span of that trace: "store.GetUser",
// "store.ListContacts", with the project and, when the call returns an
// error, its class (not_found, conflict, unavailable, ...). Nothing else of the call is recorded: no email, no
// token, no cursor, no error text.
//
// A call is traced only when its context holds a recording span (the
// request's), so a store used outside traced requests (pruning, the
// command line), or with tracing off, pays one context lookup per call.
//
// The wrapper adds no optional capability of its own: callers find the
// wrapped store's with store.As, through Unwrap. A capability that is a
// read is traced by its caller, with Store.Start and End (see Wrap).
package storetrace

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/latchkey-dev/latchkey/store"
)

// Store is a store.Store whose calls are traced. Create it with Wrap.
type Store struct {
	st     store.Store
	tracer trace.Tracer
}

var (
	_ store.Store   = (*Store)(nil)
	_ store.Wrapper = (*Store)(nil)
)

// clientSpan are the options of every store span, built once.
var clientSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}

// Wrap returns st with its calls traced by tracer. The result implements
// store.Store and Unwrap, and no optional capability: callers find those
// with store.As, which walks through Unwrap to st. A capability call made
// on what store.As finds is not traced by the wrapper; a caller whose
// capability call is a read (the checked list of contacts) opens its span
// with [Store.Start] and [End], so it is traced like any read. The
// signals (ChangeVersion, WatchRevocations) are not traced.
func Wrap(st store.Store, tracer trace.Tracer) *Store {
	return &Store{st: st, tracer: tracer}
}

// Unwrap returns the store s wraps.
func (s *Store) Unwrap() store.Store { return s.st }

// Close closes the wrapped store.
func (s *Store) Close() error { return s.st.Close() }

// noSpan is the span of an untraced call.
var noSpan = trace.SpanFromContext(context.Background())

// Start starts the span of a store call named name ("store.ListContacts")
// for project (none when "") when ctx holds a recording span, and returns
// ctx with it; else ctx and a span that records nothing. End the span with
// [End]. A nil *Store starts no span: a caller that found no Store in its
// store's chain (store.As) calls it all the same.
func (s *Store) Start(ctx context.Context, name, project string) (context.Context, trace.Span) {
	if s == nil || !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, noSpan
	}
	ctx, span := s.tracer.Start(ctx, name, clientSpan...)
	if project != "" {
		span.SetAttributes(attribute.String("latchkey.project", project))
	}
	return ctx, span
}

// errorClasses are the sentinels a call may answer with as an outcome
// rather than a failure, and the class each is recorded as.
var errorClasses = []struct {
	err   error
	class string
}{
	{store.ErrNotFound, "not_found"},
	{store.ErrConflict, "conflict"},
	{store.ErrInvalid, "invalid"},
	{store.ErrExpired, "expired"},
	{store.ErrRevoked, "revoked"},
	{store.ErrReplayed, "replayed"},
	{store.ErrDisabled, "disabled"},
}

// End ends span, a span of [Store.Start], recording the class of err if any: one of errorClasses,
// or unavailable (store.ErrUnavailable) or error, which also mark the span
// failed. The error's text is never recorded.
func End(span trace.Span, err error) {
	if !span.IsRecording() {
		return
	}
	if err != nil {
		class := classOf(err)
		span.SetAttributes(attribute.String("latchkey.store.error", class))
		if class == "error" || class == "unavailable" {
			span.SetStatus(codes.Error, class)
		}
	}
	span.End()
}

// classOf is the class of a store error.
func classOf(err error) string {
	if errors.Is(err, store.ErrUnavailable) {
		return "unavailable"
	}
	for _, c := range errorClasses {
		if errors.Is(err, c.err) {
			return c.class
		}
	}
	return "error"
}
