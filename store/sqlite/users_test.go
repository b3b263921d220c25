package sqlite

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPrefixEnd checks the upper bound of ListUsers' prefix range: every
// string that starts with the prefix sorts below it, byte by byte, and
// every string at or above it does not start with the prefix.
func TestPrefixEnd(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		prefix, end string
		ok          bool
	}{
		{"a", "b", true},
		{"ann@", "annA", true},
		{"a%_", "a%`", true},
		{"z\xff", "{", true},
		{"\xff\xff", "", false},
		{"é", "\xc3\xaa", true},
	} {
		end, ok := prefixEnd(c.prefix)
		require.Equal(t, c.ok, ok, "prefixEnd(%q)", c.prefix)
		require.Equal(t, c.end, end, "prefixEnd(%q)", c.prefix)
		if !ok {
			continue
		}
		for _, s := range []string{c.prefix, c.prefix + "\x00", c.prefix + "\xff\xff\xff", c.prefix + "zzz"} {
			require.Less(t, s, end, "%q starts with %q", s, c.prefix)
		}
		require.False(t, strings.HasPrefix(end, c.prefix), "%q does not start with %q", end, c.prefix)
	}
}
