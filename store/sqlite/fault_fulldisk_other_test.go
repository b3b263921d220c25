//go:build !linux && !darwin

package sqlite_test

import "errors"

// runFullDisk is the child of TestFault_FullDisk, which is built only on
// Linux and macOS: it limits the size of a process's files with
// RLIMIT_FSIZE, with the field types of those systems' syscall.Rlimit.
func runFullDisk(string) error {
	return errors.ErrUnsupported
}
