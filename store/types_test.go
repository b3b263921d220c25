package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRefreshFamily_Live(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	live := RefreshFamily{ExpiresAt: now.Add(time.Hour)}
	cases := []struct {
		name string
		f    func(RefreshFamily) RefreshFamily
		want bool
	}{
		{"unexpired, no end", func(f RefreshFamily) RefreshFamily { return f }, true},
		{"revoked", func(f RefreshFamily) RefreshFamily { f.RevokedAt = now.Add(-time.Hour); return f }, false},
		{"revoked later than now", func(f RefreshFamily) RefreshFamily { f.RevokedAt = now.Add(time.Minute); return f }, false},
		{"expiring at now", func(f RefreshFamily) RefreshFamily { f.ExpiresAt = now; return f }, false},
		{"expiring a nanosecond after now", func(f RefreshFamily) RefreshFamily { f.ExpiresAt = now.Add(1); return f }, true},
		{"ending at now", func(f RefreshFamily) RefreshFamily { f.EndsAt = now; return f }, false},
		{"ending a nanosecond after now", func(f RefreshFamily) RefreshFamily { f.EndsAt = now.Add(1); return f }, true},
		{"ended", func(f RefreshFamily) RefreshFamily { f.EndsAt = now.Add(-time.Hour); return f }, false},
	}
	for _, c := range cases {
		assert.Equalf(t, c.want, c.f(live).Live(now), "Live of a family %s", c.name)
	}
}

func TestUser_Disabled(t *testing.T) {
	assert.False(t, User{}.Disabled())
	assert.True(t, User{DisabledAt: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}.Disabled())
}
