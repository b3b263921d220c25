// Package telemetry holds what Latchkey's packages share to report through
// the OpenTelemetry API: the instrumentation scope, the fallback to the
// global providers, and the instruments that more than one package adds
// to, declared once so that their name, unit and description agree.
//
// Attribute sets are built once per value, so adding to an instrument
// allocates nothing. Nothing here depends on an SDK: with the global
// providers left unset every call is a no-op.
package telemetry

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every meter and tracer.
const ScopeName = "github.com/latchkey-dev/latchkey"

// Meter returns the meter of mp, or of the global provider when mp is nil.
func Meter(mp metric.MeterProvider) metric.Meter {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	return mp.Meter(ScopeName)
}

// Tracer returns the tracer of tp, or of the global provider when tp is
// nil.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(ScopeName)
}

// Propagator returns p, or the global propagator when p is nil.
func Propagator(p propagation.TextMapPropagator) propagation.TextMapPropagator {
	if p == nil {
		return otel.GetTextMapPropagator()
	}
	return p
}

// Counter is an Int64Counter whose every addition carries one attribute,
// key, with one of a fixed set of values. Its zero value adds nothing.
type Counter struct {
	c    metric.Int64Counter
	opts map[string][]metric.AddOption
}

// NewCounter returns the counter name of m, with the attribute key taking
// the given values (none: additions carry no attribute). A meter that
// refuses the instrument gives a counter that adds nothing.
func NewCounter(m metric.Meter, name, description, key string, values ...string) Counter {
	c, err := m.Int64Counter(name, metric.WithDescription(description), metric.WithUnit("{"+unitOf(name)+"}"))
	if err != nil {
		c = noop.Int64Counter{}
	}
	opts := map[string][]metric.AddOption{"": nil}
	for _, v := range values {
		opts[v] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String(key, v)))}
	}
	return Counter{c: c, opts: opts}
}

// Add adds one with the attribute value (one of the counter's values, or
// "" for none). An unknown value is counted without the attribute.
func (c Counter) Add(ctx context.Context, value string) {
	if c.c == nil {
		return
	}
	c.c.Add(ctx, 1, c.opts[value]...)
}

// unitOf is the UCUM annotation of a counter: its name's last word.
func unitOf(name string) string {
	return name[strings.LastIndexByte(name, '.')+1:]
}

// The revocations counter: every instance reports to the same stream.
const (
	RevocationsName        = "latchkey.revocations"
	RevocationsDescription = "Revocations made by this process, by kind: api_key, signing_key, session (logout or replay), user (disabled)."
)

// Kinds of revocation, the values of the revocations counter's kind.
const (
	KindAPIKey     = "api_key"
	KindSigningKey = "signing_key"
	KindSession    = "session"
	KindUser       = "user"
)

// NewRevocations returns the revocations counter of m.
func NewRevocations(m metric.Meter) Counter {
	return NewCounter(m, RevocationsName, RevocationsDescription, "kind", KindAPIKey, KindSigningKey, KindSession, KindUser)
}
