package main

// The load benchmark on PostgreSQL (-postgres URL)
//
//	go run ./examples/bench -postgres 'postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'
//
// measures what the PostgreSQL store costs, with the method of the SQLite
// run. On a database created for the run on the server of URL (and dropped
// after it; -keep keeps it), with the example server and `-db`:
//
//  1. seeds 1,000,000 contacts (-n) in project default with `contact seed`
//     (COPY, in batches of 10,000, then VACUUM (ANALYZE) of the table, which
//     the command runs itself; timed), adds a marker contact and 100 more,
//     creates an API key, and a user who logs in -c times plus once: one
//     session per connection of the refresh run, and a login token;
//  2. starts the example server on the database (timed until the first 200
//     of GET /v1/contacts?limit=25);
//  3. drives, in -rounds rounds with the order rotated each round, each
//     target for -d in turns of -slice (see turns.go): wrk (-t2 -c32) on
//     a bare net/http handler in this
//     process writing the same bytes as page 1; page 1 with the API key;
//     page 1 with the login token; the page after 1,000,001 contacts (API
//     key); and refresh chains: -c connections, each rotating its own
//     session's refresh token in a loop (POST /v1/identity/refresh with the
//     token the previous answer gave), counting rotations per second;
//     then, with nothing else running (the target is for an idle machine),
//     -rounds rounds of two sustained runs of -d, the order alternating:
//     password logins, 8 connections each signing the user in again and
//     again (POST /v1/identity/login), counting logins per second; and, as
//     their reference, argon2id hashes with Latchkey's parameters made
//     alone in this process, as many at once as the server's hasher makes
//     them (identity.HasherOptions.Concurrency, as many as there are cores
//     here), counting hashes per second;
//  4. prints each round, the medians, and the targets: page 1 at or above
//     0.25x the bare handler, API key and login token alike; the deep page
//     at or above 0.9x page 1; at least 1,500 refresh rotations/s, with the
//     server's synchronous_commit (printed) on; the server's CPU per login
//     at most 1.25x the CPU of one hash made alone, and on an idle machine
//     logins per second at least 0.9 of the hashes per second made alone
//     (the cores divided by a hash's CPU). Ratios are taken within each
//     round, the median over the rounds. Beside them, not a target: the
//     share of the cores that the server and PostgreSQL kept busy while
//     the logins ran (near 1: the logins are bound by their CPU, not by
//     the hashes the server lets run at once).
//
// The CPU columns split each run's CPU time per request between the
// example server and the PostgreSQL server's processes on this machine.
// Parameters of URL that start with pool_ (pool_max_conns=16) are given to
// the example server's pool only.

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

func runPostgres(c config) error {
	return runDatabase(c, database{
		workPrefix: "latchkey-bench-pg-",
		seedHow:    "COPY",
		create: func() (db, serverDB string, drop func() error, err error) {
			admin, pool := splitPoolParams(c.postgres)
			db, drop, err = createDatabase(admin, "latchkey_bench_")
			if err != nil || pool == "" {
				return db, db, drop, err
			}
			// The server's pool settings go to its -db URL only.
			serverDB = db + "&" + pool
			if !strings.Contains(db, "?") {
				serverDB = db + "?" + pool
			}
			return db, serverDB, drop, nil
		},
		durability: func(db string) (string, bool, error) {
			v, err := showSetting(db, "synchronous_commit")
			return "synchronous_commit = " + v, v == "on", err
		},
		cpu: func() func() time.Duration {
			start := postgresCPU()
			return func() time.Duration { return postgresCPUSince(start) }
		},
		cpuColumn:    "postgres CPU/req",
		page1Min:     0.25,
		rotationsMin: 1500,
		logins:       true,
	})
}

// showSetting returns a setting of the server of db, as SHOW prints it.
func showSetting(db, name string) (v string, err error) {
	err = onDatabase(db, 30*time.Second, func(ctx context.Context, conn *pgx.Conn) error {
		return conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v)
	})
	return v, err
}

// onDatabase calls fn with a connection to db, all within limit.
func onDatabase(db string, limit time.Duration, fn func(context.Context, *pgx.Conn) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", redact(db), err)
	}
	defer conn.Close(context.Background())
	return fn(ctx, conn)
}

// postgresCPU returns the CPU time used so far by each process of this
// machine named postgres (the server and its backends), by pid.
func postgresCPU() map[int]time.Duration {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	cpu := map[int]time.Duration{}
	for _, d := range dirs {
		comm, err := os.ReadFile(filepath.Join(d, "comm"))
		if err != nil || strings.TrimSpace(string(comm)) != "postgres" {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil {
			cpu[pid] = cpuTime(pid)
		}
	}
	return cpu
}

// postgresCPUSince returns the CPU time the postgres processes used since
// start, a reading of postgresCPU: what each running process used since
// then (all of it for one started since). A process that exited in between
// (an autovacuum worker, say) drops out with what it used in between; its
// earlier CPU time is not subtracted.
func postgresCPUSince(start map[int]time.Duration) time.Duration {
	var total time.Duration
	for pid, t := range postgresCPU() {
		total += max(0, t-start[pid]) // a reused pid may have used less
	}
	return total
}

// splitPoolParams returns the URL u without its pgxpool parameters
// (pool_max_conns and the other pool_ ones, which a plain connection
// refuses), and those parameters as a query string.
func splitPoolParams(u string) (admin, pool string) {
	p, err := url.Parse(u)
	if err != nil {
		return u, ""
	}
	q, pq := p.Query(), url.Values{}
	for k, v := range q {
		if strings.HasPrefix(k, "pool_") {
			pq[k] = v
			delete(q, k)
		}
	}
	p.RawQuery = q.Encode()
	return p.String(), pq.Encode()
}

// redact returns the URL u without its password.
func redact(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Redacted()
	}
	return "(a database URL)"
}
