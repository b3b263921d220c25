package testutil

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
)

// GoBuild builds the main package pkg (as `go build` names packages) into
// the file out and returns what the build printed.
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
	return exec.CommandContext(ctx, "go", "build", "-o", out, pkg).CombinedOutput()
}
