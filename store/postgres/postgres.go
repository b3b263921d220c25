package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/latchkey-dev/latchkey/store"
)

// Store is a [store.Store] on a PostgreSQL database, reached through a
// pgxpool connection pool. It is safe for concurrent use, and any number of
// Stores, in any number of processes, may share one database.
type Store struct {
	pool *pgxpool.Pool
	log  *slog.Logger

	prunePeriod time.Duration
	pruneMu     sync.Mutex
	lastPrune   time.Time // guarded by pruneMu
}

var _ store.Store = (*Store)(nil)

// Open connects to the PostgreSQL database named by url, a
// postgres://user:password@host:port/database?param=value URL or a
// keyword/value connection string (anything pgxpool.ParseConfig accepts),
// checks that it answers, and migrates its schema unless opts.NoMigrate is
// set. It does not create any project; callers create them.
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
	if o.MaxConns > 0 {
		cfg.MaxConns = int32(o.MaxConns)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	s := &Store{pool: pool, log: o.Logger, prunePeriod: o.ThrottlePruneInterval}
	if !o.NoMigrate {
		if err := s.Migrate(ctx); err != nil {
			pool.Close()
			return nil, err
		}
	}
	return s, nil
}

// Close closes every connection of the store's pool, waiting for those in
// use to be released. Calls made after Close fail. Close always returns nil.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// maxTxAttempts bounds how often inTx runs a transaction that failed with a
// serialization failure or a deadlock.
const maxTxAttempts = 3

// inTx runs fn in a transaction (READ COMMITTED, the server default) and
// commits it if fn returns nil. A transaction that fails with a
// serialization failure or deadlock is run again, up to maxTxAttempts times
// in all, so fn must not keep state across calls.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	var err error
	for range maxTxAttempts {
		err = pgx.BeginFunc(ctx, s.pool, fn)
		if err == nil || !retryable(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// ts returns t as the store keeps it: UTC, truncated to microseconds.
func ts(t time.Time) time.Time { return store.Truncate(t) }

// nullTS returns t as a nullable timestamptz: NULL for the zero time.
func nullTS(t time.Time) pgtype.Timestamptz {
	if t.IsZero() {
		return pgtype.Timestamptz{}
	}
	return pgtype.Timestamptz{Time: ts(t), Valid: true}
}

// fromNullTS returns the time read from a nullable timestamptz in UTC, or
// the zero time for NULL.
func fromNullTS(v pgtype.Timestamptz) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return v.Time.UTC()
}

// checkProject validates a project id argument.
func checkProject(op, projectID string) error {
	if !store.ValidProjectID(projectID) {
		return invalid(op, "invalid project id")
	}
	return nil
}

// checkID validates a non-empty id argument named what.
func checkID(op, what, id string) error {
	if id == "" {
		return invalid(op, "empty "+what)
	}
	return nil
}
