// Package audit records who did what in a project: the audit log of the
// console's sign-ins, API key and signing key changes, user changes, logouts
// and refresh-token replays.
//
// The actor of a request travels in its context: the console puts the
// signed-in administrator there, the command line [CLI], an API request
// the caller it authenticated. The services that act (package keys,
// package identity, the console) read it and append an entry to the store
// through a [Log] after each action succeeds.
//
//	ctx = audit.NewContext(ctx, audit.Actor{ID: user.ID, ClientAddr: addr})
//	...
//	log.Record(ctx, project, store.ActionAPIKeyRevoke, keyID)
//
// An entry never holds a secret: actors and targets are ids, the client
// address is the one the request came from, and a failed sign-in of an
// unknown account has no actor at all.
package audit

import (
	"context"
	"log/slog"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

// Actor is who acts, and from where.
type Actor struct {
	// ID is a user id, an API key id, store.ActorCLI, or "" for nobody
	// authenticated.
	ID string
	// ClientAddr is the client address of the request, or "".
	ClientAddr string
}

// CLI is the actor of the command line.
var CLI = Actor{ID: store.ActorCLI}

type ctxKey struct{}

// NewContext returns a copy of ctx that carries a.
func NewContext(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, ctxKey{}, a)
}

// FromContext returns the actor NewContext stored in ctx, or the zero Actor.
func FromContext(ctx context.Context) Actor {
	a, _ := ctx.Value(ctxKey{}).(Actor)
	return a
}

// Options tunes a Log. A nil *Options and every zero field mean the
// documented default.
type Options struct {
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// Logger receives the entries that could not be stored, at Error. Nil
	// means slog.Default().
	Logger *slog.Logger
}

// Log appends entries to the audit log of a store. A nil *Log records
// nothing, so that a part built without one works the same.
type Log struct {
	st     store.AuditStore
	now    func() time.Time
	logger *slog.Logger
}

// New returns a Log that appends to st. It panics if st is nil.
func New(st store.AuditStore, opts *Options) *Log {
	if st == nil {
		panic("audit: New with a nil store")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Log{st: st, now: o.Now, logger: o.Logger}
}

// Record appends the entry for action on target in the project, by the
// actor of ctx, now. The action has happened: a failure to store the entry
// does not undo it, and is logged at Error (without anything secret).
func (l *Log) Record(ctx context.Context, projectID, action, target string) {
	if l == nil {
		return
	}
	a := FromContext(ctx)
	e := store.AuditEntry{
		ID:         store.NewID(store.PrefixAudit),
		ProjectID:  projectID,
		At:         l.now(),
		Actor:      a.ID,
		Action:     action,
		Target:     target,
		ClientAddr: a.ClientAddr,
	}
	// The entry is written even if the request that caused it is being
	// cancelled: the action it records has happened.
	if err := l.st.AppendAudit(context.WithoutCancel(ctx), e); err != nil {
		l.logger.ErrorContext(ctx, "audit: recording an entry failed",
			"project", projectID, "action", action, "target", target, "actor", a.ID, "err", err)
	}
}
