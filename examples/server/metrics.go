package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// metricsAddrEnv is the environment variable -metrics-addr defaults to.
const metricsAddrEnv = "LATCHKEY_METRICS_ADDR"

// registerMetricsAddr registers serve's -metrics-addr flag.
func registerMetricsAddr(fs *flag.FlagSet, env *env) *string {
	return fs.String("metrics-addr", env.getenv(metricsAddrEnv),
		"serve Prometheus metrics at http://ADDR/metrics, on a listener of their own (default: "+metricsAddrEnv+"; empty: no metrics)")
}

// metricsServer serves Latchkey's metrics (and the Go runtime's) in the
// Prometheus text format, on a listener apart from the API's, so that
// they can be kept off the public network.
type metricsServer struct {
	provider *sdkmetric.MeterProvider
	ln       net.Listener
	srv      *http.Server
}

// startMetrics listens on addr and serves GET /metrics there. Its
// MeterProvider is to be given to Latchkey.
func startMetrics(addr string, logger *slog.Logger) (*metricsServer, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}))
	m := &metricsServer{
		provider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter)),
		ln:       ln,
		srv:      newHTTPServer(mux, logger),
	}
	go func() {
		if err := m.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics: serving", "err", err)
		}
	}()
	return m, nil
}

// MeterProvider returns the provider whose instruments the listener
// serves.
func (m *metricsServer) MeterProvider() metric.MeterProvider { return m.provider }

// Addr returns the address the listener is bound to.
func (m *metricsServer) Addr() net.Addr { return m.ln.Addr() }

// Shutdown stops serving and the provider.
func (m *metricsServer) Shutdown(ctx context.Context) error {
	return errors.Join(m.srv.Shutdown(ctx), m.provider.Shutdown(ctx))
}
