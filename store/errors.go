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
	// ErrInvalid means an argument is malformed: an empty id or email, an
	// invalid project id, a negative duration. Nothing was changed.
	ErrInvalid = errors.New("store: invalid argument")

	// ErrExpired means a refresh token was presented after its expiry.
	ErrExpired = errors.New("store: expired")
	// ErrRevoked means a refresh family was revoked before the token was
	// presented.
	ErrRevoked = errors.New("store: revoked")
	// ErrReplayed means a used refresh token was presented again after the
	// reuse window. The store has revoked the token's whole family before
	// returning it.
	ErrReplayed = errors.New("store: refresh token replayed")
)
