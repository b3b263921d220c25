package main

// The load benchmark on MySQL or MariaDB (-mysql URL)
//
//	go run ./examples/bench -mysql 'mysql://root@127.0.0.1:3306/'
//
// measures what the MySQL store costs, with the method of the PostgreSQL
// run (postgres.go). On a database created for the run on the server of URL
// (and dropped after it; -keep keeps it), with the example server and
// `-db`:
//
//  1. seeds 1,000,000 contacts (-n) in project default with `contact seed`
//     (multi-row INSERTs of 1,000 rows, in transactions of 10,000; timed),
//     adds a marker contact and 100 more, creates an API key, and a user who
//     logs in -c times plus once: one session per connection of the
//     refresh run, and a login token; then runs ANALYZE TABLE on contacts;
//  2. starts the example server on the database (timed until the first 200
//     of GET /v1/contacts?limit=25);
//  3. drives, in -rounds rounds with the order rotated each round, each
//     target for -d in turns of -slice (see turns.go): wrk (-t2 -c32) on a
//     bare net/http handler in this process writing the same bytes as page
//     1; page 1 with the API key; page 1 with the login token; the page
//     after 1,000,001 contacts (API key); and refresh chains: -c
//     connections, each rotating its own session's refresh token in a loop,
//     counting rotations per second;
//  4. prints each round, the medians, and the targets: page 1 at or above
//     0.20x the bare handler, API key and login token alike; the deep page
//     at or above 0.9x page 1 (ratios taken within each round, median over
//     the rounds); at least 1,000 refresh rotations/s, with the server's
//     innodb_flush_log_at_trx_commit (printed) at 1: durable commits.
//
// The CPU columns split each run's CPU time per request between the example
// server and the database server's process (mariadbd or mysqld) on this
// machine.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/latchkey-dev/latchkey/store/mysql"
)

func runMySQL(c config) error {
	return runDatabase(c, database{
		workPrefix: "latchkey-bench-my-",
		seedHow:    "multi-row INSERTs",
		create: func() (string, string, func() error, error) {
			db, drop, err := createMySQLDatabase(c.mysql, "latchkey_bench_")
			return db, db, drop, err
		},
		durability: func(db string) (string, bool, error) {
			var v string
			err := onMySQL(db, time.Minute, func(ctx context.Context, q *sql.DB) error {
				return q.QueryRowContext(ctx, "SELECT @@innodb_flush_log_at_trx_commit").Scan(&v)
			})
			return "innodb_flush_log_at_trx_commit = " + v, v == "1", err
		},
		seeded: func(db string) error {
			return onMySQL(db, 10*time.Minute, func(ctx context.Context, q *sql.DB) error {
				_, err := q.ExecContext(ctx, "ANALYZE TABLE contacts")
				return err
			})
		},
		cpu: func() func() time.Duration {
			start := mysqlCPU()
			return func() time.Duration { return mysqlCPU() - start }
		},
		cpuColumn:    "database CPU/req",
		page1Min:     0.20,
		rotationsMin: 1000,
	})
}

// createMySQLDatabase creates a database named prefix and a number for the
// run on the server of admin (a mysql:// URL) and returns its URL and a
// function that drops it.
func createMySQLDatabase(admin, prefix string) (string, func() error, error) {
	u, err := url.Parse(admin)
	if err != nil || u.Scheme != "mysql" {
		return "", nil, errors.New("the server must be given as a mysql:// URL")
	}
	name := fmt.Sprintf("%s%d", prefix, time.Now().UnixNano())
	u.Path = "/mysql"
	u.RawPath = ""
	adminDB := u.String()
	exec := func(stmt string) error {
		return onMySQL(adminDB, time.Minute, func(ctx context.Context, q *sql.DB) error {
			_, err := q.ExecContext(ctx, stmt)
			return err
		})
	}
	if err := exec("CREATE DATABASE " + name); err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), func() error { return exec("DROP DATABASE IF EXISTS " + name) }, nil
}

// onMySQL calls fn with a pool on db (a mysql:// URL, with the options the
// store sets), all within limit.
func onMySQL(db string, limit time.Duration, fn func(context.Context, *sql.DB) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cfg, err := mysql.ParseURL(db)
	if err != nil {
		return err
	}
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	q := sql.OpenDB(conn)
	defer q.Close()
	if err := fn(ctx, q); err != nil {
		return fmt.Errorf("%s: %w", redact(db), err)
	}
	return nil
}

// mysqlCPU returns the CPU time used so far by the processes of this
// machine named mariadbd or mysqld.
func mysqlCPU() time.Duration {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var total time.Duration
	for _, d := range dirs {
		comm, err := os.ReadFile(filepath.Join(d, "comm"))
		if err != nil {
			continue
		}
		switch strings.TrimSpace(string(comm)) {
		case "mariadbd", "mysqld":
			if pid, err := strconv.Atoi(filepath.Base(d)); err == nil {
				total += cpuTime(pid)
			}
		}
	}
	return total
}
