package store_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

// TestPrefixEnd checks the range bound the backends list by prefix with:
// every string starting with the prefix sorts below it, byte by byte, no
// string at or above it starts with the prefix, and it is the least such
// string for the cases where that is easy to state.
func TestPrefixEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		prefix, want string
		ok           bool
	}{
		{"a", "b", true},
		{"ann", "ano", true},
		{"ann@", "annA", true},
		{"a%_", "a%`", true},
		{"a\x7f", "a\u0080", true},
		{"zo\u00e9", "zo\u00ea", true},
		{"x\ud7ff", "x\ue000", true}, // skips the surrogates
		{"x\U0010FFFF", "y", true},
		{"x\U0010FFFF\U0010FFFF", "y", true},
		{"\U0010FFFF", "", false},
	} {
		got, ok := store.PrefixEnd(tc.prefix)
		assert.Equal(t, tc.ok, ok, "%q", tc.prefix)
		assert.Equal(t, tc.want, got, "%q", tc.prefix)
		if !ok {
			continue
		}
		assert.True(t, utf8.ValidString(got), "%q: valid UTF-8", tc.prefix)
		for _, tail := range []string{"", "\x01", "zzz", "@example.com", "\U0010FFFF\U0010FFFF", "\uffff"} {
			s := tc.prefix + tail
			assert.True(t, tc.prefix <= s && s < got, "%q <= %q < %q", tc.prefix, s, got)
		}
		assert.False(t, strings.HasPrefix(got, tc.prefix), "%q does not start with %q", got, tc.prefix)
	}
}

// CheckPrefix refuses what cannot start a stored value, and only that.
func TestCheckPrefix(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"", "a", "ann@example.com", "zoë", "%_*[", "\U0010FFFF"} {
		require.NoErrorf(t, store.CheckPrefix("email", p), "CheckPrefix(%q)", p)
	}
	for _, p := range []string{"\xff", "an\xc3", "a\x00", "\x00"} {
		require.ErrorIsf(t, store.CheckPrefix("email", p), store.ErrInvalid, "CheckPrefix(%q)", p)
	}
}
