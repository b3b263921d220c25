package postgres

import (
	"log/slog"
	"time"
)

// Options configures Open. A nil *Options is valid; every zero field means
// the default documented on it.
type Options struct {
	// Logger receives the store's own messages (applied migrations,
	// pruning failures, the revocation watcher's lost connections). Nil
	// means slog.Default().
	Logger *slog.Logger
	// NoMigrate makes Open skip migrating the schema; the caller then runs
	// [Store.Migrate] itself (for example from a deploy job) before using
	// the store. False (the default) migrates at Open.
	NoMigrate bool
	// MaxConns is the largest number of connections the store's pool
	// opens. Zero means the pool_max_conns parameter of the URL if given,
	// else DefaultMaxConns.
	MaxConns int
	// AcquireTimeout bounds how long a call waits for a connection of the
	// pool (every connection busy, or a new one being made) before it
	// fails with an error matching store.ErrUnavailable. When the URL sets
	// no connect_timeout, it also bounds making one connection. Zero means
	// 10 seconds; a negative value waits as long as the call's context
	// allows, and connecting as long as the operating system does.
	AcquireTimeout time.Duration
	// PipelineConns is the number of connections of the pool on which the
	// read of every authenticated list (ListContactsChecked) is pipelined:
	// each sends the reads that are waiting for it as one batch, so that
	// concurrent reads share round trips (see pipeline.go). Fewer batch
	// more under load; each is one PostgreSQL backend working at a time.
	// Zero means DefaultPipelineConns; a value above the pool's size means
	// the pool's size.
	PipelineConns int
	// WatchConnectTimeout bounds making the revocation watcher's own
	// connection (see [Store.WatchRevocations]), per host tried: dialing,
	// TLS and authentication. Zero means DefaultWatchConnectTimeout (5
	// seconds); it replaces the URL's connect_timeout for that connection.
	WatchConnectTimeout time.Duration
	// WatchListenTimeout bounds how long the revocation watcher waits for
	// the server to answer its LISTEN, and a check of its idle connection,
	// before it takes the connection for lost. Zero means
	// DefaultWatchListenTimeout (5 seconds).
	//
	// Neither timeout changes store.MaxWatchDelay: while the watcher
	// connects, or waits for an answer past a small fraction of that
	// delay, it wakes every waiter at least every half of it, as it does
	// while it has no connection.
	WatchListenTimeout time.Duration
	// ThrottlePruneInterval is how often, at most, AddFailure deletes the
	// throttle rows whose window has ended, measured on the times passed
	// to it. Zero means one minute; a negative value never prunes.
	ThrottlePruneInterval time.Duration
	// IdleInTransactionTimeout is the idle_in_transaction_session_timeout
	// of the store's transactions: the server ends a session that has
	// waited longer than this for the next statement of its open
	// transaction. The store's transactions never wait on their client for
	// more than moments, so only one whose client is gone sits that long:
	// its connection was lost after a statement that locked rows and
	// before its COMMIT, and the server was never told (a network
	// partition, a frozen machine). Until the server ends it, its rows stay
	// locked, and the store's retry of that transaction, and every later
	// write of those rows (a project's feed position among them), waits.
	// Each transaction sets it for itself (SET LOCAL, in the round trip
	// of its BEGIN), so it works behind a pooler in transaction mode and
	// reaches no other client. Zero means DefaultIdleInTransactionTimeout;
	// a negative value sets nothing and leaves the server's setting
	// (PostgreSQL's default is none: such a session lasts until TCP
	// keepalive gives up on its client, two hours by default).
	IdleInTransactionTimeout time.Duration
}

// DefaultIdleInTransactionTimeout is Options.IdleInTransactionTimeout when
// it is zero: far above the moments between two statements of a
// transaction, and short enough that a call waiting for an orphaned
// session's locks still ends within a request's time.
const DefaultIdleInTransactionTimeout = 5 * time.Second

// DefaultMaxConns is the size of the store's pool when neither
// Options.MaxConns nor the URL's pool_max_conns sets it. A commit waits for
// the server's disk, and PostgreSQL flushes the commits that wait together
// in one write, so writes (refresh rotations, above all) scale with the
// connections that can wait at once, well beyond the processor count that
// bounds reads. Sixteen per instance keeps six instances under the server's
// default max_connections of 100.
const DefaultMaxConns = 16

// DefaultPipelineConns is the number of pipelined connections when
// Options.PipelineConns is zero. With 32 concurrent callers on a two-core
// machine shared with PostgreSQL, four served the read fastest of 1, 2, 4,
// 8 and 16 (see docs/design.md): fewer leave PostgreSQL's
// second core idle, more spread the same load over smaller batches.
const DefaultPipelineConns = 4

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	if r.AcquireTimeout == 0 {
		r.AcquireTimeout = 10 * time.Second
	}
	if r.PipelineConns == 0 {
		r.PipelineConns = DefaultPipelineConns
	}
	if r.WatchConnectTimeout == 0 {
		r.WatchConnectTimeout = DefaultWatchConnectTimeout
	}
	if r.WatchListenTimeout == 0 {
		r.WatchListenTimeout = DefaultWatchListenTimeout
	}
	if r.IdleInTransactionTimeout == 0 {
		r.IdleInTransactionTimeout = DefaultIdleInTransactionTimeout
	}
	if r.ThrottlePruneInterval == 0 {
		r.ThrottlePruneInterval = time.Minute
	}
	return r
}
