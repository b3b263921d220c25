package remote

import (
	"errors"

	"github.com/latchkey-dev/latchkey/keys"
)

// The errors of Verify that are not refusals of the token: they do not
// match keys.ErrInvalidToken, since the token may well be valid; the
// verifier cannot tell. [Verifier.Middleware] answers them 503 unavailable.
var (
	// ErrStale: the revocation feed has not been read successfully for
	// longer than Options.StaleAfter, so a revocation may have been made
	// that this verifier has not seen. Verify refuses every token until the
	// feed is read again.
	ErrStale = errors.New("remote: the revocation feed is unreachable; refusing every token")
	// ErrClosed: the verifier was closed; it follows the feed no more.
	ErrClosed = errors.New("remote: verifier closed")
)

// ReasonOf returns the loggable reason of an error of [Verifier.Verify]: a
// fixed phrase such as "revoked API key" or "revocation feed unreachable",
// never a part of the token.
func ReasonOf(err error) string {
	switch {
	case errors.Is(err, ErrStale):
		return "revocation feed unreachable"
	case errors.Is(err, ErrClosed):
		return "verifier closed"
	case errors.Is(err, keys.ErrInvalidToken):
		return keys.ReasonOf(err)
	}
	return "not verified"
}
