package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/internal/testutil"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README shows this program as the way to embed Latchkey: it must be
// this file, whole.
func TestREADMEShowsThisProgram(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	src, err := os.ReadFile("main.go")
	require.NoError(t, err)
	assert.Contains(t, string(readme), "```go\n"+string(src)+"```", "README.md must show examples/embed/main.go verbatim")
}

// The program runs as the README says: the admin logs in over the API, and
// the host's own route answers a bearer of their token, and refuses others.
func TestEmbed(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "embed")
	out, err := testutil.GoBuild(t.Context(), bin, ".")
	require.NoError(t, err, "%s", out)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-addr", addr, "-db", filepath.Join(dir, "latchkey.db"))
	cmd.Env = testutil.ProgramEnv(append(os.Environ(), "LATCHKEY_MASTER_KEY="+base64.StdEncoding.EncodeToString(key), "ADMIN_PASSWORD=pw-of-admin"))
	var stderr testutil.Buffer // written by the child's copier while the loop reads it
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	defer func() { cancel(); _ = cmd.Wait() }()

	base := "http://" + addr
	var res *http.Response
	for deadline := time.Now().Add(30 * time.Second); ; {
		res, err = http.Post(base+"/v1/identity/login", "application/json",
			strings.NewReader(`{"email":"admin@example.com","password":"pw-of-admin"}`))
		if err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the program did not answer: %v; stderr: %s", err, stderr.String())
		time.Sleep(50 * time.Millisecond)
	}
	var ts struct {
		AccessToken string `json:"access_token"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&ts))
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)

	req, _ := http.NewRequest(http.MethodGet, base+"/hello", nil)
	req.Header.Set("Authorization", "Bearer "+ts.AccessToken)
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Regexp(t, `^hello, usr_[0-9a-v]{26} \(user\)\n$`, string(body))

	res, err = http.Get(base + "/hello")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	assert.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))

	// /reports needs reports:read of a key with scopes. The keys are made
	// on the program's database by a second process, as the console or
	// the CLI would.
	st, err := sqlite.Open(ctx, filepath.Join(dir, "latchkey.db"), nil)
	require.NoError(t, err)
	defer st.Close()
	lk, err := latchkey.New(st, key, nil)
	require.NoError(t, err)
	defer lk.Close()
	get := func(token string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, base+"/reports", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	for scopes, want := range map[string]int{"reports:read": http.StatusOK, "contacts:read": http.StatusForbidden, "": http.StatusOK} {
		_, token, err := lk.APIKeys().CreateKey(ctx, store.DefaultProject, keys.NewKey{Name: "svc", Scopes: strings.Fields(scopes)})
		require.NoError(t, err)
		status, body := get(token)
		assert.Equalf(t, want, status, "a key with scopes %q: %s", scopes, body)
		if want == http.StatusForbidden {
			assert.Contains(t, body, `"code":"forbidden"`)
		}
	}
	status, loginBody := get(ts.AccessToken)
	assert.Equal(t, http.StatusOK, status, "a login token")
	assert.Contains(t, loginBody, `scopes []`)
}
