package store

import "context"

// WritableChecker is an optional capability of a store: a cheap check that
// the database can take a write now, for a health check that takes an
// instance out of a load balancer while it cannot serve writes (its
// database is unreachable, a standby in recovery, or read-only).
//
// Callers discover it with [As] on the store they were given, which also
// finds it behind wrappers:
//
//	if wc, ok := store.As[store.WritableChecker](st); ok { ... }
//
// store/postgres, store/sqlite and store/mysql implement it.
type WritableChecker interface {
	// CheckWritable returns nil when the database can take a write now,
	// and otherwise an error matching ErrUnavailable. It writes nothing,
	// and costs at most one round trip to the database: callers may call
	// it often (a health check), though they should not on every request.
	// The answer holds for the moment it was made: a write made after it
	// may still fail.
	CheckWritable(ctx context.Context) error
}
