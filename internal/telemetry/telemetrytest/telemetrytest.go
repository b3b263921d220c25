// Package telemetrytest reads, in tests, what Latchkey's packages report
// through OpenTelemetry: a MeterProvider of the SDK with a manual reader,
// whose counters and histograms a test reads back by name and attributes.
// Only tests import it, so the library packages depend on no SDK.
package telemetrytest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Meters is a MeterProvider whose data a test reads.
type Meters struct {
	*sdkmetric.MeterProvider
	reader *sdkmetric.ManualReader
}

// NewMeters returns a MeterProvider for t, shut down at its end.
func NewMeters(t testing.TB) *Meters {
	r := sdkmetric.NewManualReader()
	m := &Meters{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(r)), reader: r}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	return m
}

// Values returns the data of the instrument name: for a counter, its value
// by attributes; for a histogram, its count of recordings by attributes.
// Attributes read as "k=v,k=v" sorted by key, "" for none. An instrument
// that recorded nothing has no entry.
func (m *Meters) Values(t testing.TB, name string) map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := m.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("telemetrytest: collect: %v", err)
	}
	out := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			if mt.Name != name {
				continue
			}
			switch d := mt.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[key(p.Attributes)] += float64(p.Value)
				}
			case metricdata.Sum[float64]:
				for _, p := range d.DataPoints {
					out[key(p.Attributes)] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out[key(p.Attributes)] += float64(p.Count)
				}
			default:
				t.Fatalf("telemetrytest: %s has data of type %T", name, mt.Data)
			}
		}
	}
	return out
}

// key is the "k=v,k=v" form of a set of attributes.
func key(s attribute.Set) string {
	var kv []string
	for _, a := range s.ToSlice() {
		kv = append(kv, string(a.Key)+"="+a.Value.String())
	}
	slices.Sort(kv)
	return strings.Join(kv, ",")
}
