package contacts

import (
	"strconv"
	"unicode/utf8"

	"github.com/latchkey-dev/latchkey/paginate"
)

// The list response is encoded by hand: it is the whole body of the hottest
// endpoint, and appending into one buffer costs a fraction of reflection-based
// encoding/json. The output is byte for byte what json.Marshal writes for the
// same value (see the tests), strings escaped the same way.

// appendResponse appends the JSON of resp to b.
func appendResponse(b []byte, resp paginate.Response[item]) []byte {
	b = append(b, `{"data":[`...)
	for i, it := range resp.Data {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendString(b, it.ID)
		b = append(b, `,"name":`...)
		b = appendString(b, it.Name)
		b = append(b, `,"created_at":"`...)
		b = paginate.AppendTime(b, it.CreatedAt)
		b = append(b, `"}`...)
	}
	b = append(b, `],"pagination":{"limit":`...)
	b = strconv.AppendInt(b, int64(resp.Pagination.Limit), 10)
	b = append(b, `,"has_more":`...)
	b = strconv.AppendBool(b, resp.Pagination.HasMore)
	b = append(b, `,"next_cursor":`...)
	b = appendString(b, resp.Pagination.NextCursor)
	b = append(b, "}}\n"...)
	return b
}

const hex = "0123456789abcdef"

// safe[c] reports whether encoding/json writes the byte c of a string as it
// is: printable ASCII other than '"', '\\', '<', '>' and '&'. Bytes from
// 0x80 up are false; they start UTF-8 sequences, checked one by one.
var safe = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// Constants of the word-at-a-time check in wordSafe: every byte 0x01, every
// byte 0x80.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// wordSafe reports whether all of the 8 bytes packed in x are safe. Each
// term below has the high bit of some byte set if and only if some byte of x
// is of its kind; borrows can mark bytes above the one found as well, never
// a word with none. zero finds zero bytes, so exclusive ors find bytes equal
// to a value: '<' and '>' differ from 0x3e in bit 1 only, '"' and '&' from
// 0x26 in bit 2 only.
func wordSafe(x uint64) bool {
	zero := func(v uint64) uint64 { return (v - ones) &^ v }
	unsafe := x | // bytes from 0x80 up
		(x-0x20*ones)&^x | // bytes below 0x20
		zero(x^'\\'*ones) | // '\\'
		zero((x|0x02*ones)^0x3e*ones) | // '<' and '>'
		zero((x|0x04*ones)^0x26*ones) // '"' and '&'
	return unsafe&highs == 0
}

// appendString appends s as a JSON string exactly as encoding/json does:
// '"' and '\\' escaped, \b \f \n \r \t short forms, other control characters,
// '<', '>', '&', U+2028 and U+2029 as \u00XX or \u20XX, and each byte of
// invalid UTF-8 as \ufffd.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			w := s[i : i+8]
			x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
				uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
			if wordSafe(x) {
				i += 8
				continue
			}
		}
		c := s[i]
		if safe[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
