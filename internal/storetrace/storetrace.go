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
// store.ChangeVersioner, store.VersionedContactLister,
// store.RevocationWatcher and store.CheckedContactLister when st does, so
// that what callers discover by type assertion is unchanged. ChangeVersion
// and WatchRevocations are not traced (they are signals, not reads);
// ListContactsVersioned and ListContactsChecked are.
func Wrap(st store.Store, tracer trace.Tracer) store.Store {
	s := &Store{st: st, tracer: tracer}
	cv, isCV := st.(store.ChangeVersioner)
	w, isW := st.(store.RevocationWatcher)
	var vl store.VersionedContactLister
	_, isVL := st.(store.VersionedContactLister)
	if isVL {
		vl = versionedLister{cv, s}
	}
	var cl store.CheckedContactLister
	_, isCL := st.(store.CheckedContactLister)
	if isCL {
		cl = checkedLister{s}
	}
	type (
		CV = store.ChangeVersioner
		VL = store.VersionedContactLister // a ChangeVersioner too
		W  = store.RevocationWatcher
		CL = store.CheckedContactLister
	)
	switch {
	case isVL && isW && isCL:
		return struct {
			*Store
			VL
			W
			CL
		}{s, vl, w, cl}
	case isVL && isW:
		return struct {
			*Store
			VL
			W
		}{s, vl, w}
	case isVL && isCL:
		return struct {
			*Store
			VL
			CL
		}{s, vl, cl}
	case isVL:
		return struct {
			*Store
			VL
		}{s, vl}
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

// versionedLister is the traced ListContactsVersioned of a store that has
// it, with the store's own (untraced) ChangeVersion.
type versionedLister struct {
	store.ChangeVersioner
	s *Store
}

func (c versionedLister) ListContactsVersioned(ctx context.Context, projectID string, req paginate.Request) (uint64, paginate.Page[store.Contact], error) {
	ctx, span := c.s.start(ctx, "store.ListContactsVersioned", projectID)
	ver, page, err := c.s.st.(store.VersionedContactLister).ListContactsVersioned(ctx, projectID, req)
	end(span, err)
	return ver, page, err
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
