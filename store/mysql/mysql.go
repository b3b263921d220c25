package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math"
	neturl "net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/latchkey-dev/latchkey/store"
)

// Store is a [store.Store] on a MySQL or MariaDB database, reached through
// a database/sql pool of github.com/go-sql-driver/mysql connections. It is
// safe for concurrent use, and any number of Stores, in any number of
// processes, may share one database. It also implements
// [store.RevocationWatcher] (by polling) and [store.CheckedContactLister].
type Store struct {
	db             *sql.DB
	log            *slog.Logger
	acquireTimeout time.Duration
	closed         atomic.Bool
	watch          *watcher
	mariaDB        bool
	stmts          stmtCache
	checked        checkedBatcher

	prunePeriod time.Duration
	pruneMu     sync.Mutex
	lastPrune   time.Time // guarded by pruneMu
}

var (
	_ store.Store             = (*Store)(nil)
	_ store.RevocationWatcher = (*Store)(nil)
)

// Open connects to the database named by url, checks that it answers and
// keeps acknowledged commits (see the package documentation), and migrates
// its schema unless opts.NoMigrate is set. It does not create any project;
// callers create them.
//
// url is either a URL
//
//	mysql://user:password@host:port/database?param=value
//
// (port 3306 when omitted; user and password percent-encoded; the
// parameters are the driver's DSN parameters, such as tls=true or
// timeout=5s), or a DSN of github.com/go-sql-driver/mysql,
// user:password@tcp(host:port)/database?param=value. Whatever it says, the
// store sets the options its contract needs: parseTime, loc=UTC, the
// session's time_zone '+00:00', sql_mode TRADITIONAL (strict), the
// utf8mb4_bin connection collation, READ COMMITTED transactions,
// interpolateParams (one round trip per statement), clientFoundRows,
// rejectReadOnly, no multiStatements, innodb_lock_wait_timeout from
// [Options].LockWaitTimeout and, on MariaDB, idle_transaction_timeout from
// [Options].IdleTransactionTimeout.
//
// A nil opts means the defaults documented on [Options].
func Open(ctx context.Context, url string, opts *Options) (*Store, error) {
	o := opts.withDefaults()
	cfg, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 && o.AcquireTimeout > 0 {
		cfg.Timeout = o.AcquireTimeout
	}
	cfg.Logger = driverLogger{o.Logger}
	srv, err := probe(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if srv.flushLog != 1 && !o.AllowNonDurable {
		return nil, fmt.Errorf("mysql: the server's innodb_flush_log_at_trx_commit is %d, not 1: a commit it acknowledges may be lost in a crash (set it to 1, or Options.AllowNonDurable for throwaway data)", srv.flushLog)
	}
	if srv.logBin && srv.syncBinlog != 1 {
		o.Logger.WarnContext(ctx, "mysql: the binary log is on and sync_binlog is not 1: a replica may miss commits the primary acknowledged", "sync_binlog", srv.syncBinlog)
	}
	isolation := "transaction_isolation"
	if srv.mariaDB {
		isolation = "tx_isolation" // MariaDB before 11.1 knows only this name
	}
	cfg.Params[isolation] = "'READ-COMMITTED'"
	cfg.Params["innodb_lock_wait_timeout"] = strconv.Itoa(int(math.Ceil(o.LockWaitTimeout.Seconds())))
	if srv.mariaDB && o.IdleTransactionTimeout > 0 {
		cfg.Params["idle_transaction_timeout"] = strconv.Itoa(int(math.Ceil(o.IdleTransactionTimeout.Seconds())))
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(o.MaxConns)
	db.SetMaxIdleConns(o.MaxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s := &Store{
		db:             db,
		log:            o.Logger,
		acquireTimeout: o.AcquireTimeout,
		prunePeriod:    o.ThrottlePruneInterval,
		mariaDB:        srv.mariaDB,
	}
	if err := s.read(ctx, "connect", func(q querier) error {
		_, err := q.ExecContext(ctx, "DO 1")
		return err
	}); err != nil {
		db.Close()
		return nil, err
	}
	s.watch = newWatcher(s, o.WatchInterval)
	if !o.NoMigrate {
		if err := s.Migrate(ctx); err != nil {
			db.Close()
			return nil, err
		}
	}
	return s, nil
}

// Close stops the revocation watcher, closing the channels of its callers,
// and closes the store's pool. Calls made after Close fail. Close always
// returns nil.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.watch.close()
	s.closeStmts()
	s.db.Close()
	return nil
}

// ParseURL returns the driver configuration Open uses for url (see
// [Open]): the connection the URL or DSN names, with the options the store
// sets. Its errors never quote the URL, which may hold a password.
func ParseURL(url string) (*mysql.Config, error) {
	var cfg *mysql.Config
	if strings.HasPrefix(url, "mysql://") {
		u, err := neturl.Parse(url)
		if err != nil || u.Host == "" || u.Opaque != "" {
			return nil, errors.New("mysql: not a valid mysql://user:password@host:port/database URL")
		}
		host := u.Host
		if u.Port() == "" {
			host += ":3306"
		}
		db := strings.TrimPrefix(u.Path, "/")
		if strings.Contains(db, "/") {
			return nil, errors.New("mysql: the URL's path must be one database name")
		}
		cfg, err = mysql.ParseDSN("tcp(" + host + ")/" + db + "?" + u.RawQuery)
		if err != nil {
			return nil, fmt.Errorf("mysql: URL parameters: %w", err)
		}
		if u.User != nil {
			cfg.User = u.User.Username()
			cfg.Passwd, _ = u.User.Password()
		}
	} else {
		var err error
		cfg, err = mysql.ParseDSN(url)
		if err != nil {
			return nil, errors.New("mysql: not a mysql:// URL nor a valid DSN")
		}
	}
	if cfg.DBName == "" {
		return nil, errors.New("mysql: the URL names no database")
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.InterpolateParams = true
	cfg.MultiStatements = false
	cfg.ClientFoundRows = true
	cfg.RejectReadOnly = true
	cfg.CheckConnLiveness = true
	if err := cfg.Apply(mysql.Charset("utf8mb4", "utf8mb4_bin")); err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	cfg.Params["time_zone"] = "'+00:00'"
	cfg.Params["sql_mode"] = "'TRADITIONAL'"
	return cfg, nil
}

// server is what Open learns of the server before it opens the pool.
type server struct {
	mariaDB    bool
	flushLog   int
	logBin     bool
	syncBinlog int
}

// probe connects once and reads the server's flavour and durability
// settings.
func probe(ctx context.Context, cfg *mysql.Config) (server, error) {
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return server{}, fmt.Errorf("mysql: %w", err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	var version string
	var srv server
	err = db.QueryRowContext(ctx, `SELECT VERSION(), @@innodb_flush_log_at_trx_commit, @@log_bin, @@sync_binlog`).
		Scan(&version, &srv.flushLog, &srv.logBin, &srv.syncBinlog)
	if err != nil {
		return server{}, fmt.Errorf("mysql: connect: %w", wrap("connect", err))
	}
	srv.mariaDB = strings.Contains(strings.ToLower(version), "mariadb")
	return srv, nil
}

// MariaDB reports whether the server is MariaDB (else MySQL).
func (s *Store) MariaDB() bool { return s.mariaDB }

// driverLogger sends the driver's own messages (a connection found broken
// and replaced, say) to the store's logger at Debug: the store reports what
// a call could not get past itself.
type driverLogger struct{ log *slog.Logger }

func (l driverLogger) Print(v ...any) {
	l.log.Debug("mysql: driver", "msg", fmt.Sprint(v...))
}
