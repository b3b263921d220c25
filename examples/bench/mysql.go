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
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
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
	work, bin, cleanup, err := prepare(c, "latchkey-bench-my-", "work directory:")
	if err != nil {
		return err
	}
	defer cleanup()
	db, drop, err := createMySQLDatabase(c.mysql, "latchkey_bench_")
	if err != nil {
		return err
	}
	if c.keep {
		fmt.Println("database:", redact(db))
	} else {
		defer func() {
			if err := drop(); err != nil {
				fmt.Fprintln(os.Stderr, "bench: dropping the database:", err)
			}
		}()
	}
	var flushLog string
	if err := onMySQL(db, time.Minute, func(ctx context.Context, q *sql.DB) error {
		return q.QueryRowContext(ctx, "SELECT @@innodb_flush_log_at_trx_commit").Scan(&flushLog)
	}); err != nil {
		return err
	}
	data := filepath.Join(work, "data")
	cli := func(stdin io.Reader, args ...string) (map[string]any, error) {
		return runCLIWith(bin, data, stdin, append(args[:2:2], append([]string{"-db", db}, args[2:]...)...)...)
	}

	// The other commands need an existing deployment.
	if _, err := cli(nil, "project", "create", "bench"); err != nil {
		return err
	}
	fmt.Printf("seeding %d contacts with multi-row INSERTs ...\n", c.contacts)
	start := time.Now()
	if _, err := cli(nil, "contact", "seed", "-project", "default", "-n", strconv.Itoa(c.contacts)); err != nil {
		return err
	}
	seed := time.Since(start)
	marker, err := cli(nil, "contact", "create", "-project", "default", "-name", "Marker")
	if err != nil {
		return err
	}
	if _, err := cli(nil, "contact", "seed", "-project", "default", "-n", "100"); err != nil {
		return err
	}
	key, err := cli(nil, "key", "create", "-project", "default", "-name", "bench")
	if err != nil {
		return err
	}
	apiKey := key["token"].(string)
	const email, password = "bench@example.com", "bench-password-1"
	if _, err := cli(strings.NewReader(password+"\n"), "user", "create", "-project", "default", "-email", email); err != nil {
		return err
	}
	cursor := marker["id"].(string) + ":" + marker["created_at"].(string)
	if err := onMySQL(db, 10*time.Minute, func(ctx context.Context, q *sql.DB) error {
		_, err := q.ExecContext(ctx, "ANALYZE TABLE contacts")
		return err
	}); err != nil {
		return err
	}

	srv, err := startServer(bin, work, apiKey, "-data", data, "-db", db)
	if err != nil {
		return err
	}
	defer srv.stop()
	base, page1URL, page1, hdr, ready := srv.base, srv.page1URL, srv.page1, srv.hdr, srv.ready
	deepURL := page1URL + "&cursor=" + url.QueryEscape(cursor)
	if deep, _, err := get(deepURL, apiKey); err != nil {
		return err
	} else if !bytes.Contains(deep, []byte(`"data":[{`)) {
		return fmt.Errorf("the deep page is empty: %s", deep)
	}

	fmt.Printf("logging in %d sessions ...\n", c.conns+1)
	userToken, _, err := login(base, email, password)
	if err != nil {
		return err
	}
	if _, _, err := get(page1URL, userToken); err != nil {
		return err
	}
	chains := make([]string, c.conns)
	for i := range chains {
		if _, chains[i], err = login(base, email, password); err != nil {
			return err
		}
	}

	bare, err := startBare(page1, hdr)
	if err != nil {
		return err
	}
	defer bare.Close()
	bareURL := "http://" + bare.Addr().String() + "/v1/contacts?limit=25"
	wrkOn := func(u, token string) func(time.Duration) (float64, string, error) {
		return func(d time.Duration) (float64, string, error) { return runWrk(c, d, u, token) }
	}
	targets := []*pgTarget{
		{name: "bare net/http, same bytes", run: wrkOn(bareURL, "")},
		{name: "page 1, API key", run: wrkOn(page1URL, apiKey), server: true},
		{name: "page 1, login token", run: wrkOn(page1URL, userToken), server: true},
		{name: "after 1,000,001 contacts, API key", run: wrkOn(deepURL, apiKey), server: true},
		{name: "refresh rotations", run: func(d time.Duration) (float64, string, error) { return refreshChains(base, chains, d) }, server: true, ownClock: true},
	}
	fmt.Printf("innodb_flush_log_at_trx_commit = %s; %d rounds of: bare, page 1 (API key), page 1 (login token), deep page (wrk -t%d -c%d), refresh chains (%d connections), %s each in turns of %s; the order rotated each round\n",
		flushLog, c.rounds, c.threads, c.conns, c.conns, c.duration, c.slice)
	for r := range c.rounds {
		sums := make([]turnSum, len(targets))
		err := eachTurn(c, r, len(targets), func(k int, d time.Duration) error {
			t := targets[k]
			pid := os.Getpid()
			if t.server {
				pid = srv.cmd.Process.Pid
			}
			cpu0, db0, t0 := cpuTime(pid), mysqlCPU(), time.Now()
			rps, lat, err := t.run(d)
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			if t.ownClock {
				d = time.Since(t0)
			}
			sums[k].add(d, rps, lat, cpuTime(pid)-cpu0, mysqlCPU()-db0)
			return nil
		})
		if err != nil {
			return err
		}
		for k, t := range targets {
			t.rounds = append(t.rounds, pgResult{rps: sums[k].rps(), lat: sums[k].lat(), serverCPU: sums[k].cpu, postgresCPU: sums[k].postgresCPU})
		}
		bareR, keyR, userR, deepR, refR := targets[0].rounds[r], targets[1].rounds[r], targets[2].rounds[r], targets[3].rounds[r], targets[4].rounds[r]
		fmt.Printf("  round %d: bare %6.0f  key %6.0f (%.2fx)  login %6.0f (%.2fx)  deep %6.0f (%.2fx page 1)  refresh %5.0f/s\n",
			r+1, bareR.rps, keyR.rps, keyR.rps/bareR.rps, userR.rps, userR.rps/bareR.rps, deepR.rps, deepR.rps/keyR.rps, refR.rps)
	}
	ratio := func(num, den int) float64 {
		rs := make([]float64, c.rounds)
		for r := range rs {
			rs[r] = targets[num].rounds[r].rps / targets[den].rounds[r].rps
		}
		return median(rs)
	}
	keyRatio, userRatio, deepRatio := ratio(1, 0), ratio(2, 0), ratio(3, 1)
	refresh := make([]float64, c.rounds)
	for r := range refresh {
		refresh[r] = targets[4].rounds[r].rps
	}
	rotations := median(refresh)

	fmt.Println()
	fmt.Printf("%-34s %10s %12s %14s %14s   (medians over the rounds)\n", "", "req/s", "avg latency", "server CPU/req", "database CPU/req")
	for _, t := range targets {
		m := t.median()
		fmt.Printf("%-34s %10.0f %12s %14s %14s\n", t.name, m.rps, m.lat, perRequest(m.serverCPU, m.rps, c.duration), perRequest(m.postgresCPU, m.rps, c.duration))
	}
	fmt.Println()
	check("page 1 (API key) / bare", keyRatio >= 0.20, fmt.Sprintf("%.2fx", keyRatio), ">= 0.20x")
	check("page 1 (login token) / bare", userRatio >= 0.20, fmt.Sprintf("%.2fx", userRatio), ">= 0.20x")
	check("deep page / page 1", deepRatio >= 0.9, fmt.Sprintf("%.2fx", deepRatio), ">= 0.90x")
	check("refresh rotations/s", rotations >= 1000 && flushLog == "1", fmt.Sprintf("%.0f", rotations), ">= 1,000 with innodb_flush_log_at_trx_commit=1")
	fmt.Printf("     %-34s %14s\n", fmt.Sprintf("seed %d contacts", c.contacts), fmt.Sprintf("%.1f s", seed.Seconds()))
	fmt.Printf("     %-34s %14s\n", "serve ready", fmt.Sprintf("%d ms", ready.Milliseconds()))
	return nil
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
