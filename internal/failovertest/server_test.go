package failovertest

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/latchkey-dev/latchkey/internal/testutil"
)

// buildServer builds the example server (examples/server) into a
// temporary directory and returns the binary's path.
func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "server")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	out, err := testutil.GoBuild(ctx, bin, "../../examples/server")
	if err != nil {
		t.Fatalf("go build ./examples/server: %v\n%s", err, out)
	}
	return bin
}

// server is an example server process.
type server struct {
	url string // http://host:port
}

// startServer runs `bin serve` on the PostgreSQL database dbURL, with the
// tests' master key, on a free port of 127.0.0.1, and returns once it
// listens. The cleanup stops it.
func startServer(t *testing.T, bin, dbURL string) server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve", "-addr", "127.0.0.1:0", "-data", t.TempDir(), "-db", dbURL)
	cmd.Env = testutil.ProgramEnv(append(os.Environ(), "LATCHKEY_MASTER_KEY="+base64.StdEncoding.EncodeToString(masterKey)))
	cmd.Stderr = failureLog(t, "the example server on "+dbURL)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("the server's output: %v", err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start the example server: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		defer close(addr)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var line struct {
				Event string `json:"event"`
				Addr  string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Event == "listening" {
				addr <- line.Addr
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			t.Fatalf("the example server on %s ended without listening (its log follows)", dbURL)
		}
		return server{url: "http://" + a}
	case <-time.After(time.Minute):
		t.Fatalf("the example server on %s did not listen within a minute", dbURL)
	}
	return server{}
}

// healthz returns the status of GET /healthz.
func (s server) healthz(t *testing.T) int {
	t.Helper()
	c := http.Client{Timeout: requestTimeout}
	res, err := c.Get(s.url + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz: %v", err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}
