package store

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
