package store

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// CheckPrefix returns an error matching ErrInvalid unless prefix, the start
// of what a list is filtered by (what: "email", "name"), could start a
// stored value: valid UTF-8 without a NUL byte. The empty prefix (no
// filter) passes.
func CheckPrefix(what, prefix string) error {
	switch {
	case !utf8.ValidString(prefix):
		return invalidf("%s prefix is not valid UTF-8", what)
	case strings.IndexByte(prefix, 0) >= 0:
		return invalidf("%s prefix holds a NUL byte", what)
	}
	return nil
}

// PrefixEnd returns the least string that sorts, byte by byte, after every
// string starting with prefix, a valid UTF-8 string (CheckPrefix): prefix
// with its last character replaced by the next one (skipping the
// surrogates, which UTF-8 cannot hold), dropping trailing U+10FFFF. UTF-8
// orders strings by code point, so a valid UTF-8 string s starts with prefix
// exactly when prefix <= s < PrefixEnd(prefix): a range an index answers,
// where LIKE would need its wildcards escaped. It reports false when no such
// string exists (prefix is all U+10FFFF): then s >= prefix alone says it.
func PrefixEnd(prefix string) (string, bool) {
	rs := []rune(prefix)
	for i := len(rs) - 1; i >= 0; i-- {
		r := rs[i] + 1
		if r >= 0xD800 && r <= 0xDFFF {
			r = 0xE000
		}
		if r <= unicode.MaxRune {
			rs[i] = r
			return string(rs[:i+1]), true
		}
	}
	return "", false
}
