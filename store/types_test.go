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

// TestWindowAt: a window is open while its start is after now minus the
// window, at microsecond precision, and ends at its start plus the window.
func TestWindowAt(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	const window = time.Minute
	for _, c := range []struct {
		name  string
		count int
		now   time.Time
		want  ThrottleWindow
	}{
		{"open", 3, start.Add(time.Second), ThrottleWindow{Count: 3, ResetAt: start.Add(window)}},
		{"last microsecond", 3, start.Add(window - time.Microsecond), ThrottleWindow{Count: 3, ResetAt: start.Add(window)}},
		{"ended at its end", 3, start.Add(window), ThrottleWindow{}},
		{"ended, nanoseconds ignored", 3, start.Add(window + 999*time.Nanosecond), ThrottleWindow{}},
		{"no failures", 0, start, ThrottleWindow{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := WindowAt(c.count, start, c.now, window); got != c.want {
				t.Errorf("WindowAt(%d, %v, %v, %v) = %+v, want %+v", c.count, start, c.now, window, got, c.want)
			}
		})
	}
}
