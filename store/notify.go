package store

import (
	"context"
	"time"
)

// RevocationWatcher is an optional capability of a store: a wake-up when a
// revocation may have been committed, so that a reader of the revocation
// feed can wait for the next item without reading the feed in a loop. The
// revocation feed's long poll uses it; without it, the feed is read again at
// a fixed interval while a request waits.
//
// Callers discover it with [As] on the store they were given, which also
// finds it behind wrappers:
//
//	if w, ok := store.As[store.RevocationWatcher](st); ok { ... }
type RevocationWatcher interface {
	// WatchRevocations returns a channel that is closed once a revocation
	// (of any project) committed by any handle on the database after the
	// call returned is visible to reads, and in any case within
	// MaxWatchDelay of that commit. It may also be closed earlier, without
	// a revocation: the caller then reads the feed again and watches again.
	// It is closed when ctx ends.
	//
	// The safe usage is therefore: call WatchRevocations, then read the
	// feed; if the read found nothing new, wait for the channel (or a
	// deadline) and start again.
	WatchRevocations(ctx context.Context) <-chan struct{}
}

// MaxWatchDelay bounds how long after a revocation commits a
// RevocationWatcher's channel may stay open.
const MaxWatchDelay = 250 * time.Millisecond
