package latchkey

import (
	"context"
	"errors"
	"time"

	"github.com/latchkey-dev/latchkey/keys"
)

// Pruning defaults.
const (
	// DefaultPruneInterval is how often the store is pruned in the
	// background.
	DefaultPruneInterval = 10 * time.Minute
	// DefaultAuditRetention is how long audit entries are kept.
	DefaultAuditRetention = 365 * 24 * time.Hour
	// endedSessionGrace is how long an ended or expired session's record
	// is kept before it is pruned (its tokens are refused all the same:
	// a pruned session is not found).
	endedSessionGrace = 24 * time.Hour
)

// Prune deletes what the store no longer needs, once: sessions that ended
// or expired more than a day ago (their tokens stay refused), session
// items of the revocation feed older than a login token's lifetime and the
// largest leeway (no token they could refuse is still valid), throttling
// windows that have ended, audit entries older than
// Options.AuditRetention, and console sessions past the console's idle
// timeout or maximum lifetime (see console.Handler.Prune; not with
// NoConsole, which leaves them to the instances that serve the console).
// It runs in the background every Options.PruneInterval; a host may call
// it too.
func (l *Latchkey) Prune(ctx context.Context) error {
	now := l.now()
	_, e1 := l.st.PruneRefreshFamilies(ctx, now.Add(-endedSessionGrace))
	_, e2 := l.st.PruneSessionRevocations(ctx, now.Add(-keys.LoginTokenTTL-keys.MaxLeeway))
	_, e3 := l.st.PruneThrottle(ctx, now)
	_, e4 := l.st.PruneAudit(ctx, now.Add(-l.retention))
	var e5 error
	if l.consoleUI != nil {
		_, e5 = l.consoleUI.Prune(ctx)
	}
	return errors.Join(e1, e2, e3, e4, e5)
}

// startPruning runs Prune every interval (DefaultPruneInterval for zero,
// never for a negative interval) until Close.
func (l *Latchkey) startPruning(interval time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	l.stop, l.stopped = cancel, make(chan struct{})
	if interval < 0 {
		close(l.stopped)
		return
	}
	if interval == 0 {
		interval = DefaultPruneInterval
	}
	go func() {
		defer close(l.stopped)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := l.Prune(ctx); err != nil && ctx.Err() == nil {
					l.logger.WarnContext(ctx, "pruning the store", "err", err)
				}
			}
		}
	}()
}
