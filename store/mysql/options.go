package mysql

import (
	"log/slog"
	"time"
)

// Options configures Open. A nil *Options is valid; every zero field means
// the default documented on it.
type Options struct {
	// Logger receives the store's own messages (applied migrations,
	// pruning failures, the revocation watcher's failing polls). Nil means
	// slog.Default().
	Logger *slog.Logger
	// NoMigrate makes Open skip migrating the schema; the caller then runs
	// [Store.Migrate] itself before using the store. False (the default)
	// migrates at Open.
	NoMigrate bool
	// MaxConns is the largest number of connections the store's pool
	// opens. Zero means DefaultMaxConns.
	MaxConns int
	// AcquireTimeout bounds how long a call waits for a connection of the
	// pool (every connection busy, or a new one being made) before it
	// fails with an error matching store.ErrUnavailable. When the URL sets
	// no timeout parameter, it also bounds dialling one connection. Zero
	// means 10 seconds; a negative value waits as long as the call's
	// context allows.
	AcquireTimeout time.Duration
	// LockWaitTimeout is the connections' innodb_lock_wait_timeout, rounded
	// up to whole seconds: how long a statement waits for a row lock before
	// it fails (and the store retries it, or returns an error matching
	// store.ErrUnavailable). Zero means 10 seconds.
	LockWaitTimeout time.Duration
	// IdleTransactionTimeout is, on MariaDB, the connections'
	// idle_transaction_timeout, rounded up to whole seconds: the server
	// ends a session that has waited longer than this for the next
	// statement of its open transaction. The store's transactions never
	// wait on their client for more than moments, so only one whose client
	// is gone sits that long: its connection was lost after a statement
	// that locked rows and before its COMMIT, and the server was never
	// told (a network partition, a frozen machine). Until the server ends
	// it, its rows stay locked, and the store's retry of that transaction,
	// and every later write of those rows, waits. Zero means
	// DefaultIdleTransactionTimeout; a negative value leaves the server's
	// setting (MariaDB's default is none). MySQL has no such setting: there
	// such a session lasts until the server's wait_timeout (eight hours by
	// default), which an operator may lower.
	IdleTransactionTimeout time.Duration
	// AllowNonDurable lets Open accept a server whose
	// innodb_flush_log_at_trx_commit is not 1, where a commit the server
	// acknowledged may be lost when the machine crashes (a revoked key
	// valid again, a used refresh token usable again). False (the default)
	// refuses such a server. Set it only for tests or throwaway data.
	AllowNonDurable bool
	// ThrottlePruneInterval is how often, at most, AddFailure deletes the
	// throttle rows whose window has ended, measured on the times passed
	// to it. Zero means one minute; a negative value never prunes.
	ThrottlePruneInterval time.Duration
	// WatchInterval is how often the revocation watcher polls the
	// database while anybody waits (see [Store.WatchRevocations]). Zero
	// means DefaultWatchInterval; it is capped so that a wake-up comes
	// within store.MaxWatchDelay.
	WatchInterval time.Duration
}

// DefaultIdleTransactionTimeout is Options.IdleTransactionTimeout when it
// is zero: far above the moments between two statements of a transaction,
// and short enough that a call waiting for an orphaned session's locks
// still ends within a request's time.
const DefaultIdleTransactionTimeout = 5 * time.Second

// DefaultMaxConns is the size of the store's pool when Options.MaxConns is
// zero. InnoDB groups the log flushes of commits that wait together, so
// writes scale with the connections that can wait at once; sixteen per
// instance keeps nine instances under the server's default max_connections
// of 151.
const DefaultMaxConns = 16

// DefaultWatchInterval is the revocation watcher's poll interval when
// Options.WatchInterval is zero: a poll is one covering-index scan of the
// projects table, and a wake-up comes at most about two intervals after a
// commit (a poll that began just before it misses it; the next one sees it),
// inside store.MaxWatchDelay.
const DefaultWatchInterval = 50 * time.Millisecond

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	if r.MaxConns <= 0 {
		r.MaxConns = DefaultMaxConns
	}
	if r.AcquireTimeout == 0 {
		r.AcquireTimeout = 10 * time.Second
	}
	if r.LockWaitTimeout <= 0 {
		r.LockWaitTimeout = 10 * time.Second
	}
	if r.IdleTransactionTimeout == 0 {
		r.IdleTransactionTimeout = DefaultIdleTransactionTimeout
	}
	if r.ThrottlePruneInterval == 0 {
		r.ThrottlePruneInterval = time.Minute
	}
	if r.WatchInterval <= 0 {
		r.WatchInterval = DefaultWatchInterval
	}
	r.WatchInterval = min(r.WatchInterval, maxWatchInterval)
	return r
}
