package store

import (
	"fmt"
	"time"
)

// RotationStep is what RotateRefresh does with a presented generation, as
// DecideRotation decides it.
type RotationStep int

const (
	// RotateNext: the presented generation is current and live; it becomes
	// its successor (issued at p.Now, expiring at SuccessorExpiry).
	RotateNext RotationStep = iota + 1
	// RotateReuse: the presented generation is the current one's
	// predecessor, rotated within the reuse window, and the family is
	// live; nothing changes and the result is the current family with
	// Reused true.
	RotateReuse
	// RotateReplay: any other earlier generation, or the predecessor after
	// the window; the family is revoked at p.Now (with its feed item) and
	// the error matches ErrReplayed.
	RotateReplay
)

// RotationState is a refresh family as a rotation read it: the family, the
// time its current generation was issued by a rotation (the zero time when
// it was never rotated), and whether its user is disabled (or gone).
type RotationState struct {
	Family       RefreshFamily
	RotatedAt    time.Time
	UserDisabled bool
}

// DecideRotation is RefreshStore.RotateRefresh's rule, written once for
// every backend: given the family's state as the rotating transaction
// read it, the presented generation gen and p, it returns the step to
// take, or the error to return, whose cause matches ErrDisabled (the
// user is disabled, whatever the family's state), ErrRevoked (a revoked
// family), ErrNotFound (gen above the current one) or ErrExpired (the
// current generation has expired or p.Now is at or past EndsAt; for gen
// current, or a reuse within the window). Times are compared at
// microsecond precision, as stored. A backend runs the step's SQL (its
// compare-and-swap on the generation keeps the rule across handles) and
// wraps the error with its operation.
func DecideRotation(s RotationState, gen int64, p RotateParams) (RotationStep, error) {
	f, now := s.Family, Truncate(p.Now)
	switch {
	case s.UserDisabled:
		return 0, fmt.Errorf("user disabled: %w", ErrDisabled)
	case !f.RevokedAt.IsZero():
		return 0, fmt.Errorf("session revoked: %w", ErrRevoked)
	case gen > f.Generation:
		return 0, fmt.Errorf("generation %d above the current one: %w", gen, ErrNotFound)
	case gen == f.Generation:
		if !f.Live(now) {
			return 0, fmt.Errorf("session expired: %w", ErrExpired)
		}
		return RotateNext, nil
	case gen == f.Generation-1 && withinReuseWindow(s.RotatedAt, now, p.ReuseWindow):
		if !f.Live(now) {
			return 0, fmt.Errorf("session expired: %w", ErrExpired)
		}
		return RotateReuse, nil
	}
	return RotateReplay, nil
}

// withinReuseWindow reports whether a rotation at rotatedAt (the zero time
// for none) happened no more than window before now, at microsecond
// precision. A zero window makes every reuse a replay.
func withinReuseWindow(rotatedAt, now time.Time, window time.Duration) bool {
	if window <= 0 || rotatedAt.IsZero() {
		return false
	}
	return Truncate(now).Sub(Truncate(rotatedAt)) <= window
}

// SuccessorExpiry returns when the successor a rotation of f issues
// expires: p.Now plus p.TTL, or f.EndsAt if that is earlier, at microsecond
// precision.
func SuccessorExpiry(f RefreshFamily, p RotateParams) time.Time {
	exp := Truncate(p.Now.Add(p.TTL))
	if !f.EndsAt.IsZero() && f.EndsAt.Before(exp) {
		return Truncate(f.EndsAt)
	}
	return exp
}
