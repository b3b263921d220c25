package keys

import (
	"errors"
)

// ErrInvalidToken is matched (with errors.Is) by every error [Verifier.Verify]
// and [Parse] return because the token itself is not acceptable. Any other
// error from Verify is a failure of the store and means the token could not
// be checked.
//
// Each refusal also matches exactly one of the reasons below, so that a
// client can be told whether to refresh (ErrTokenExpired) or to sign in
// again (the others).
var ErrInvalidToken = errors.New("keys: invalid token")

// The reasons a token is refused. Each error that matches one of them also
// matches ErrInvalidToken.
var (
	// ErrTokenMalformed: not a Latchkey token: bad encoding, a header
	// member other than alg, typ and kid, an algorithm other than EdDSA, a
	// bad signature, missing or ill-formed claims, too large.
	ErrTokenMalformed = errors.New("keys: token malformed")
	// ErrTokenExpired: a login token past its exp, an API key past its
	// expiry, or a token used before its nbf or iat (give or take the
	// leeway).
	ErrTokenExpired = errors.New("keys: token expired")
	// ErrTokenRevoked: the token's API key was revoked, or its session
	// ended (logout, a replayed refresh token, its user disabled, the
	// session's lifetime over).
	ErrTokenRevoked = errors.New("keys: token revoked")
	// ErrSigningKeyRetired: the signing key that signed the token was
	// retired.
	ErrSigningKeyRetired = errors.New("keys: signing key retired")
	// ErrWrongProject: the token is not of this project: its audience is
	// another project, or its kid names no signing key of this project.
	ErrWrongProject = errors.New("keys: token of another project")
)

// ErrInvalidName is matched by the error [APIKeys.Create] returns for a name
// that store.CheckName refuses (empty after trimming, too long, control or
// bidirectional formatting characters).
var ErrInvalidName = errors.New("keys: invalid API key name")

// ErrInvalidScope is matched by the error [APIKeys.CreateKey] returns for
// scopes that store.CheckScopes refuses (a name outside [a-z0-9_.:-]{1,64},
// one given twice, more than store.MaxScopes); nothing is created.
var ErrInvalidScope = errors.New("keys: invalid API key scope")

// ErrInvalidDuration is matched by the error [APIKeys.CreateKey] returns
// for a negative expiry or one under a second, and [APIKeys.Roll] for a
// negative overlap; nothing is created.
var ErrInvalidDuration = errors.New("keys: invalid duration")

// tokenError is a refusal of a token. Its detail comes from a fixed
// vocabulary and never holds any part of the token, so it is safe to log.
type tokenError struct {
	kind   error // one of the reasons above
	detail string
}

func (e *tokenError) Error() string { return e.kind.Error() + ": " + e.detail }

// Is makes every tokenError match ErrInvalidToken and its reason.
func (e *tokenError) Is(target error) bool { return target == ErrInvalidToken || target == e.kind }

// Refuse returns a refusal of a token for reason (one of ErrTokenMalformed,
// ErrTokenExpired, ErrTokenRevoked, ErrSigningKeyRetired, ErrWrongProject),
// for verifiers built on [Parse]: it matches ErrInvalidToken and reason, and
// ReasonOf gives detail, a fixed phrase that must never hold any part of the
// token. A KeyFunc that refuses a kid returns one; Parse returns it as it is.
func Refuse(reason error, detail string) error { return &tokenError{reason, detail} }

// Refusal constructors, one per reason; detail is a fixed phrase for logs.
func malformed(detail string) error    { return &tokenError{ErrTokenMalformed, detail} }
func expired(detail string) error      { return &tokenError{ErrTokenExpired, detail} }
func revoked(detail string) error      { return &tokenError{ErrTokenRevoked, detail} }
func retired(detail string) error      { return &tokenError{ErrSigningKeyRetired, detail} }
func wrongProject(detail string) error { return &tokenError{ErrWrongProject, detail} }

// ReasonOf returns the loggable reason of an error of Verify or Parse: a
// fixed phrase such as "revoked API key", or "store failure" for an error
// that is not a refusal.
func ReasonOf(err error) string {
	var te *tokenError
	if errors.As(err, &te) {
		return te.detail
	}
	return "store failure"
}

// storeError marks a failure of the store met while checking a token, so
// that it surfaces as an internal error rather than as a refusal even when
// golang-jwt wraps it.
type storeError struct{ err error }

func (e *storeError) Error() string { return "keys: store: " + e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }
