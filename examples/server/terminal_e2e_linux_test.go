package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/latchkey-dev/latchkey/internal/testutil"
)

// openPTY opens a pseudo-terminal pair: the controlling side, which a test
// reads and writes like a person at a keyboard, and the terminal a process
// gets as its stdin.
func openPTY(t *testing.T) (control, tty *os.File) {
	t.Helper()
	control, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = control.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(control.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(control.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tty.Close() })
	return control, tty
}

// echoing reports whether the terminal tty echoes what is typed.
func echoing(t *testing.T, tty *os.File) bool {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	require.NoError(t, err)
	return tio.Lflag&unix.ECHO != 0
}

// On a terminal, user create prompts for the password and reads it without
// echo.
func TestE2E_userCreateOnATerminal(t *testing.T) {
	t.Parallel()
	dir := newDataDir(t)
	control, tty := openPTY(t)
	cmd := exec.Command(serverBin, "user", "create", "-data", dir, "-project", "default", "-email", "ada@example.com")
	cmd.Env = childEnv()
	cmd.Stdin = tty
	var stdout bytes.Buffer
	stderr := &testutil.Buffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	require.NoError(t, cmd.Start())

	// Type once the prompt is shown and the command has turned the
	// terminal's echo off (it prints the prompt first, as sudo and ssh do;
	// a password typed in between would be shown).
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), "Password for ada@example.com: ") || echoing(t, tty) {
		require.True(t, time.Now().Before(deadline), "no prompt with the echo off; stderr: %s", stderr)
		time.Sleep(20 * time.Millisecond)
	}
	_, err := control.WriteString("s3cret-typed\n")
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), "stderr: %s", stderr)

	// What the terminal showed (read without blocking: whatever is
	// there): no echo of the password.
	fd := int(control.Fd()) // Fd makes the file blocking: take it once
	require.NoError(t, unix.SetNonblock(fd, true))
	shown := make([]byte, 4096)
	n, err := unix.Read(fd, shown)
	if err != nil {
		require.ErrorIs(t, err, unix.EAGAIN)
		n = 0
	}
	assert.NotContains(t, string(shown[:n]), "s3cret", "the password was echoed")
	assert.NotContains(t, stderr.String(), "s3cret")
	var u map[string]any
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &u), stdout.String())
	assert.Equal(t, "ada@example.com", u["email"])

	s := startServer(t, dir)
	s.login("", "ada@example.com", "s3cret-typed")
}
