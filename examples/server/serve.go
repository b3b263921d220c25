package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"time"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/requestid"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/tenant"
)

// HTTP server limits. Bodies are small (the API reads at most 64 KiB), so
// slow clients are cut off early.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 15 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 64 << 10
)

// newHTTPServer returns a server of h with the limits above, logging its
// own errors (bad requests, TLS handshakes) to logger at Warn.
func newHTTPServer(h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// cmdServe serves every project of the store until ctx ends (SIGINT or
// SIGTERM), then finishes in-flight requests and closes the store.
func cmdServe(ctx context.Context, env *env, args []string) error {
	fs := newFlags(env, "serve")
	var sf storeFlags
	sf.register(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	publicURL := registerPublicURL(fs, env)
	metricsAddr := registerMetricsAddr(fs, env)
	cors := registerCORSOrigins(fs, env)
	demo := fs.Bool("demo", false, "seed demo data once (an admin user and 1,000 contacts in project default) and print curl lines to try")
	addressLimit := fs.Int("login-address-limit", 0, "failed sign-ins per client address and project in 15 minutes before 429 (0: the default, 50); raise it only to benchmark a login flood")
	accessLogRate := fs.Int("access-log-rate", defaultAccessLogRate, "at most this many access log lines a second; the requests left out are counted in the next line's unlogged (server errors are always logged; 0: a line for every request)")
	cpuProfile := fs.String("cpu-profile", "", "write a CPU profile of the whole run to this file (for go tool pprof); off unless given")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := sf.check(fs); err != nil {
		return err
	}
	if *accessLogRate < 0 {
		return usagef(fs.Name(), "-access-log-rate must not be negative")
	}
	if *addressLimit < 0 {
		return usagef(fs.Name(), "-login-address-limit must not be negative")
	}
	corsOrigins, err := cors.list()
	if err != nil {
		return err
	}
	// Logs and the demo's banner share one buffered sink, flushed every
	// 100 ms and on the way out, so they stay in order.
	sink := newLogSink(env.stderr)
	defer sink.Close()
	buffered := *env
	buffered.stderr = sink
	env = &buffered
	logger := slog.New(slog.NewJSONHandler(sink, nil))
	hashing := tuneGC(env, hashingGrace)
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	baseURL := "http://" + displayAddr(ln.Addr())
	public := *publicURL
	if public == "" {
		public = baseURL
	}
	var tune func(store.Store, *latchkey.Options)
	if *addressLimit > 0 {
		tune = func(st store.Store, o *latchkey.Options) {
			o.Limiter = identity.NewStoreLimiter(st, &identity.LimiterOptions{AddressLimit: *addressLimit})
		}
	}
	opts := latchkey.Options{
		Resolver:    tenant.FromRequest,
		Issuer:      issuerFor(public),
		CORSOrigins: corsOrigins,
		Hasher:      hashing,
	}
	if *metricsAddr != "" {
		metrics, err := startMetrics(*metricsAddr, logger)
		if err != nil {
			return err
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
			defer cancel()
			_ = metrics.Shutdown(sctx)
		}()
		opts.MeterProvider = metrics.MeterProvider()
		if err := env.out.print(map[string]any{"event": "metrics", "addr": metrics.Addr().String(), "url": "http://" + displayAddr(metrics.Addr()) + "/metrics"}); err != nil {
			return err
		}
	}
	inst, err := sf.open(ctx, env, logger, opts, tune)
	if err != nil {
		return err
	}
	defer inst.Close()
	// A store that takes no writes yet (a standby) gets the URL once it
	// does; the server starts anyway and answers 503 meanwhile.
	stopRecording, err := recordPublicURLWhenWritable(ctx, inst.st, public, logger)
	if err != nil {
		return err
	}
	defer stopRecording()
	if *demo {
		if err := seedDemo(ctx, env, inst, &sf, baseURL); err != nil {
			return err
		}
	}

	access := &accessLimit{rate: int64(*accessLogRate)}
	srv := newHTTPServer(newRootHandler(inst, logger, access), logger)
	// Long polls of the revocation feed answer at once when shutting down.
	srv.RegisterOnShutdown(func() { _ = inst.lk.Close() })
	_ = sink.Flush() // the demo's banner, before the listening line
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if err := env.out.print(map[string]any{"event": "listening", "addr": ln.Addr().String(), "base_url": baseURL, "issuer": public}); err != nil {
		return err
	}
	logger.Info("listening", "addr", ln.Addr().String(), "issuer", public)

	select {
	case err := <-served:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing in-flight requests")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Error("shutdown", "err", err)
	}
	if n := access.takeUnlogged(); n > 0 {
		logger.Info("requests not logged", "unlogged", n)
	}
	stopRecording()
	if err := inst.Close(); err != nil {
		return fmt.Errorf("closing the store: %w", err)
	}
	logger.Info("stopped")
	return nil
}

// startCPUProfile starts writing a CPU profile to path; stop ends it and
// closes the file.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpu-profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("-cpu-profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

// displayAddr is addr as a client would dial it: an unspecified host
// (0.0.0.0, ::) becomes the loopback address.
func displayAddr(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return addr.String()
	}
	ip := tcp.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return net.JoinHostPort(ip.String(), fmt.Sprint(tcp.Port))
}

// newRootHandler routes /healthz to the health check and everything else to
// Latchkey: /p/{project}/... for project {project}, the rest for project
// default. Every request gets its X-Request-Id (package requestid) and is
// logged with it as limit admits it (see logRequests).
func newRootHandler(inst *instance, logger *slog.Logger, limit *accessLimit) http.Handler {
	api := tenant.ByPath(projectPathPrefix, store.DefaultProject, inst.lk.Handler())
	health := healthHandler(inst, logger)
	return requestid.Middleware(logRequests(logger, limit, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			health.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})))
}

// statusClientClosed is the status the access log gives a request whose
// client disconnected before its answer (nginx's "499 Client Closed
// Request"); no client is ever sent it.
const statusClientClosed = 499

// logRequests writes the access log: a line per request admitted by limit
// (see accessLimit) with method, path (never the query string, which could
// carry a secret a client put there), status, size, duration, client
// address and request id, and "unlogged", the number of requests left out
// since the previous line, when there were any. A request that failed
// because its client disconnected (its context cancelled) is logged with
// statusClientClosed, not the 5xx written to the closed connection.
// Headers and bodies are never logged.
func logRequests(logger *slog.Logger, limit *accessLimit, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := httpapi.NewRecorder(w)
		defer func() {
			status := rec.Status()
			if status >= 500 && errors.Is(r.Context().Err(), context.Canceled) {
				// net/http cancels a request's context when its client's
				// connection closes: the client left before its answer,
				// which went nowhere. No fault of the server.
				status = statusClientClosed
			}
			end := time.Now()
			ok, unlogged := limit.admit(end, status)
			if !ok {
				return
			}
			attrs := []slog.Attr{
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", status),
				slog.Int64("bytes", rec.Bytes()),
				slog.Duration("duration", end.Sub(start)),
				slog.String("remote", r.RemoteAddr),
				slog.String("request_id", requestid.FromContext(r.Context())),
			}
			if unlogged > 0 {
				attrs = append(attrs, slog.Int64("unlogged", unlogged))
			}
			logger.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
		}()
		next.ServeHTTP(rec, r)
	})
}
