package keys

import (
	"errors"
)

// ErrInvalidToken is matched (with errors.Is) by every error [Verifier.Verify]
// returns because the token itself is not acceptable: malformed, too large,
// signed with a wrong algorithm or key, for another project, expired, or
// naming a retired signing key or a revoked API key. Any other error from
// Verify is a failure of the store and means the token could not be checked.
var ErrInvalidToken = errors.New("keys: invalid token")

// ErrInvalidName is matched by the error [APIKeys.Create] returns for a name
// that is empty after trimming, longer than [MaxAPIKeyNameLen] characters,
// not valid UTF-8 or holding control characters.
var ErrInvalidName = errors.New("keys: invalid API key name")

// tokenError is a rejection of a token. Its reason comes from a fixed
// vocabulary and never holds any part of the token, so it is safe to log.
type tokenError struct {
	reason string
}

func (e *tokenError) Error() string { return "keys: invalid token: " + e.reason }

// Is makes every tokenError match ErrInvalidToken.
func (e *tokenError) Is(target error) bool { return target == ErrInvalidToken }

// reject returns a tokenError with the given fixed reason.
func reject(reason string) error { return &tokenError{reason: reason} }

// reasonOf returns the loggable reason of a Verify error.
func reasonOf(err error) string {
	var te *tokenError
	if errors.As(err, &te) {
		return te.reason
	}
	return "store failure"
}

// storeError marks a failure of the store met while checking a token, so
// that it surfaces as an internal error rather than as a rejection even when
// golang-jwt wraps it.
type storeError struct{ err error }

func (e *storeError) Error() string { return "keys: store: " + e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }
