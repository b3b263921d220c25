package main

// The run shared by the PostgreSQL (postgres.go) and MySQL (mysql.go)
// benchmarks: each file says what its database adds (how the run's
// database is made, the setting that makes commits durable, the database
// server's CPU) and its targets; the loads, rounds and printing are here.

import (
	"bytes"
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
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/latchkey-dev/latchkey/identity"
)

// database is a database server a run uses, and the figures the run checks.
type database struct {
	workPrefix string // of the run's work directory
	seedHow    string // how `contact seed` writes, as printed
	// create makes the run's database and returns its URL for this
	// process's connections, the URL for the example server's -db, and a
	// function that drops it.
	create func() (db, serverDB string, drop func() error, err error)
	// durability returns the setting that makes commits durable as
	// "name = value", and whether it does.
	durability func(db string) (setting string, durable bool, err error)
	// seeded, if not nil, runs once the contacts are seeded.
	seeded func(db string) error
	// cpu takes a reading of the database server's CPU time and returns
	// a function giving the CPU time used since.
	cpu       func() (since func() time.Duration)
	cpuColumn string // the heading of the database's CPU column
	// The targets: page 1 at least page1Min of the bare handler, and at
	// least rotationsMin refresh rotations a second with durable commits.
	page1Min, rotationsMin float64
	// logins adds the password logins target and its checks.
	logins bool
}

// runDatabase runs the load benchmark on a database server.
func runDatabase(c config, on database) error {
	work, bin, cleanup, err := prepare(c, on.workPrefix, "work directory:")
	if err != nil {
		return err
	}
	defer cleanup()
	adminDB, db, drop, err := on.create()
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
	durability, durable, err := on.durability(adminDB)
	if err != nil {
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
	fmt.Printf("seeding %d contacts with %s ...\n", c.contacts, on.seedHow)
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
	if on.seeded != nil {
		if err := on.seeded(adminDB); err != nil {
			return err
		}
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
	targets := []*dbTarget{
		{name: "bare net/http, same bytes", run: wrkOn(bareURL, "")},
		{name: "page 1, API key", run: wrkOn(page1URL, apiKey), server: true},
		{name: "page 1, login token", run: wrkOn(page1URL, userToken), server: true},
		{name: "after 1,000,001 contacts, API key", run: wrkOn(deepURL, apiKey), server: true},
		{name: "refresh rotations", run: func(d time.Duration) (float64, string, error) { return refreshChains(base, chains, d) }, server: true, ownClock: true},
	}
	// measure runs t's turn of dur and adds it to sum.
	measure := func(t *dbTarget, dur time.Duration, sum *turnSum) error {
		pid := os.Getpid()
		if t.server {
			pid = srv.cmd.Process.Pid
		}
		cpu0, dbCPU, t0 := cpuTime(pid), on.cpu(), time.Now()
		rps, lat, err := t.run(dur)
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		if t.ownClock {
			dur = time.Since(t0)
		}
		sum.add(dur, rps, lat, cpuTime(pid)-cpu0, dbCPU())
		return nil
	}
	fmt.Printf("%s; %d rounds of: bare, page 1 (API key), page 1 (login token), deep page (wrk -t%d -c%d), refresh chains (%d connections), %s each in turns of %s; the order rotated each round\n",
		durability, c.rounds, c.threads, c.conns, c.conns, c.duration, c.slice)
	for r := range c.rounds {
		sums := make([]turnSum, len(targets))
		err := eachTurn(c, r, len(targets), func(k int, dur time.Duration) error {
			return measure(targets[k], dur, &sums[k])
		})
		if err != nil {
			return err
		}
		for k, t := range targets {
			t.rounds = append(t.rounds, sums[k].result())
		}
		bareR, keyR, userR, deepR, refR := targets[0].rounds[r], targets[1].rounds[r], targets[2].rounds[r], targets[3].rounds[r], targets[4].rounds[r]
		fmt.Printf("  round %d: bare %6.0f  key %6.0f (%.2fx)  login %6.0f (%.2fx)  deep %6.0f (%.2fx page 1)  refresh %5.0f/s\n",
			r+1, bareR.rps, keyR.rps, keyR.rps/bareR.rps, userR.rps, userR.rps/bareR.rps, deepR.rps, deepR.rps/keyR.rps, refR.rps)
	}
	// The logins' target is for an otherwise idle machine: they get rounds
	// of their own after the list loads, each a sustained run of -d beside
	// one of the hashes made alone, the order alternating.
	var logins, hashes *dbTarget
	if on.logins {
		atOnce := identity.HasherOptions{}.Concurrency()
		logins = &dbTarget{name: "password logins", run: func(d time.Duration) (float64, string, error) {
			return passwordLogins(base, email, password, loginConns, d)
		}, server: true, ownClock: true}
		hashes = &dbTarget{name: fmt.Sprintf("argon2id hashes alone, %d at once", atOnce), run: func(d time.Duration) (float64, string, error) {
			return hashesAlone(atOnce, d)
		}, ownClock: true}
		fmt.Printf("then, nothing else running, %d rounds of: password logins (%d connections), argon2id hashes alone in this process (%d at once), %s each in one turn; the order alternating\n",
			c.rounds, loginConns, atOnce, c.duration)
		for r := range c.rounds {
			pair := []*dbTarget{logins, hashes}
			if r%2 == 1 {
				pair[0], pair[1] = hashes, logins
			}
			for _, t := range pair {
				var sum turnSum
				if err := measure(t, c.duration, &sum); err != nil {
					return err
				}
				t.rounds = append(t.rounds, sum.result())
			}
			fmt.Printf("  round %d: password logins %4.1f/s, hashes alone %4.1f/s (%.2f)\n",
				r+1, logins.rounds[r].rps, hashes.rounds[r].rps, logins.rounds[r].rps/hashes.rounds[r].rps)
		}
		targets = append(targets, logins, hashes)
	}
	ratio := func(num, den int) float64 {
		rs := make([]float64, c.rounds)
		for r := range rs {
			rs[r] = targets[num].rounds[r].rps / targets[den].rounds[r].rps
		}
		return median(rs)
	}
	keyRatio, userRatio, deepRatio := ratio(1, 0), ratio(2, 0), ratio(3, 1)

	fmt.Println()
	fmt.Printf("%-34s %10s %12s %14s %14s   (medians over the rounds)\n", "", "req/s", "avg latency", "server CPU/req", on.cpuColumn)
	for _, t := range targets {
		m := t.median()
		fmt.Printf("%-34s %10.0f %12s %14s %14s\n", t.name, m.rps, m.lat, m.cpuPer(m.serverCPU), m.cpuPer(m.databaseCPU))
	}
	fmt.Println()
	page1Min := fmt.Sprintf(">= %.2fx", on.page1Min)
	check("page 1 (API key) / bare", keyRatio >= on.page1Min, fmt.Sprintf("%.2fx", keyRatio), page1Min)
	check("page 1 (login token) / bare", userRatio >= on.page1Min, fmt.Sprintf("%.2fx", userRatio), page1Min)
	check("deep page / page 1", deepRatio >= 0.9, fmt.Sprintf("%.2fx", deepRatio), ">= 0.90x")
	check("refresh rotations/s", targets[4].median().rps >= on.rotationsMin && durable, fmt.Sprintf("%.0f", targets[4].median().rps),
		fmt.Sprintf(">= %s with %s", thousands(on.rotationsMin), durability))
	if on.logins {
		checkLogins(logins, hashes, c.rounds)
	}
	fmt.Printf("     %-34s %14s\n", fmt.Sprintf("seed %d contacts", c.contacts), fmt.Sprintf("%.1f s", seed.Seconds()))
	fmt.Printf("     %-34s %14s\n", "serve ready", fmt.Sprintf("%d ms", ready.Milliseconds()))
	return nil
}

// checkLogins prints the password logins' checks against the hashes
// made alone in the same rounds: the server's CPU per login against the
// CPU of one such hash, and the logins a second against the hashes a
// second (the cores divided by a hash's CPU). Each is a ratio within a
// round, the median over the rounds. It then prints how much of the
// machine's cores the server and the database kept busy while the logins
// ran: the logins a second times their CPU per login, over the cores.
// Near 1, the logins are bound by their CPU, not by how many hashes the
// server lets run at once.
func checkLogins(logins, hashes *dbTarget, rounds int) {
	cpu, rate, busy := make([]float64, rounds), make([]float64, rounds), make([]float64, rounds)
	for r := range rounds {
		l, h := logins.rounds[r], hashes.rounds[r]
		cpu[r] = (l.serverCPU.Seconds() / l.requests) / (h.serverCPU.Seconds() / h.requests)
		rate[r] = l.rps / h.rps
		busy[r] = l.rps * (l.serverCPU + l.databaseCPU).Seconds() / l.requests / float64(runtime.NumCPU())
	}
	check("server CPU per login / hash alone", median(cpu) <= 1.25, fmt.Sprintf("%.2fx", median(cpu)), "<= 1.25x")
	check("password logins / hashes alone", median(rate) >= 0.9, fmt.Sprintf("%.2f", median(rate)), ">= 0.90 on an idle machine")
	fmt.Printf("     %-34s %14s\n", "cores busy: server, db (logins)", fmt.Sprintf("%.2f", median(busy)))
}

// thousands formats n, a whole number, with commas between thousands.
func thousands(n float64) string {
	s := strconv.FormatFloat(n, 'f', 0, 64)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// dbTarget is one load a database run drives, and its results,
// one per round.
type dbTarget struct {
	name   string
	run    func(d time.Duration) (float64, string, error) // requests (or rotations) per second over d, latency
	server bool                                           // served by the example server (not this process)
	// ownClock: run's rate is over its own wall time, which the requests in
	// flight at d carry past d (a login waits for a hashing slot), and the
	// turn's CPU time covers all of it; the turn counts that time, so that
	// CPU per request is CPU over the requests made.
	ownClock bool
	rounds   []dbResult
}

// dbResult is a target's turns of one round.
type dbResult struct {
	rps         float64
	requests    float64 // made in the turns
	lat         string
	serverCPU   time.Duration // the process that answered
	databaseCPU time.Duration // the database server's processes on this machine
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
	return repeat(conns, d, "login", func(int) error {
		res, err := client.Post(base+"/v1/identity/login", "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("login: %s: %s", res.Status, b)
		}
		return nil
	})
}

// repeat runs op on each of workers goroutines (op(i) on the i-th), one
// call after another, until d has passed, and returns the calls per second
// over the time until the last one ended, and their mean duration. The
// first error ends its goroutine and fails the run; what names the calls
// in the error of a run that completed none.
func repeat(workers int, d time.Duration, what string, op func(i int) error) (float64, string, error) {
	var n, busy atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	stop := time.Now().Add(d)
	began := time.Now()
	for i := range workers {
		wg.Go(func() {
			for time.Now().Before(stop) {
				t0 := time.Now()
				if errs[i] = op(i); errs[i] != nil {
					return
				}
				busy.Add(int64(time.Since(t0)))
				n.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	if err := errors.Join(errs...); err != nil {
		return 0, "", err
	}
	if n.Load() == 0 {
		return 0, "", fmt.Errorf("no %s completed", what)
	}
	lat := time.Duration(busy.Load() / n.Load()).Round(10 * time.Microsecond)
	return float64(n.Load()) / elapsed.Seconds(), lat.String(), nil
}

// hashesAlone makes argon2id hashes with Latchkey's parameters in this
// process for d, atOnce at a time (each of atOnce goroutines one after
// another), and returns the hashes per second and their mean duration. It
// is the password logins' reference: what the machine's cores do when
// they do nothing but hash, as the server's hasher makes them.
func hashesAlone(atOnce int, d time.Duration) (float64, string, error) {
	pw, salt := []byte("correct horse battery"), []byte("0123456789abcdef")
	return repeat(atOnce, d, "hash", func(int) error {
		argon2.IDKey(pw, salt, identity.ArgonTime, identity.ArgonMemory, identity.ArgonThreads, identity.ArgonKeyLen)
		return nil
	})
}

// cpuPer returns cpu per request of r's turns, in µs.
func (r dbResult) cpuPer(cpu time.Duration) string {
	if r.requests <= 0 || cpu <= 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f µs", float64(cpu.Microseconds())/r.requests)
}

// median returns the round with the median requests per second.
func (t *dbTarget) median() dbResult {
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
	return repeat(len(chains), d, "rotation", func(i int) error {
		next, err := rotate(client, base, chains[i])
		if err == nil {
			chains[i] = next
		}
		return err
	})
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
