package contacts

import (
	"strconv"
	"time"
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
		b = appendTime(b, it.CreatedAt)
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

// appendTime appends t as paginate.TimeLayout formats it
// ("2006-01-02T15:04:05.000000Z", in UTC), without the layout
// interpretation of time.Time.AppendFormat. Years outside 0..9999 fall back
// to AppendFormat.
func appendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.Truncate(time.Microsecond).AppendFormat(b, paginate.TimeLayout)
	}
	hour, minute, sec := t.Clock()
	us := t.Nanosecond() / 1000
	b = append(b,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-',
		byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':',
		byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.',
		byte('0'+us/100000), byte('0'+us/10000%10), byte('0'+us/1000%10),
		byte('0'+us/100%10), byte('0'+us/10%10), byte('0'+us%10), 'Z')
	return b
}

const hex = "0123456789abcdef"

// appendString appends s as a JSON string exactly as encoding/json does:
// '"' and '\\' escaped, \b \f \n \r \t short forms, other control characters,
// '<', '>', '&', U+2028 and U+2029 as \u00XX or \u20XX, and each byte of
// invalid UTF-8 as \ufffd.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
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
