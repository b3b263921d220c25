//go:build unix

package testutil

import (
	"os"
	"syscall"
)

// lockFile waits for an exclusive lock on the file at path, made if
// missing, and returns its release. The system releases it too when the
// process ends. The file is opened for reading only, which flock needs no
// more than, so that a file another user made serves as well.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
