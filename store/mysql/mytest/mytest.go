// Package mytest gives tests a fresh MySQL or MariaDB database of their
// own, on the server named by the LATCHKEY_TEST_MYSQL environment variable,
// or else on the conventional local server (LocalURL) if one answers.
//
// # Usage
//
//	func TestSomething(t *testing.T) {
//		url := mytest.NewDatabase(t) // skips or fails when there is no server
//		st, err := mysql.Open(t.Context(), url, nil)
//		...
//	}
//
// Without LATCHKEY_TEST_MYSQL, and with no local server answering at
// LocalURL, a test skips with a message, unless the CI environment variable
// is set: in CI a missing or unreachable server fails the test, so that
// nothing is silently skipped there. With LATCHKEY_TEST_MYSQL set, a server
// that does not answer fails the test too.
package mytest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// EnvURL is the environment variable naming the test server: a URL such as
// mysql://root@127.0.0.1:3306/, whose user may create and drop databases.
// Its database, if any, is ignored.
const EnvURL = "LATCHKEY_TEST_MYSQL"

// DatabasePrefix starts the name of every database NewDatabase creates.
const DatabasePrefix = "latchkey_test_"

// adminTimeout bounds creating or dropping one database.
const adminTimeout = time.Minute

// LocalURL is the conventional local server, tried when LATCHKEY_TEST_MYSQL
// is unset: user root with no password on 127.0.0.1:3306.
const LocalURL = "mysql://root@127.0.0.1:3306/?timeout=2s"

// localAnswers is whether LocalURL answered, asked once per test binary.
var localAnswers = sync.OnceValue(func() bool { return exec(LocalURL, "DO 1") == nil })

// AdminURL returns the URL in LATCHKEY_TEST_MYSQL or, when it is unset,
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
		t.Fatalf("mytest: %s is not set and no server answers at %s, and CI is set: MySQL tests must run in CI", EnvURL, LocalURL)
	}
	t.Skipf("mytest: no MySQL or MariaDB: set %s to a server's URL, or run one at %s", EnvURL, LocalURL)
	return ""
}

// NewDatabase creates an empty database named DatabasePrefix plus random
// hex on the server of [AdminURL], registers a t.Cleanup that drops it, and
// returns a mysql:// URL for it. It skips t as AdminURL does, and fails t
// when the server cannot be reached or the database cannot be created.
func NewDatabase(t testing.TB) string {
	t.Helper()
	admin := AdminURL(t)
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := DatabasePrefix + hex.EncodeToString(b[:])
	dbURL, err := WithDatabase(admin, name)
	if err != nil {
		t.Fatalf("mytest: %s: %v", EnvURL, err)
	}
	if err := exec(admin, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("mytest: create database %s on the server of %s: %v", name, EnvURL, err)
	}
	t.Cleanup(func() {
		if err := exec(admin, "DROP DATABASE IF EXISTS "+name); err != nil {
			t.Errorf("mytest: drop database %s: %v", name, err)
		}
	})
	return dbURL
}

// Exec runs one statement on a fresh connection to the server of admin (a
// mysql:// URL), on no particular database.
func Exec(admin, stmt string) error { return exec(admin, stmt) }

func exec(admin, stmt string) error {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	cfg, err := adminConfig(admin)
	if err != nil {
		return err
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	_, err = db.ExecContext(ctx, stmt)
	return err
}

// adminConfig returns the driver configuration of the server of admin, on
// no database.
func adminConfig(admin string) (*mysql.Config, error) {
	u, err := url.Parse(admin)
	if err != nil || u.Scheme != "mysql" || u.Host == "" {
		// The error would quote the URL, which may hold a password.
		return nil, errors.New("not a valid mysql:// URL")
	}
	host := u.Host
	if u.Port() == "" {
		host += ":3306"
	}
	cfg, err := mysql.ParseDSN("tcp(" + host + ")/?" + u.RawQuery)
	if err != nil {
		return nil, errors.New("the URL's parameters are not valid driver parameters")
	}
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	return cfg, nil
}

// WithDatabase returns the mysql:// URL admin with its database replaced by
// name.
func WithDatabase(admin, name string) (string, error) {
	if !strings.HasPrefix(admin, "mysql://") {
		return "", errors.New("not a mysql:// URL")
	}
	u, err := url.Parse(admin)
	if err != nil {
		return "", errors.New("not a valid mysql:// URL")
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String(), nil
}
