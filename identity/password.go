package identity

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/latchkey-dev/latchkey/store"
)

// The password policy: what a password given to a user (when the user is
// created, or by SetPassword or ResetPassword) must be. It is applied where
// passwords are set, never at sign-in: a sign-in with a password the policy
// would refuse is just a wrong password.
const (
	// MinPasswordChars is the fewest characters (Unicode code points) a
	// password may have.
	MinPasswordChars = 8
)

// ErrPasswordPolicy is matched by the error of a password the password
// policy refuses (see CheckPassword).
var ErrPasswordPolicy = errors.New("identity: the password does not meet the password policy")

// CheckPassword applies the password policy: a password must have at least
// MinPasswordChars characters and at most MaxPasswordLen bytes. It returns
// nil or an error matching ErrPasswordPolicy and store.ErrInvalid, whose
// *store.ArgError says what is wrong without echoing the password.
func CheckPassword(password string) error {
	switch {
	case utf8.RuneCountInString(password) < MinPasswordChars:
		return policyError(fmt.Sprintf("password shorter than %d characters", MinPasswordChars))
	case len(password) > MaxPasswordLen:
		return policyError(fmt.Sprintf("password longer than %d bytes", MaxPasswordLen))
	}
	return nil
}

// policyError returns the error of a password the policy refuses for
// reason.
func policyError(reason string) error {
	return fmt.Errorf("%w: %w", ErrPasswordPolicy, &store.ArgError{Reason: reason})
}
