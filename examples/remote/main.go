// Command remote is a tiny service of a team that trusts Latchkey's tokens
// without being Latchkey: it guards GET /whoami with the remote verifier
// (package remote), which checks each token locally and follows the
// project's revocation feed.
//
//	go run ./examples/remote -latchkey https://id.example.com -api-key-file key.txt -addr 127.0.0.1:8090
//
// -latchkey is the project's base_url (the iss of its tokens; the example
// server's -public-url), -api-key-file a file holding a permanent API key of
// the project (the token `server key create` prints), which the verifier
// reads the revocation feed with. Once the verifier has read the feed it
// prints one JSON line on stdout, {"event":"listening","addr":...,
// "project":...}, and serves:
//
//	GET /whoami   (Authorization: Bearer <token>) -> 200 {"subject", "kind", "project", "issuer", "session_id", "tags"}
//	              401 invalid_token for a missing, malformed or refused token;
//	              503 unavailable while the revocation feed is out of reach.
//
// Logs are JSON lines on stderr. SIGINT or SIGTERM stops it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/remote"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, "remote:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "remote:", err)
		os.Exit(1)
	}
}

// errUsage marks an error in the command line.
var errUsage = errors.New("usage")

// HTTP server limits: /whoami reads no body.
const (
	readHeaderTimeout = 5 * time.Second
	writeTimeout      = 10 * time.Second
	idleTimeout       = 120 * time.Second
	shutdownTimeout   = 10 * time.Second
	startTimeout      = 30 * time.Second
)

// run serves until ctx ends.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("remote", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("latchkey", "", "the project's base_url, for example https://id.example.com (required)")
	keyFile := fs.String("api-key-file", "", "file holding a permanent API key of the project (required)")
	addr := fs.String("addr", "127.0.0.1:8090", "address to listen on")
	wait := fs.Duration("wait", 0, "long poll of the revocation feed, whole seconds (0: remote.DefaultWait)")
	staleAfter := fs.Duration("stale-after", 0, "refuse every token once the feed is unread this long (0: remote.DefaultStaleAfter)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if *base == "" || *keyFile == "" {
		return fmt.Errorf("%w: -latchkey and -api-key-file are required", errUsage)
	}
	apiKey, err := readKey(*keyFile)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))

	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	v, err := remote.New(sctx, *base, apiKey, &remote.Options{Logger: logger, Wait: *wait, StaleAfter: *staleAfter})
	cancel()
	if err != nil {
		return err
	}
	defer v.Close()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           routes(v),
		ReadHeaderTimeout: readHeaderTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	line, _ := json.Marshal(map[string]string{"event": "listening", "addr": ln.Addr().String(), "project": v.Project()})
	if _, err := fmt.Fprintf(stdout, "%s\n", line); err != nil {
		return err
	}
	logger.Info("listening", "addr", ln.Addr().String(), "latchkey", v.Issuer(), "project", v.Project())

	select {
	case err := <-served:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	shctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	return srv.Shutdown(shctx)
}

// readKey reads the API key from the first line of path.
func readKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the API key: %w", err)
	}
	key, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if key = strings.TrimSpace(key); key == "" {
		return "", fmt.Errorf("%s holds no API key", path)
	}
	return key, nil
}

// routes is the service: GET /whoami behind the verifier, 404 otherwise.
func routes(v *remote.Verifier) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /whoami", v.Middleware(http.HandlerFunc(whoami)))
	mux.Handle("/", problem.NotFound())
	return mux
}

// whoami answers who the request's token speaks for.
func whoami(w http.ResponseWriter, r *http.Request) {
	c, _ := remote.ClaimsFromContext(r.Context())
	tags := c.Tags
	if tags == nil {
		tags = []string{}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"subject":    c.Subject,
		"kind":       c.Kind().String(),
		"project":    c.Audience,
		"issuer":     c.Issuer,
		"session_id": c.SessionID,
		"tags":       tags,
	})
}
