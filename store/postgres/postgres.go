package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	neturl "net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/latchkey-dev/latchkey/store"
)

// Store is a [store.Store] on a PostgreSQL database, reached through a
// pgxpool connection pool. It is safe for concurrent use, and any number of
// Stores, in any number of processes, may share one database. It also
// implements [store.RevocationWatcher].
type Store struct {
	pool           *pgxpool.Pool
	log            *slog.Logger
	acquireTimeout time.Duration
	beginSQL       string // begins every transaction of inTx
	closed         atomic.Bool
	watch          *watcher
	pipe           *pipeline
	kept           keptRecords
	ident          identity

	prunePeriod time.Duration
	pruneMu     sync.Mutex
	lastPrune   time.Time // guarded by pruneMu
}

var (
	_ store.Store             = (*Store)(nil)
	_ store.RevocationWatcher = (*Store)(nil)
)

// Open connects to the PostgreSQL database named by url, a
// postgres://user:password@host:port/database?param=value URL or a
// keyword/value connection string (anything pgxpool.ParseConfig accepts),
// checks that it answers, and migrates its schema unless opts.NoMigrate is
// set. It does not create any project; callers create them.
//
// The pool checks every idle connection before handing it out, without a
// round trip (see idleConnOK), so that connections the server dropped (a
// restart, a failover, pg_terminate_backend) are replaced instead of
// failing a call.
//
// A nil opts means the defaults documented on [Options].
func Open(ctx context.Context, url string, opts *Options) (*Store, error) {
	o := opts.withDefaults()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgconn redacts the password from the connection string it quotes.
		return nil, fmt.Errorf("postgres: parse connection url: %w", err)
	}
	if o.MaxConns < 0 || o.MaxConns > math.MaxInt32 {
		return nil, fmt.Errorf("postgres: Options.MaxConns %d out of range", o.MaxConns)
	}
	if o.WatchConnectTimeout < 0 || o.WatchListenTimeout < 0 {
		return nil, fmt.Errorf("postgres: Options.WatchConnectTimeout and WatchListenTimeout must not be negative")
	}
	if o.PipelineConns < 0 {
		return nil, fmt.Errorf("postgres: Options.PipelineConns %d out of range", o.PipelineConns)
	}
	switch {
	case o.MaxConns > 0:
		cfg.MaxConns = int32(o.MaxConns)
	case !setsPoolMaxConns(url):
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.ConnConfig.ConnectTimeout == 0 && o.AcquireTimeout > 0 {
		// Without a bound, a dial to a server that accepts and never
		// answers (a network partition) holds a slot of the pool for good.
		cfg.ConnConfig.ConnectTimeout = o.AcquireTimeout
	}
	cfg.PrepareConn = func(_ context.Context, c *pgx.Conn) (bool, error) {
		// false: the pool destroys the connection and takes another.
		return idleConnOK(c), nil
	}
	s := &Store{
		log:            o.Logger,
		acquireTimeout: o.AcquireTimeout,
		beginSQL:       beginSQL(o.IdleInTransactionTimeout),
		prunePeriod:    o.ThrottlePruneInterval,
	}
	s.watch = newWatcher(cfg.ConnConfig, o.Logger, o.WatchConnectTimeout, o.WatchListenTimeout)
	// Every connection of the pool reads the database's identity into its
	// session (see identity.go).
	cfg.AfterConnect = s.afterConnect
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect: %w", wrap("connect", err))
	}
	s.pool = pool
	if !o.NoMigrate {
		if err := s.Migrate(ctx); err != nil {
			pool.Close()
			return nil, err
		}
	}
	s.pipe = newPipeline(s, min(o.PipelineConns, int(cfg.MaxConns)))
	return s, nil
}

// Close stops the revocation watcher, closing the channels of its callers,
// and closes every connection of the store's pool, waiting for those in use
// to be released. Calls made after Close fail. Close always returns nil.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.watch.close()
	s.pipe.close()
	s.pool.Close()
	return nil
}

// setsPoolMaxConns reports whether the connection string connString (a URL
// or keyword/value pairs) gives pool_max_conns.
func setsPoolMaxConns(connString string) bool {
	if strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://") {
		u, err := neturl.Parse(connString)
		return err == nil && u.Query().Has("pool_max_conns")
	}
	for _, f := range strings.Fields(connString) {
		if k, _, ok := strings.Cut(f, "="); ok && strings.TrimSpace(k) == "pool_max_conns" {
			return true
		}
	}
	return false
}

// rowScanner is a row to scan: a pgx.Row or pgx.Rows.
type rowScanner interface {
	Scan(dest ...any) error
}
