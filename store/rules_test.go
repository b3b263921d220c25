package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

func TestDecideRotation(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	live := store.RefreshFamily{ID: "rf_1", Generation: 3, IssuedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	p := store.RotateParams{Now: t0.Add(5 * time.Second), TTL: time.Hour, ReuseWindow: 10 * time.Second}
	with := func(f func(*store.RotationState)) store.RotationState {
		s := store.RotationState{Family: live, RotatedAt: t0}
		f(&s)
		return s
	}
	for _, c := range []struct {
		name string
		s    store.RotationState
		gen  int64
		p    store.RotateParams
		step store.RotationStep
		err  error
	}{
		{"current", with(func(*store.RotationState) {}), 3, p, store.RotateNext, nil},
		{"predecessor in the window", with(func(*store.RotationState) {}), 2, p, store.RotateReuse, nil},
		{"predecessor at the window's end", with(func(*store.RotationState) {}), 2,
			store.RotateParams{Now: t0.Add(10 * time.Second), TTL: time.Hour, ReuseWindow: 10 * time.Second}, store.RotateReuse, nil},
		{"predecessor a microsecond after the window", with(func(*store.RotationState) {}), 2,
			store.RotateParams{Now: t0.Add(10*time.Second + time.Microsecond), TTL: time.Hour, ReuseWindow: 10 * time.Second}, store.RotateReplay, nil},
		{"predecessor with no window", with(func(*store.RotationState) {}), 2,
			store.RotateParams{Now: p.Now, TTL: time.Hour}, store.RotateReplay, nil},
		{"predecessor never rotated", with(func(s *store.RotationState) { s.RotatedAt = time.Time{} }), 2, p, store.RotateReplay, nil},
		{"older generation", with(func(*store.RotationState) {}), 1, p, store.RotateReplay, nil},
		{"generation above", with(func(*store.RotationState) {}), 4, p, 0, store.ErrNotFound},
		{"revoked", with(func(s *store.RotationState) { s.Family.RevokedAt = t0 }), 3, p, 0, store.ErrRevoked},
		{"disabled user, whatever the family", with(func(s *store.RotationState) {
			s.UserDisabled, s.Family.RevokedAt = true, t0
		}), 9, p, 0, store.ErrDisabled},
		{"current expired", with(func(s *store.RotationState) { s.Family.ExpiresAt = p.Now }), 3, p, 0, store.ErrExpired},
		{"current at its end", with(func(s *store.RotationState) { s.Family.EndsAt = p.Now }), 3, p, 0, store.ErrExpired},
		{"reuse once ended", with(func(s *store.RotationState) { s.Family.EndsAt = p.Now }), 2, p, 0, store.ErrExpired},
		{"replay once ended", with(func(s *store.RotationState) { s.Family.EndsAt = p.Now }), 1, p, store.RotateReplay, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			step, err := store.DecideRotation(c.s, c.gen, c.p)
			if c.err != nil {
				require.ErrorIs(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.step, step)
		})
	}
}

func TestSuccessorExpiry(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p := store.RotateParams{Now: t0.Add(time.Nanosecond * 1500), TTL: time.Hour}
	assert.Equal(t, t0.Add(time.Hour+time.Microsecond), store.SuccessorExpiry(store.RefreshFamily{}, p), "truncated to microseconds")
	ends := t0.Add(time.Minute)
	assert.Equal(t, ends, store.SuccessorExpiry(store.RefreshFamily{EndsAt: ends}, p), "the session's end, earlier")
	assert.Equal(t, t0.Add(time.Hour+time.Microsecond), store.SuccessorExpiry(store.RefreshFamily{EndsAt: t0.Add(2 * time.Hour)}, p))
}

func TestHighWater(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	var none store.HighWater
	assert.Equal(t, t0, none.Place(t0, "a"), "no item yet: as given")
	h := store.HighWater{At: t0, ID: "m", Set: true}
	assert.Equal(t, t0.Add(time.Second), h.Place(t0.Add(time.Second), "a"), "later: as given")
	assert.Equal(t, t0, h.Place(t0, "n"), "same time, greater id: as given")
	assert.Equal(t, t0.Add(time.Microsecond), h.Place(t0, "m"), "same position: a microsecond later")
	assert.Equal(t, t0, h.Place(t0.Add(-time.Hour), "z"), "earlier, greater id: raised to the mark")
	assert.Equal(t, t0.Add(time.Microsecond), h.Place(t0.Add(-time.Hour), "a"), "earlier, smaller id: just past the mark")
	// Byte order, not case-insensitive order.
	assert.True(t, h.After(t0, "n") && !h.After(t0, "M"), "ids compared byte by byte")
	assert.Equal(t, store.HighWater{At: t0.Add(time.Second), ID: "a", Set: true}, h.Raise(t0.Add(time.Second), "a"))
	assert.Equal(t, h, h.Raise(t0, "a"), "an earlier position leaves it")
	assert.Equal(t, store.HighWater{At: t0, ID: "a", Set: true}, none.Raise(t0, "a"))
}
