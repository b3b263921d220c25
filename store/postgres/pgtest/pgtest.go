// Package pgtest gives tests a fresh PostgreSQL database of their own, on
// the server named by the LATCHKEY_TEST_POSTGRES environment variable, or
// else on the conventional local server (LocalURL) if one answers.
//
// # Usage
//
//	func TestSomething(t *testing.T) {
//		url := pgtest.NewDatabase(t) // skips or fails when there is no server
//		st, err := postgres.Open(t.Context(), url, nil)
//		...
//	}
//
// A long suite that needs a fresh, migrated database for each of many tests
// takes them from [NewDatabases] instead, which copies one migrated once,
// makes each ahead of its test and drops it in the background.
//
// Without LATCHKEY_TEST_POSTGRES, and with no local server answering at
// LocalURL, a test skips with a message, unless the CI environment variable
// is set: in CI a missing or unreachable server fails the test, so that
// nothing is silently skipped there.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvURL is the environment variable naming the test server: a URL such as
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable, whose user
// may create and drop databases.
const EnvURL = "LATCHKEY_TEST_POSTGRES"

// EnvSerializable is the environment variable that, set to any value, adds
// the serializable repeat of the long suites (see [Isolations]). It is not
// set under the README's test command, which must stay short; CI sets it in
// a run of its own.
const EnvSerializable = "LATCHKEY_TEST_POSTGRES_SERIALIZABLE"

// Isolation names a way of making test databases: with the server's
// default isolation, or with default_transaction_isolation serializable.
type Isolation struct {
	Name  string
	alter []string // ALTER DATABASE name ... run on each
}

// Databases returns a source of fresh databases in this isolation for the
// tests under t: copies of one that prepare, if not nil, readied once (see
// [NewDatabases]).
func (i Isolation) Databases(t testing.TB, prepare func(ctx context.Context, url string) error) *Databases {
	t.Helper()
	return newDatabases(t, i.alter, prepare)
}

// Isolations returns the isolations a long suite runs in: READ COMMITTED
// always, and serializable too when EnvSerializable is set.
func Isolations() []Isolation {
	is := []Isolation{{Name: "ReadCommitted"}}
	if os.Getenv(EnvSerializable) != "" {
		is = append(is, Isolation{Name: "Serializable", alter: serializable})
	}
	return is
}

// serializable makes every transaction on a database SERIALIZABLE.
var serializable = []string{"SET default_transaction_isolation TO 'serializable'"}

// DatabasePrefix starts the name of every database NewDatabase creates.
const DatabasePrefix = "latchkey_test_"

// adminTimeout bounds creating or dropping one database.
const adminTimeout = time.Minute

// LocalURL is the conventional local server, tried when
// LATCHKEY_TEST_POSTGRES is unset: user postgres on 127.0.0.1:5432 with
// trust authentication.
const LocalURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable&connect_timeout=2"

// localAnswers is whether LocalURL answered, asked once per test binary.
var localAnswers = sync.OnceValue(func() bool { return exec(LocalURL, "SELECT 1") == nil })

// AdminURL returns the URL in LATCHKEY_TEST_POSTGRES or, when it is unset,
// LocalURL if a server answers there. Otherwise it skips t, or fails t if
// the CI environment variable is set.
func AdminURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	if localAnswers() {
		return LocalURL
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("pgtest: %s is not set and no server answers at %s, and CI is set: PostgreSQL tests must run in CI", EnvURL, LocalURL)
	}
	t.Skipf("pgtest: no PostgreSQL: set %s to a server's URL, or run one at %s", EnvURL, LocalURL)
	return ""
}

// NewDatabase creates an empty database named DatabasePrefix plus random
// hex on the server of [AdminURL], registers a t.Cleanup that drops it
// (WITH (FORCE), closing any connection left open), and returns a
// connection URL for it. It skips t as AdminURL does, and fails t when the
// server cannot be reached or the database cannot be created.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return newDatabase(t, nil)
}

// NewSerializableDatabase is [NewDatabase] for a database whose
// default_transaction_isolation is serializable (ALTER DATABASE ... SET), so
// that every transaction on it, including each single statement, runs
// SERIALIZABLE and fails with serialization failures (40001) under
// contention, as on the PostgreSQL-compatible distributed databases.
func NewSerializableDatabase(t testing.TB) string {
	t.Helper()
	return newDatabase(t, serializable)
}

// SetReadOnly makes the sessions opened from now on to the database of
// dbURL (a URL [NewDatabase] returned) start read-only, when readOnly is
// true, as every session of a hot standby is: every write fails with
// SQLSTATE 25006 (read_only_sql_transaction), and transaction_read_only
// reads on. It sets default_transaction_read_only on the database (ALTER
// DATABASE ... SET), or resets it when readOnly is false; sessions already
// open keep their setting. It fails t when the database cannot be altered.
func SetReadOnly(t testing.TB, dbURL string, readOnly bool) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dbURL)
	if err != nil {
		t.Fatalf("pgtest: SetReadOnly: not a valid connection string")
	}
	if !strings.HasPrefix(cfg.Database, DatabasePrefix) {
		t.Fatalf("pgtest: SetReadOnly: %q is not a database NewDatabase made", cfg.Database)
	}
	sql := "ALTER DATABASE " + cfg.Database + " RESET default_transaction_read_only"
	if readOnly {
		sql = "ALTER DATABASE " + cfg.Database + " SET default_transaction_read_only = on"
	}
	if err := exec(AdminURL(t), sql); err != nil {
		t.Fatalf("pgtest: SetReadOnly: %v", err)
	}
}

// newDatabase creates the database and runs ALTER DATABASE name with each
// of alter.
func newDatabase(t testing.TB, alter []string) string {
	t.Helper()
	admin := AdminURL(t)
	strategy, err := copyStrategy(admin)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	name, dbURL, err := create(admin, strategy, alter)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := drop(admin, name); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return dbURL
}

// create creates a database named DatabasePrefix plus random hex on the
// server of admin, with the options of CREATE DATABASE in with (such as
// "TEMPLATE t STRATEGY FILE_COPY"; without TEMPLATE it is a copy of
// template1), runs ALTER DATABASE name
// with each of alter (dropping the database if one fails), and returns its
// name and URL.
func create(admin, with string, alter []string) (name, dbURL string, err error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	name = DatabasePrefix + hex.EncodeToString(b[:])
	dbURL, err = withDatabase(admin, name)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", EnvURL, err)
	}
	if err := exec(admin, strings.TrimSpace("CREATE DATABASE "+name+" "+with)); err != nil {
		return "", "", fmt.Errorf("create database %s on the server of %s: %w", name, EnvURL, err)
	}
	for _, a := range alter {
		if err := exec(admin, "ALTER DATABASE "+name+" "+a); err != nil {
			_ = drop(admin, name)
			return "", "", fmt.Errorf("alter database %s: %w", name, err)
		}
	}
	return name, dbURL, nil
}

// drop drops the database name, closing any connection left open.
func drop(admin, name string) error {
	if err := exec(admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// exec runs one statement on the admin URL, on a connection of its
// adminPool.
func exec(admin, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	pool, err := adminPool(admin)
	if err != nil {
		return err
	}
	_, err = pool.Exec(ctx, sql)
	return err
}

// adminPools holds, for each admin URL, the function that opens its pool
// once (adminPool).
var adminPools sync.Map // admin URL -> func() (*pgxpool.Pool, error)

// adminPool returns the pool of connections to admin that exec uses, opened
// on the first call and kept for the rest of the test binary. A suite
// creates and drops hundreds of databases, and a connection of its own for
// each statement would cost PostgreSQL a new process every time. Its
// statements go by the simple protocol, so that the server keeps no
// prepared statement for each database name.
func adminPool(admin string) (*pgxpool.Pool, error) {
	open, _ := adminPools.LoadOrStore(admin, sync.OnceValues(func() (*pgxpool.Pool, error) {
		cfg, err := pgxpool.ParseConfig(admin)
		if err != nil {
			// The error quotes the URL, which may hold a password.
			return nil, errors.New("not a valid PostgreSQL connection string")
		}
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		return pgxpool.NewWithConfig(context.Background(), cfg)
	}))
	return open.(func() (*pgxpool.Pool, error))()
}

// strategies holds copyStrategy's answer for each admin URL asked.
var strategies sync.Map // admin URL -> string

// copyStrategy returns the option of CREATE DATABASE that copies a
// database's files, STRATEGY FILE_COPY, on a server that has it
// (PostgreSQL 15 and later), else "". For a database as small as a test's
// it costs the server about a third of the CPU of the default, WAL_LOG,
// which writes every page of the copy to the write-ahead log. The answer
// is asked of the server once per admin URL.
func copyStrategy(admin string) (string, error) {
	if s, ok := strategies.Load(admin); ok {
		return s.(string), nil
	}
	version, err := serverVersion(admin)
	if err != nil {
		return "", err
	}
	s := ""
	if version >= 150000 {
		s = "STRATEGY FILE_COPY"
	}
	strategies.Store(admin, s)
	return s, nil
}

// serverVersion returns the server's version as a number (150004 for 15.4).
func serverVersion(admin string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	var v int
	err = conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&v)
	return v, err
}

// withDatabase returns the connection string admin with its database
// replaced by name. It accepts URLs (postgres:// or postgresql://) and
// keyword/value strings.
func withDatabase(admin, name string) (string, error) {
	if strings.HasPrefix(admin, "postgres://") || strings.HasPrefix(admin, "postgresql://") {
		u, err := url.Parse(admin)
		if err != nil {
			// The error quotes the URL, which may hold a password.
			return "", errors.New("not a valid PostgreSQL URL")
		}
		u.Path = "/" + name
		u.RawPath = ""
		return u.String(), nil
	}
	// In a keyword/value string a later keyword wins.
	return admin + " dbname=" + name, nil
}
