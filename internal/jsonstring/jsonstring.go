// Package jsonstring writes Go strings as JSON string literals exactly as
// encoding/json writes them, appending to a caller's buffer, so that a
// response encoded by hand is byte for byte what json.Marshal would write.
package jsonstring

import "unicode/utf8"

// hexDigits are the digits of \u escapes, in lower case as encoding/json
// writes them.
const hexDigits = "0123456789abcdef"

// Bit c of plainLow (c < 64) or of plainHigh (c-64, for c from 64 to 127)
// is set when encoding/json writes the ASCII byte c of a string as it is:
// every byte from ' ' to DEL (0x7f) but '"', '\\', and the HTML characters
// '<', '>' and '&'.
const (
	plainLow  uint64 = 0xffffffff_00000000 &^ (1<<'"' | 1<<'&' | 1<<'<' | 1<<'>')
	plainHigh uint64 = 0xffffffff_ffffffff &^ (1 << ('\\' - 64))
)

// plain reports whether encoding/json writes the byte c of a string as it
// is. Bytes from utf8.RuneSelf up are never plain: they start UTF-8
// sequences, looked at rune by rune.
func plain(c byte) bool {
	switch {
	case c < 64:
		return plainLow>>c&1 != 0
	case c < utf8.RuneSelf:
		return plainHigh>>(c-64)&1 != 0
	}
	return false
}

// Append appends s to dst as a quoted JSON string, as json.Marshal(s)
// writes it, and returns the extended slice: '"' and '\\' escaped with a
// backslash; \b, \f, \n, \r and \t in their short forms; other control
// characters, '<', '>', '&', U+2028 and U+2029 as \u escapes; each byte of
// invalid UTF-8 as \ufffd; everything else as it is.
func Append(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0 // s[start:i] is still to be copied as it is
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain(c) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
