package jsonstring

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// marshal is what Append must write: encoding/json's own encoding.
func marshal(t testing.TB, s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("json.Marshal(%q): %v", s, err)
	}
	return string(b)
}

func TestAppend(t *testing.T) {
	for _, s := range []string{
		"", "Ada Lovelace", `quote " and \ backslash`, "tab\tnew\nline\rcr\bbs\fff",
		"\x00\x01\x1f\x7f", "<script>&amp;</script>", "émile 日本 🎉", "bad \xff utf8 \xc3",
		"line\u2028sep\u2029para", "\xed\xa0\x80 surrogate", "\uFFFD replacement", "\xf4\x90\x80\x80 above U+10FFFF",
	} {
		require.Equal(t, "prefix "+marshal(t, s), string(Append([]byte("prefix "), s)), "Append(%q)", s)
	}
}

func TestAppend_EveryByteInEveryPosition(t *testing.T) {
	// Each byte value at each position of a short string, and a few
	// multi-byte characters, valid or not, at each position.
	filler := strings.Repeat("a", 9)
	for pos := 0; pos <= len(filler); pos++ {
		var in []string
		for c := 0; c < 256; c++ {
			in = append(in, filler[:pos]+string([]byte{byte(c)})+filler[pos:])
		}
		for _, r := range []string{"é", "日", "🎉", "\u2028", "\u2029", "\xed\xa0\x80", "\xe2\x80", "\xc3"} {
			in = append(in, filler[:pos]+r+filler[pos:])
		}
		for _, s := range in {
			require.Equal(t, marshal(t, s), string(Append(nil, s)), "Append(%q)", s)
		}
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "a", "\"\\", "<>&", "\u2028", "\xff", "日本", "\x00", "\xe2\x80\xa8\xe2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(Append(nil, s)), marshal(t, s); got != want {
			t.Fatalf("Append(%q) = %s, want %s", s, got, want)
		}
	})
}

// BenchmarkAppend compares Append with json.Marshal on the strings of a
// contacts page. Compare with benchstat -col /impl.
func BenchmarkAppend(b *testing.B) {
	for _, s := range []struct{ name, s string }{
		{"id", "ct_01jd9x6x0k3v8m2q4r5t6w7y8z"},
		{"name", "Ada Lovelace"},
		{"cursor", "ct_01jd9x6x0k3v8m2q4r5t6w7y8z:2026-11-21T10:15:30.123456Z"},
		{"utf8", "Émile Zola 日本"},
	} {
		b.Run("s="+s.name+"/impl=encoding_json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(s.s); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("s="+s.name+"/impl=jsonstring", func(b *testing.B) {
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			for b.Loop() {
				buf = Append(buf[:0], s.s)
			}
		})
	}
}
