package store

import (
	"encoding/binary"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewID(PrefixContact)
		assert.True(t, strings.HasPrefix(id, "ct_"), id)
		assert.Len(t, id, len("ct_")+26)
		for _, c := range id[3:] {
			assert.True(t, (c >= '0' && c <= '9') || (c >= 'a' && c <= 'v'), "NewID(ct) = %q: unexpected %q", id, c)
		}
		assert.False(t, seen[id], "NewID repeated %q", id)
		seen[id] = true
	}
}

func TestValidProjectID(t *testing.T) {
	for _, id := range []string{"default", "a", "0", "acme-1", strings.Repeat("a", 63), "a-"} {
		assert.True(t, ValidProjectID(id), id)
	}
	for _, id := range []string{"", "-a", "A", "acme_1", "a b", "a/b", "a.b", strings.Repeat("a", 64), "é", "a\n"} {
		assert.False(t, ValidProjectID(id), "%q", id)
	}
}

// FuzzValidProjectID checks ValidProjectID against the slug's regular
// expression.
func FuzzValidProjectID(f *testing.F) {
	slug := regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	for _, id := range []string{"default", "a-", "-a", strings.Repeat("a", 63), strings.Repeat("a", 64), "a\n", "é"} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if got, want := ValidProjectID(id), slug.MatchString(id); got != want {
			t.Fatalf("ValidProjectID(%q) = %v, want %v", id, got, want)
		}
	})
}

func TestNormalizeEmail(t *testing.T) {
	assert.Equal(t, "ada@example.com", NormalizeEmail("  Ada@Example.COM\t"))
	assert.Equal(t, NormalizeEmail("ÉMILE@example.com"), NormalizeEmail("émile@example.com"))
	assert.Equal(t, "", NormalizeEmail("   "))
}

func TestTruncate(t *testing.T) {
	in := time.Date(2026, 11, 21, 12, 0, 0, 123456789, time.FixedZone("x", 3600))
	got := Truncate(in)
	assert.Equal(t, time.UTC, got.Location())
	assert.True(t, got.Equal(time.Date(2026, 11, 21, 11, 0, 0, 123456000, time.UTC)), "Truncate = %v", got)
}

func TestHasTag(t *testing.T) {
	u := User{Tags: []string{"admin", "ops"}}
	assert.True(t, u.HasTag("admin"))
	assert.False(t, u.HasTag("Admin"), "tags compare exactly")
	assert.False(t, User{}.HasTag("admin"))
}

func TestRevokedAndRetired(t *testing.T) {
	assert.False(t, APIKey{}.Revoked())
	assert.True(t, APIKey{RevokedAt: time.Now()}.Revoked())
	assert.False(t, SigningKey{}.Retired())
	assert.True(t, SigningKey{RetiredAt: time.Now()}.Retired())
}

func TestNewIDAt_OrdersByTime(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	prev := NewIDAt(PrefixContact, t0)
	for i := 1; i <= 2000; i++ {
		// Steps of one millisecond and more, up to a century later.
		at := t0.Add(time.Duration(i*i*i) * time.Millisecond)
		id := NewIDAt(PrefixContact, at)
		require.Lessf(t, prev, id, "NewIDAt(%s) sorts before the id of an earlier millisecond", at)
		prev = id
	}
}

func TestNewIDAt_EncodesMilliseconds(t *testing.T) {
	for _, at := range []time.Time{
		time.Unix(0, 0),
		time.Date(2026, 11, 21, 10, 0, 0, 999999999, time.UTC),
		time.Date(2026, 11, 21, 10, 0, 0, 999999999, time.FixedZone("x", -7*3600)),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
	} {
		id := NewIDAt(PrefixAudit, at)
		b, ok := ParseID(PrefixAudit, id)
		require.Truef(t, ok, "ParseID(NewIDAt(%s) = %q)", at, id)
		ms := binary.BigEndian.Uint64(append(make([]byte, 2), b[:6]...))
		assert.Equalf(t, uint64(at.UnixMilli()), ms, "the first 48 bits of NewIDAt(%s)", at)
	}
}

func TestNewIDAt_RandomWithinAMillisecond(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	for range 1000 {
		id := NewIDAt(PrefixRevocation, at)
		assert.Truef(t, strings.HasPrefix(id, "rev_"), "NewIDAt(rev) = %q", id)
		assert.Lenf(t, id, len("rev_")+26, "NewIDAt(rev) = %q", id)
		assert.Falsef(t, seen[id], "NewIDAt repeated %q", id)
		seen[id] = true
	}
}

func TestParseID_RoundTrip(t *testing.T) {
	var zero, ones [IDBytes]byte
	for i := range ones {
		ones[i] = 0xff
	}
	var ids []string
	for _, b := range [][IDBytes]byte{zero, ones} {
		ids = append(ids, FormatID(PrefixUser, b))
	}
	for range 200 {
		ids = append(ids, NewID(PrefixUser), NewIDAt(PrefixUser, time.Now()))
	}
	for _, id := range ids {
		b, ok := ParseID(PrefixUser, id)
		require.Truef(t, ok, "ParseID(%q)", id)
		assert.Equalf(t, id, FormatID(PrefixUser, b), "FormatID(ParseID(%q))", id)
	}
	b, ok := ParseID(PrefixUser, FormatID(PrefixUser, ones))
	require.True(t, ok)
	assert.Equal(t, ones, b, "the random part of an id of all ones")
}

func TestParseID_Refuses(t *testing.T) {
	good := FormatID(PrefixUser, [IDBytes]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	rest := good[len("usr_"):]
	// The last character carries two unused bits; a spelling that differs
	// in them decodes to the same bytes and is refused.
	last := rest[len(rest)-1]
	alias := byte('0')
	for _, c := range []byte("0123456789abcdefghijklmnopqrstuv") {
		if c != last && (strings.IndexByte("0123456789abcdefghijklmnopqrstuv", c)>>2) == (strings.IndexByte("0123456789abcdefghijklmnopqrstuv", last)>>2) {
			alias = c
			break
		}
	}
	for name, id := range map[string]string{
		"empty":                      "",
		"prefix only":                "usr_",
		"another prefix":             "ct_" + rest,
		"no separator":               "usr" + rest,
		"a shorter prefix":           "us_" + rest,
		"one character short":        good[:len(good)-1],
		"one character long":         good + "0",
		"upper case":                 "usr_" + strings.ToUpper(rest),
		"a letter past the alphabet": "usr_w" + rest[1:],
		"padding":                    good + "=",
		"a space":                    "usr_ " + rest[1:],
		"a non-canonical spelling":   good[:len(good)-1] + string(alias),
	} {
		_, ok := ParseID(PrefixUser, id)
		assert.Falsef(t, ok, "ParseID(usr, %q), %s", id, name)
	}
	_, ok := ParseID(PrefixUser, good)
	assert.True(t, ok, "ParseID of the id the cases start from")
}
