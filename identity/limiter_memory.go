package identity

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// MemoryLimiter is a Limiter that keeps its counts in the process's memory,
// at most MaxEntries keys. Several server instances each keep their own
// counts; use a StoreLimiter to throttle them as one.
type MemoryLimiter struct {
	opts LimiterOptions

	mu      sync.Mutex
	entries map[string]*list.Element // of *memoryEntry
	order   *list.List               // by window start, oldest first
}

type memoryEntry struct {
	key   string
	count int
	start time.Time
}

var _ Limiter = (*MemoryLimiter)(nil)

// NewMemoryLimiter returns a MemoryLimiter. A nil opts means the defaults.
func NewMemoryLimiter(opts *LimiterOptions) *MemoryLimiter {
	return &MemoryLimiter{
		opts:    opts.withDefaults(),
		entries: make(map[string]*list.Element),
		order:   list.New(),
	}
}

// Check implements Limiter.
func (l *MemoryLimiter) Check(_ context.Context, account, address string, inFlight InFlight) (time.Duration, error) {
	now := l.opts.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pruneLocked(now)
	wait := l.waitLocked(account, inFlight.Account, inFlight.AccountLanding, l.opts.AccountLimit, now)
	if address != "" {
		wait = max(wait, l.waitLocked(address, inFlight.Address, inFlight.AddressLanding, l.opts.AddressLimit, now))
	}
	return wait, nil
}

// Failure implements Limiter.
func (l *MemoryLimiter) Failure(_ context.Context, account, address string) error {
	now := l.opts.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pruneLocked(now)
	l.addLocked(account, now)
	if address != "" {
		l.addLocked(address, now)
	}
	return nil
}

// Success implements Limiter.
func (l *MemoryLimiter) Success(_ context.Context, account string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.entries[account]; ok {
		l.order.Remove(el)
		delete(l.entries, account)
	}
	return nil
}

// Len returns the number of keys the limiter holds, at most MaxEntries.
func (l *MemoryLimiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

func (l *MemoryLimiter) waitLocked(key string, pending, landing, limit int, now time.Time) time.Duration {
	count, reset := 0, time.Time{}
	if el, ok := l.entries[key]; ok {
		e := el.Value.(*memoryEntry)
		count, reset = e.count, e.start.Add(l.opts.Window)
	}
	return retryAfter(count, pending, landing, limit, reset, now, l.opts.Window)
}

func (l *MemoryLimiter) addLocked(key string, now time.Time) {
	if el, ok := l.entries[key]; ok {
		e := el.Value.(*memoryEntry)
		if now.Before(e.start.Add(l.opts.Window)) {
			e.count++
			return
		}
		e.count, e.start = 1, now
		l.order.MoveToBack(el)
		return
	}
	for len(l.entries) >= l.opts.MaxEntries {
		l.evictLocked(l.order.Front())
	}
	l.entries[key] = l.order.PushBack(&memoryEntry{key: key, count: 1, start: now})
}

// pruneLocked drops windows that have ended, oldest first.
func (l *MemoryLimiter) pruneLocked(now time.Time) {
	for el := l.order.Front(); el != nil; el = l.order.Front() {
		if now.Before(el.Value.(*memoryEntry).start.Add(l.opts.Window)) {
			return
		}
		l.evictLocked(el)
	}
}

func (l *MemoryLimiter) evictLocked(el *list.Element) {
	l.order.Remove(el)
	delete(l.entries, el.Value.(*memoryEntry).key)
}
