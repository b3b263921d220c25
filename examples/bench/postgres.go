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
//     token the previous answer gave), counting rotations per second; and
//     password logins: 8 connections, each signing the user in again and
//     again (POST /v1/identity/login), counting logins per second;
//  4. prints each round, the medians, and the targets: page 1 at or above
//     0.25x the bare handler, API key and login token alike; the deep page
//     at or above 0.9x page 1 (ratios taken within each round, median over
//     the rounds); at least 1,500 refresh rotations/s, with the server's
//     synchronous_commit (printed) on; the server's CPU per login at most
//     1.25x the CPU of one argon2id hash made alone in this process (after
//     the rounds, getrusage), and on an idle machine logins per second at
//     least 0.9 of the cores divided by that hash CPU. The hash alone is
//     made as many at a time as the server's hasher runs at once (its
//     default, identity.HasherOptions.Concurrency, as many as there are
//     cores here), which is how the server makes them: two hashes at once
//     on two cores cost each more CPU than one alone (they share caches and
//     memory bandwidth). One at a time is printed beside it.
//
// The CPU columns split each run's CPU time per request between the
// example server and the PostgreSQL server's processes on this machine.
// Parameters of URL that start with pool_ (pool_max_conns=16) are given to
// the example server's pool only.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/argon2"

	"github.com/latchkey-dev/latchkey/identity"
)

// pgTarget is one load the PostgreSQL benchmark drives, and its results,
// one per round.
type pgTarget struct {
	name   string
	run    func(d time.Duration) (float64, string, error) // requests (or rotations) per second over d, latency
	server bool                                           // served by the example server (not the bare handler)
	// ownClock: run's rate is over its own wall time, which the requests in
	// flight at d carry past d (a login waits for a hashing slot), and the
	// turn's CPU time covers all of it; the turn counts that time, so that
	// CPU per request is CPU over the requests made.
	ownClock bool
	rounds   []pgResult
}

// pgResult is a target's turns of one round.
type pgResult struct {
	rps         float64
	requests    float64 // made in the turns
	lat         string
	serverCPU   time.Duration // the process that answered
	postgresCPU time.Duration // every postgres process of this machine
}

func runPostgres(c config) error {
	work, bin, cleanup, err := prepare(c, "latchkey-bench-pg-", "work directory:")
	if err != nil {
		return err
	}
	defer cleanup()
	admin, pool := splitPoolParams(c.postgres)
	db, drop, err := createDatabase(admin, "latchkey_bench_")
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
	syncCommit, err := showSetting(db, "synchronous_commit")
	if err != nil {
		return err
	}
	if pool != "" {
		// The server's pool settings go to its -db URL only.
		db += "&" + pool
		if !strings.Contains(db, "?") {
			db = strings.Replace(db, "&", "?", 1)
		}
	}
	data := filepath.Join(work, "data")
	cli := func(stdin io.Reader, args ...string) (map[string]any, error) {
		return runCLIWith(bin, data, stdin, append(args[:2:2], append([]string{"-db", db}, args[2:]...)...)...)
	}

	// The other commands need an existing deployment.
	if _, err := cli(nil, "project", "create", "bench"); err != nil {
		return err
	}
	fmt.Printf("seeding %d contacts with COPY ...\n", c.contacts)
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
		{name: "password logins", run: func(d time.Duration) (float64, string, error) {
			return passwordLogins(base, email, password, loginConns, d)
		}, server: true, ownClock: true},
	}
	fmt.Printf("synchronous_commit = %s; %d rounds of: bare, page 1 (API key), page 1 (login token), deep page (wrk -t%d -c%d), refresh chains (%d connections), %s each in turns of %s; the order rotated each round\n",
		syncCommit, c.rounds, c.threads, c.conns, c.conns, c.duration, c.slice)
	for r := range c.rounds {
		sums := make([]turnSum, len(targets))
		err := eachTurn(c, r, len(targets), func(k int, d time.Duration) error {
			t := targets[k]
			pid := os.Getpid()
			if t.server {
				pid = srv.cmd.Process.Pid
			}
			cpu0, pg0, t0 := cpuTime(pid), postgresCPU(), time.Now()
			rps, lat, err := t.run(d)
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			if t.ownClock {
				d = time.Since(t0)
			}
			sums[k].add(d, rps, lat, cpuTime(pid)-cpu0, postgresCPUSince(pg0))
			return nil
		})
		if err != nil {
			return err
		}
		for k, t := range targets {
			t.rounds = append(t.rounds, pgResult{rps: sums[k].rps(), requests: sums[k].requests, lat: sums[k].lat(), serverCPU: sums[k].cpu, postgresCPU: sums[k].postgresCPU})
		}
		bareR, keyR, userR, deepR, refR, pwR := targets[0].rounds[r], targets[1].rounds[r], targets[2].rounds[r], targets[3].rounds[r], targets[4].rounds[r], targets[5].rounds[r]
		fmt.Printf("  round %d: bare %6.0f  key %6.0f (%.2fx)  login %6.0f (%.2fx)  deep %6.0f (%.2fx page 1)  refresh %5.0f/s  password logins %4.1f/s\n",
			r+1, bareR.rps, keyR.rps, keyR.rps/bareR.rps, userR.rps, userR.rps/bareR.rps, deepR.rps, deepR.rps/keyR.rps, refR.rps, pwR.rps)
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
	logins := make([]float64, c.rounds)
	for r := range logins {
		logins[r] = targets[5].rounds[r].rps
	}
	loginRate := median(logins)
	hashesAtOnce := identity.HasherOptions{}.Concurrency()
	hashAlone, hashCPU := argon2CPU(1), argon2CPU(hashesAtOnce)
	loginCPU := targets[5].median().serverCPU.Seconds() / targets[5].median().requests
	ideal := float64(runtime.NumCPU()) / hashCPU.Seconds()

	fmt.Println()
	fmt.Printf("%-34s %10s %12s %14s %14s   (medians over the rounds)\n", "", "req/s", "avg latency", "server CPU/req", "postgres CPU/req")
	for _, t := range targets {
		m := t.median()
		fmt.Printf("%-34s %10.0f %12s %14s %14s\n", t.name, m.rps, m.lat, m.cpuPer(m.serverCPU), m.cpuPer(m.postgresCPU))
	}
	fmt.Println()
	check("page 1 (API key) / bare", keyRatio >= 0.25, fmt.Sprintf("%.2fx", keyRatio), ">= 0.25x")
	check("page 1 (login token) / bare", userRatio >= 0.25, fmt.Sprintf("%.2fx", userRatio), ">= 0.25x")
	check("deep page / page 1", deepRatio >= 0.9, fmt.Sprintf("%.2fx", deepRatio), ">= 0.90x")
	check("refresh rotations/s", rotations >= 1500 && syncCommit == "on", fmt.Sprintf("%.0f", rotations), ">= 1,500 with synchronous_commit=on")
	fmt.Printf("     %-34s %14s\n", "argon2id hash alone, CPU", fmt.Sprintf("%s (%d at a time), %s (one at a time)",
		hashCPU.Round(100*time.Microsecond), hashesAtOnce, hashAlone.Round(100*time.Microsecond)))
	fmt.Printf("     %-34s %14s\n", "server CPU per login", fmt.Sprintf("%s (%.2fx one hash at a time)",
		time.Duration(loginCPU*float64(time.Second)).Round(100*time.Microsecond), loginCPU/hashAlone.Seconds()))
	check("server CPU per login / hash alone", loginCPU <= 1.25*hashCPU.Seconds(), fmt.Sprintf("%.2fx", loginCPU/hashCPU.Seconds()), "<= 1.25x")
	check("password logins / (cores ÷ hash CPU)", loginRate >= 0.9*ideal, fmt.Sprintf("%.2f (%.1f/s of %.1f/s)", loginRate/ideal, loginRate, ideal), ">= 0.90 on an idle machine")
	fmt.Printf("     %-34s %14s\n", fmt.Sprintf("seed %d contacts", c.contacts), fmt.Sprintf("%.1f s", seed.Seconds()))
	fmt.Printf("     %-34s %14s\n", "serve ready", fmt.Sprintf("%d ms", ready.Milliseconds()))
	return nil
}

// loginConns is the number of connections of the password logins: enough
// to keep every hashing slot of a server on a few cores busy.
const loginConns = 8

// passwordLogins signs in as email on conns connections for d, one login
// after another on each, and returns the logins per second and their mean
// latency. Any answer but 200 fails the run. Each login starts a session.
func passwordLogins(base, email, password string, conns int, d time.Duration) (float64, string, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	body, _ := json.Marshal(map[string]string{"email": email, "password": password})
	var n, busy atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, conns)
	stop := time.Now().Add(d)
	began := time.Now()
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				t0 := time.Now()
				res, err := client.Post(base+"/v1/identity/login", "application/json", bytes.NewReader(body))
				if err != nil {
					errs[i] = err
					return
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					errs[i] = fmt.Errorf("login: %s: %s", res.Status, b)
					return
				}
				busy.Add(int64(time.Since(t0)))
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	if err := errors.Join(errs...); err != nil {
		return 0, "", err
	}
	if n.Load() == 0 {
		return 0, "", errors.New("no login completed")
	}
	lat := time.Duration(busy.Load() / n.Load()).Round(10 * time.Microsecond)
	return float64(n.Load()) / elapsed.Seconds(), lat.String(), nil
}

// argon2CPU returns the CPU time (user and system, getrusage of this
// process, otherwise idle then) of one argon2id hash with Latchkey's
// parameters made at the same time as atOnce-1 others: the mean of 10 made
// one after another on each of atOnce goroutines, after one each not
// counted.
func argon2CPU(atOnce int) time.Duration {
	pw, salt := []byte("correct horse battery"), []byte("0123456789abcdef")
	hashes := func(n int) {
		var wg sync.WaitGroup
		for range atOnce {
			wg.Go(func() {
				for range n {
					argon2.IDKey(pw, salt, identity.ArgonTime, identity.ArgonMemory, identity.ArgonThreads, identity.ArgonKeyLen)
				}
			})
		}
		wg.Wait()
	}
	rusage := func() time.Duration {
		var r syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	hashes(1)
	const n = 10
	t0 := rusage()
	hashes(n)
	return (rusage() - t0) / time.Duration(n*atOnce)
}

// cpuPer returns cpu per request of r's turns, in µs.
func (r pgResult) cpuPer(cpu time.Duration) string {
	if r.requests <= 0 || cpu <= 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f µs", float64(cpu.Microseconds())/r.requests)
}

// median returns the round with the median requests per second.
func (t *pgTarget) median() pgResult {
	rs := make([]float64, len(t.rounds))
	for i, r := range t.rounds {
		rs[i] = r.rps
	}
	m := median(rs)
	for _, r := range t.rounds {
		if r.rps == m {
			return r
		}
	}
	return t.rounds[0]
}

// refreshChains rotates each of the refresh tokens in chains (one session
// each) on its own connection for d: every rotation POSTs the token the
// previous one returned. It updates chains to the newest tokens and returns
// the rotations per second and their mean latency. Any answer but 200 fails
// the run.
func refreshChains(base string, chains []string, d time.Duration) (float64, string, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: len(chains), MaxConnsPerHost: len(chains)}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	var n, busy atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, len(chains))
	stop := time.Now().Add(d)
	began := time.Now()
	for i := range chains {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				t0 := time.Now()
				next, err := rotate(client, base, chains[i])
				if err != nil {
					errs[i] = err
					return
				}
				busy.Add(int64(time.Since(t0)))
				n.Add(1)
				chains[i] = next
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	if err := errors.Join(errs...); err != nil {
		return 0, "", err
	}
	if n.Load() == 0 {
		return 0, "", errors.New("no rotation completed")
	}
	lat := time.Duration(busy.Load() / n.Load()).Round(10 * time.Microsecond)
	return float64(n.Load()) / elapsed.Seconds(), lat.String(), nil
}

// rotate exchanges the refresh token rt at base and returns its successor.
func rotate(client *http.Client, base, rt string) (string, error) {
	body, _ := json.Marshal(map[string]string{"refresh_token": rt})
	res, err := client.Post(base+"/v1/identity/refresh", "application/json", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return "", err
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("refresh: %s: %s", res.Status, b)
	}
	var ts struct {
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.Unmarshal(b, &ts); err != nil || ts.RefreshToken == "" {
		return "", fmt.Errorf("refresh: no refresh_token in %q", b)
	}
	return ts.RefreshToken, nil
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
