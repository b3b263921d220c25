package testutil

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// GoBuild builds the main package pkg (as `go build` names packages) into
// the file out and returns what the build printed.
//
// The program is built the way the test binary calling GoBuild was: with
// the race detector under `go test -race`. It then shares the packages the
// test build compiled (a build without the detector would compile every
// dependency a second time), and the detector watches the program too. Run
// it with ProgramEnv's environment.
//
// The builds of test processes running at once (go test runs packages in
// parallel) take turns: on a cold build cache each would otherwise compile
// the same dependencies alongside the others, where the later ones, in
// turn, find them compiled.
func GoBuild(ctx context.Context, out, pkg string) ([]byte, error) {
	unlock, err := lockFile(filepath.Join(os.TempDir(), "latchkey-go-build.lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	args := []string{"build", "-o", out}
	if race {
		args = append(args, "-race")
	}
	return exec.CommandContext(ctx, "go", append(args, pkg)...).CombinedOutput()
}

// ProgramEnv returns env for running a program built by GoBuild. A program
// built with the race detector waits a second when it exits, for other
// threads' reports (GORACE's atexit_sleep_ms); ProgramEnv sets that wait to
// zero unless env sets GORACE, so that a test running a command many
// times does not wait that long each time. It returns env itself when there
// is nothing to add.
func ProgramEnv(env []string) []string {
	if !race || slices.ContainsFunc(env, func(s string) bool { return strings.HasPrefix(s, "GORACE=") }) {
		return env
	}
	return append(slices.Clip(env), "GORACE=atexit_sleep_ms=0")
}
