package main

// End-to-end tests: TestMain builds the example server and this service;
// each test runs the server on a fresh data directory, makes and revokes
// keys with the server's command line (a third process on the same
// database), and checks what this service, a separate process following the
// server's revocation feed, answers.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/internal/testutil"
)

// The binaries TestMain builds.
var serverBin, remoteBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "latchkey-remote-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin, remoteBin = filepath.Join(dir, "server"), filepath.Join(dir, "remote")
	for _, b := range []struct{ out, pkg string }{{serverBin, "../server"}, {remoteBin, "."}} {
		if out, err := testutil.GoBuild(context.Background(), b.out, b.pkg); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", b.pkg, err, out)
			_ = os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// childEnv is the environment of the child processes: the test's, without
// settings that would change what the server does.
func childEnv() []string {
	return testutil.ProgramEnv(slices.DeleteFunc(os.Environ(), func(s string) bool {
		return strings.HasPrefix(s, "LATCHKEY_MASTER_KEY=") || strings.HasPrefix(s, "LATCHKEY_PUBLIC_URL=")
	}))
}

// process is a running child that printed a "listening" line.
type process struct {
	cmd    *exec.Cmd
	stderr *testutil.Buffer
	listen map[string]any
	done   chan error
}

// start runs bin with args and waits for its "listening" JSON line on
// stdout. The process is stopped at the end of the test.
func start(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = childEnv()
	p := &process{cmd: cmd, stderr: &testutil.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan map[string]any, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() { p.stop(t) })
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-lines:
			require.True(t, ok, "%s exited before listening:\n%s", filepath.Base(bin), p.stderr.String())
			if m["event"] == "listening" {
				p.listen = m
				return p
			}
		case <-timeout:
			t.Fatalf("%s did not listen within 30 s:\n%s", filepath.Base(bin), p.stderr.String())
		}
	}
}

// stop sends SIGTERM and waits for the exit; a second call does nothing.
func (p *process) stop(t *testing.T) error {
	if p.cmd.ProcessState != nil {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		return err
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Errorf("%s did not stop within 30 s", p.cmd.Path)
		return <-p.done
	}
}

// cli runs one command of the example server on data dir and returns its
// last JSON line; it has exited when cli returns.
func cli(t *testing.T, dir, stdin string, args ...string) map[string]any {
	t.Helper()
	args = append(args[:2:2], append([]string{"-data", dir}, args[2:]...)...)
	cmd := exec.Command(serverBin, args...)
	cmd.Env = childEnv()
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%v: %s", args, stderr.String())
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &m), stdout.String())
	return m
}

// freeAddr returns a loopback address whose port is free now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// get sends GET /whoami with the token to the service at addr and
// returns the status and the decoded body.
func get(t *testing.T, addr, token string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/whoami", nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var m map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&m))
	return res.StatusCode, m
}

// refusedWithin polls the service until it answers 401 for token, and
// returns how long that took; the test fails past limit.
func refusedWithin(t *testing.T, addr, token string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		status, body := get(t, addr, token)
		if status == http.StatusUnauthorized {
			assert.Equal(t, "invalid_token", body["code"])
			return time.Since(start)
		}
		require.Equal(t, http.StatusOK, status, "%v", body)
		require.Less(t, time.Since(start), limit, "the token was still accepted %s after the revocation", limit)
		time.Sleep(2 * time.Millisecond)
	}
}

// setup starts the example server on a fresh data directory at addr, makes
// an API key for the service, and starts the service with extra flags. It
// returns the data directory, the server and the service.
func setup(t *testing.T, serverAddr string, extra ...string) (string, *process, *process) {
	t.Helper()
	dir := t.TempDir()
	srv := start(t, serverBin, "serve", "-addr", serverAddr, "-data", dir)
	base := srv.listen["base_url"].(string)
	feed := cli(t, dir, "", "key", "create", "-project", "default", "-public-url", base, "-name", "whoami service")
	keyFile := filepath.Join(dir, "whoami.key")
	require.NoError(t, os.WriteFile(keyFile, []byte(feed["token"].(string)+"\n"), 0o600))
	svc := start(t, remoteBin, append([]string{"-latchkey", base, "-api-key-file", keyFile, "-addr", "127.0.0.1:0"}, extra...)...)
	assert.Equal(t, "default", svc.listen["project"])
	return dir, srv, svc
}

func TestRevokedThroughTheCLIIsRefusedWithinASecond(t *testing.T) {
	dir, srv, svc := setup(t, "127.0.0.1:0")
	base := srv.listen["base_url"].(string)
	addr := svc.listen["addr"].(string)

	status, body := get(t, addr, "")
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Equal(t, "invalid_token", body["code"])

	// An API key: accepted, then revoked by another process.
	key := cli(t, dir, "", "key", "create", "-project", "default", "-public-url", base, "-name", "billing batch")
	token := key["token"].(string)
	status, body = get(t, addr, token)
	require.Equal(t, http.StatusOK, status, "%v", body)
	assert.Equal(t, key["id"], body["subject"])
	assert.Equal(t, "api_key", body["kind"])
	assert.Equal(t, base, body["issuer"])

	cli(t, dir, "", "key", "revoke", "-project", "default", key["id"].(string))
	d := refusedWithin(t, addr, token, time.Second)
	t.Logf("key revoked through the CLI refused %s after the CLI exited", d)

	// A login token: accepted, then its user disabled by another process.
	cli(t, dir, "correct horse battery staple\n", "user", "create", "-project", "default", "-email", "ann@example.com", "-tags", "admin")
	res, err := http.Post(base+"/v1/identity/login", "application/json",
		strings.NewReader(`{"email":"ann@example.com","password":"correct horse battery staple"}`))
	require.NoError(t, err)
	var ts struct {
		AccessToken string `json:"access_token"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&ts))
	res.Body.Close()
	status, body = get(t, addr, ts.AccessToken)
	require.Equal(t, http.StatusOK, status, "%v", body)
	assert.Equal(t, "user", body["kind"])
	assert.Equal(t, []any{"admin"}, body["tags"])
	cli(t, dir, "", "user", "disable", "-project", "default", "-email", "ann@example.com")
	d = refusedWithin(t, addr, ts.AccessToken, time.Second)
	t.Logf("user disabled through the CLI refused %s after the CLI exited", d)

	require.NoError(t, svc.stop(t), svc.stderr.String())
	assert.NotContains(t, svc.stderr.String(), token, "a token was logged")
}

func TestFailsClosedWhileLatchkeyIsDownAndCatchesUp(t *testing.T) {
	serverAddr := freeAddr(t)
	dir, srv, svc := setup(t, serverAddr, "-wait", "1s", "-stale-after", "2s")
	base := srv.listen["base_url"].(string)
	addr := svc.listen["addr"].(string)
	good := cli(t, dir, "", "key", "create", "-project", "default", "-public-url", base, "-name", "good")["token"].(string)
	doomed := cli(t, dir, "", "key", "create", "-project", "default", "-public-url", base, "-name", "doomed")
	status, _ := get(t, addr, good)
	require.Equal(t, http.StatusOK, status)
	status, _ = get(t, addr, doomed["token"].(string))
	require.Equal(t, http.StatusOK, status)

	// Latchkey stops; a key is revoked on the command line meanwhile.
	require.NoError(t, srv.stop(t))
	cli(t, dir, "", "key", "revoke", "-project", "default", doomed["id"].(string))
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, body := get(t, addr, good)
		if status == http.StatusServiceUnavailable {
			assert.Equal(t, "unavailable", body["code"])
			break
		}
		require.Equal(t, http.StatusOK, status)
		require.True(t, time.Now().Before(deadline), "still accepting tokens 5 s after Latchkey stopped")
		time.Sleep(20 * time.Millisecond)
	}
	// The line comes through the process's stderr pipe, and the feed's
	// timer may be writing it while a request already sees the 503.
	logged(t, svc, "refusing every token")

	// Latchkey is back on the same address: the service catches up, and
	// never accepts the key revoked while it was down.
	start(t, serverBin, "serve", "-addr", serverAddr, "-data", dir)
	deadline = time.Now().Add(10 * time.Second)
	for {
		status, _ := get(t, addr, doomed["token"].(string))
		require.NotEqual(t, http.StatusOK, status, "a key revoked during the outage was accepted")
		if status, _ := get(t, addr, good); status == http.StatusOK {
			break
		}
		require.True(t, time.Now().Before(deadline), "not serving again 10 s after Latchkey restarted")
		time.Sleep(5 * time.Millisecond)
	}
	status, _ = get(t, addr, doomed["token"].(string))
	assert.Equal(t, http.StatusUnauthorized, status)
	logged(t, svc, "read again")
}

// logged waits up to 5 s for p's stderr to hold line.
func logged(t *testing.T, p *process, line string) {
	t.Helper()
	require.Eventuallyf(t, func() bool { return strings.Contains(p.stderr.String(), line) }, 5*time.Second, 10*time.Millisecond,
		"%q not logged:\n%s", line, p.stderr.String())
}
