package store

import "errors"

// Sentinel errors. Store methods wrap them (fmt.Errorf("...: %w", ErrX)), so
// callers check them with errors.Is.
var (
	// ErrNotFound means the row asked for does not exist in the project
	// given, or the project itself does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict means a create would duplicate a unique value (a project
	// id, an email within a project, a row id), or a change is not allowed
	// in the row's current state.
	ErrConflict = errors.New("store: conflict")
	// ErrInvalid means an argument is malformed: an empty id, an email that
	// is not an address, an invalid project id, a zero time, a negative
	// duration. Nothing was changed. The checks every backend makes are the
	// Check functions of this package.
	ErrInvalid = errors.New("store: invalid argument")

	// ErrExpired means a refresh token was presented after its expiry, or
	// after the absolute end of its session.
	ErrExpired = errors.New("store: expired")
	// ErrRevoked means a refresh family (a session) was ended before the
	// token was presented.
	ErrRevoked = errors.New("store: revoked")
	// ErrReplayed means a used refresh token was presented again after the
	// reuse window. The store has ended the token's whole family before
	// returning it.
	ErrReplayed = errors.New("store: refresh token replayed")
	// ErrDisabled means the user is disabled: a session cannot start or go
	// on for them.
	ErrDisabled = errors.New("store: user disabled")

	// ErrUnavailable means the database could not be used: it is
	// unreachable, busy past the store's timeout, out of space, or cannot
	// take writes now (a standby, a read-only database). The same call may
	// succeed when retried later. Nothing was changed, with one exception:
	// when the connection failed after a write was sent (its commit is in
	// doubt), the write may have been applied, and the error's text says
	// so. A caller answers both alike (HTTP 503, retry later), so the
	// writes are made safe to retry: a revocation or a logout retried
	// finds the row revoked, and a refresh rotation retried with the same
	// token within the reuse window gets the same successor.
	ErrUnavailable = errors.New("store: unavailable")
)

// IsSentinel reports whether err matches one of the sentinel errors above,
// so that a backend passes on unchanged an error that already says what
// went wrong (a Check function's, one of its own).
func IsSentinel(err error) bool {
	for _, s := range [...]error{
		ErrNotFound, ErrConflict, ErrInvalid, ErrExpired,
		ErrRevoked, ErrReplayed, ErrDisabled, ErrUnavailable,
	} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
