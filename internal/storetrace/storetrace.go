// Package storetrace wraps a store.Store so that each of its calls made
// within a traced request is a span of that trace: "store.GetUser",
// "store.ListContacts", with the project and, when the call returns an
// error, its class (not_found, conflict, unavailable, ...). Nothing else of the call is recorded: no email, no
// token, no cursor, no error text.
//
// A call is traced only when its context holds a recording span (the
// request's), so a store used outside traced requests (pruning, the
// command line), or with tracing off, pays one context lookup per call.
package storetrace

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// Store is a store.Store whose calls are traced. Create it with Wrap.
type Store struct {
	st     store.Store
	tracer trace.Tracer
}

var _ store.Store = (*Store)(nil)

// clientSpan are the options of every store span, built once.
var clientSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}

// Wrap returns st with its calls traced by tracer. The result implements
// store.ChangeVersioner, store.RevocationWatcher and
// store.CheckedContactLister when st does, so that what callers discover by
// type assertion is unchanged. ChangeVersion and WatchRevocations are not
// traced (they are signals, not reads); ListContactsChecked is.
func Wrap(st store.Store, tracer trace.Tracer) store.Store {
	s := &Store{st: st, tracer: tracer}
	cv, isCV := st.(store.ChangeVersioner)
	w, isW := st.(store.RevocationWatcher)
	var cl store.CheckedContactLister
	_, isCL := st.(store.CheckedContactLister)
	if isCL {
		cl = checkedLister{s}
	}
	type (
		CV = store.ChangeVersioner
		W  = store.RevocationWatcher
		CL = store.CheckedContactLister
	)
	switch {
	case isCV && isW && isCL:
		return struct {
			*Store
			CV
			W
			CL
		}{s, cv, w, cl}
	case isCV && isW:
		return struct {
			*Store
			CV
			W
		}{s, cv, w}
	case isCV && isCL:
		return struct {
			*Store
			CV
			CL
		}{s, cv, cl}
	case isW && isCL:
		return struct {
			*Store
			W
			CL
		}{s, w, cl}
	case isCV:
		return struct {
			*Store
			CV
		}{s, cv}
	case isW:
		return struct {
			*Store
			W
		}{s, w}
	case isCL:
		return struct {
			*Store
			CL
		}{s, cl}
	}
	return s
}

// checkedLister is the traced ListContactsChecked of a store that has it.
type checkedLister struct{ s *Store }

func (c checkedLister) ListContactsChecked(ctx context.Context, projectID string, ids store.TokenRecordIDs, req paginate.Request) (store.TokenRecords, paginate.Page[store.Contact], error) {
	ctx, span := c.s.start(ctx, "store.ListContactsChecked", projectID)
	recs, page, err := c.s.st.(store.CheckedContactLister).ListContactsChecked(ctx, projectID, ids, req)
	end(span, err)
	return recs, page, err
}

// Unwrap returns the store s wraps.
func (s *Store) Unwrap() store.Store { return s.st }

// Close closes the wrapped store.
func (s *Store) Close() error { return s.st.Close() }

// noSpan is the span of an untraced call.
var noSpan = trace.SpanFromContext(context.Background())

// start starts the span of a call named name for project (none when "")
// when ctx holds a recording span, and returns ctx with it.
func (s *Store) start(ctx context.Context, name, project string) (context.Context, trace.Span) {
	if !trace.SpanFromContext(ctx).IsRecording() {
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

// end ends span, recording the class of err if any: one of errorClasses,
// or unavailable (store.ErrUnavailable) or error, which also mark the span
// failed. The error's text is never recorded.
func end(span trace.Span, err error) {
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
