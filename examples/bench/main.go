// Command bench is Latchkey's reproducible load benchmark. Run it from the
// repository root (it needs wrk: apt-get install wrk):
//
//	go run ./examples/bench
//
// It builds the example server, then in a temporary data directory:
//
//  1. seeds 1,000,000 contacts in project default with `contact seed`
//     (timed), adds one marker contact with `contact create` and 100 more
//     contacts after it, creates an API key with `key create` and a user
//     with `user create`;
//  2. starts the example server and times how long it takes from the start
//     of the process to the first 200 answer of
//     GET /v1/contacts?limit=25 (polled every 2 ms), then logs the user in
//     (POST /v1/identity/login) for a login token;
//  3. drives with wrk (-t2 -c32, 10 s each by default), in turns:
//     a bare net/http handler in this process that is sent the same
//     request (the API key's Authorization header included) and writes the
//     same bytes and headers as page 1 (Content-Length included, as the
//     API sends it); GET /v1/contacts?limit=25 with the API key; the same with the
//     login token; and the page after the marker, 1,000,001 contacts deep,
//     by cursor, with the API key;
//     sampling the server's RSS every 50 ms and measuring the CPU time
//     each request costs the server (the bare handler: this process). It
//     does so in 5 rounds (-rounds), rotating the order each round; within
//     a round the targets take turns of 2 s (-slice) until each has run
//     -d (see turns.go);
//  4. prints each round's figures, then the medians and the ratios against
//     the targets: page 1 at least 50 % of the bare handler's requests per
//     second with either token, the deep page at least 0.9x page 1 (each
//     ratio is taken within a round, whose turns interleave, and the
//     median over the rounds is checked: on a shared machine speed drifts
//     by tens of percent over seconds), seeding at most 30 s, ready at most
//     300 ms, RSS under load at most 100 MiB.
//
// The server writes its access log (at most 100 lines a second, the rest
// counted; see the example server's -access-log-rate) to a file in the data
// directory, as it would in production. Flags change the sizes; see
// -help.
//
// # Login flood (-flood)
//
//	go run ./examples/bench -flood
//
// measures the target "while 64 connections flood login with wrong
// passwords, the process stays under 256 MiB RSS and an authenticated
// request to another endpoint still answers within 100 ms at p99". It runs
// two scenarios, each on a fresh data directory and server, with a user and
// an API key made with the command line:
//
//	a. the server as it is: the flood comes from one client address, so
//	   after 50 failures (identity.DefaultAddressLimit) it is answered 429
//	   without hashing;
//	b. the worst case: the server runs with -login-address-limit 1000000000,
//	   so that nothing stops the hashing, and every request already uses an
//	   email never tried before (the per-account limit, 10, never applies).
//	   Every login costs one argon2id hash (19 MiB); only the Hasher's bound
//	   on concurrent hashes keeps memory and CPU in check. (wrk cannot use
//	   several source addresses, hence the server flag.)
//
// In each, wrk (-t2 -c64 -d15s unless -t, -c, -d are given) POSTs JSON with
// a wrong password to /v1/identity/login (a Lua script, one new email per
// request), while this process sends GET /v1/contacts?limit=25 with the API
// key one request at a time (10 ms apart) and samples the server's VmRSS
// every 100 ms. It first measures the GET alone for 3 s. It prints the peak
// RSS, the GET's p50/p90/p99/max idle and under the flood, the flood's
// status mix (401: hashed; 429: throttled), the server's CPU time and the
// load average before and after (the machine may be shared).
//
// # Revocation propagation (-propagation)
//
//	go run ./examples/bench -propagation
//
// measures how long after a revocation is acknowledged a remote verifier in
// another process refuses the token, on SQLite and on PostgreSQL; see
// propagation.go.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type config struct {
	contacts  int
	duration  time.Duration
	slice     time.Duration
	rounds    int
	threads   int
	conns     int
	keep      bool
	server    string
	flood     bool
	scenarios string
	verbose   bool

	propagation bool
	revocations int
	pg          string

	postgres string // -postgres: the PostgreSQL load benchmark (postgres.go)
	mysql    string // -mysql: the MySQL/MariaDB load benchmark (mysql.go)
}

func main() {
	var c config
	flag.IntVar(&c.contacts, "n", 1_000_000, "contacts to seed")
	flag.DurationVar(&c.duration, "d", 10*time.Second, "how long each target runs in a round (not -flood: the duration of each wrk run)")
	flag.DurationVar(&c.slice, "slice", 2*time.Second, "the length of a target's turn within a round, whole seconds (see turns.go)")
	flag.IntVar(&c.rounds, "rounds", 5, "rounds of the wrk runs, whose median is checked (not -flood)")
	flag.IntVar(&c.threads, "t", 2, "wrk threads")
	flag.IntVar(&c.conns, "c", 32, "wrk connections")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary data directory")
	flag.StringVar(&c.server, "server", "", "example server binary to use (default: go build ./examples/server)")
	flag.BoolVar(&c.flood, "flood", false, "measure a login flood instead (defaults then: -c 64 -d 15s)")
	flag.StringVar(&c.scenarios, "scenarios", "ab", "scenarios of -flood to run: a, b or ab")
	flag.BoolVar(&c.verbose, "v", false, "print wrk's output (-flood)")
	flag.BoolVar(&c.propagation, "propagation", false, "measure how fast revocations reach a remote verifier instead (see propagation.go)")
	flag.IntVar(&c.revocations, "revocations", 100, "revocations per series (-propagation)")
	flag.StringVar(&c.pg, "pg", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "PostgreSQL server on which -propagation creates and drops a database")
	flag.StringVar(&c.postgres, "postgres", "", "run the load benchmark on PostgreSQL instead: a server URL on which it creates and drops a database (see postgres.go)")
	flag.StringVar(&c.mysql, "mysql", "", "run the load benchmark on MySQL or MariaDB instead: a mysql:// server URL on which it creates and drops a database (see mysql.go)")
	flag.Parse()
	if c.rounds < 1 {
		fmt.Fprintln(os.Stderr, "bench: -rounds must be at least 1")
		os.Exit(2)
	}
	if c.slice < time.Second || c.slice%time.Second != 0 || c.duration%time.Second != 0 {
		fmt.Fprintln(os.Stderr, "bench: -d and -slice must be whole seconds, -slice at least 1s")
		os.Exit(2)
	}
	run := run
	if c.flood {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["c"] {
			c.conns = 64
		}
		if !set["d"] {
			c.duration = 15 * time.Second
		}
		run = runFlood
	}
	if c.propagation {
		run = runPropagation
	}
	if c.postgres != "" {
		run = runPostgres
	}
	if c.mysql != "" {
		run = runMySQL
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	work, bin, cleanup, err := prepare(c, "latchkey-bench-", "data directory:")
	if err != nil {
		return err
	}
	defer cleanup()
	data := filepath.Join(work, "data")
	cli := func(args ...string) (map[string]any, error) { return runCLI(bin, data, args...) }
	// The other commands need an existing deployment.
	if _, err := cli("project", "create", "bench"); err != nil {
		return err
	}

	fmt.Printf("seeding %d contacts ...\n", c.contacts)
	start := time.Now()
	if _, err := cli("contact", "seed", "-project", "default", "-n", strconv.Itoa(c.contacts)); err != nil {
		return err
	}
	seed := time.Since(start)
	marker, err := cli("contact", "create", "-project", "default", "-name", "Marker")
	if err != nil {
		return err
	}
	if _, err := cli("contact", "seed", "-project", "default", "-n", "100"); err != nil {
		return err
	}
	key, err := cli("key", "create", "-project", "default", "-name", "bench")
	if err != nil {
		return err
	}
	token := key["token"].(string)
	const email, password = "bench@example.com", "correct horse battery staple"
	if _, err := runCLIInput(bin, data, password+"\n", "user", "create", "-project", "default", "-email", email); err != nil {
		return err
	}
	cursor := marker["id"].(string) + ":" + marker["created_at"].(string)

	srv, err := startServer(bin, work, token, "-data", data)
	if err != nil {
		return err
	}
	defer srv.stop()
	base, page1URL, page1, hdr, ready := srv.base, srv.page1URL, srv.page1, srv.hdr, srv.ready
	deepURL := page1URL + "&cursor=" + url.QueryEscape(cursor)
	loginToken, _, err := login(base, email, password)
	if err != nil {
		return err
	}
	if _, _, err := get(page1URL, loginToken); err != nil {
		return err
	}
	deep, _, err := get(deepURL, token)
	if err != nil {
		return err
	}
	if !bytes.Contains(deep, []byte(`"data":[{`)) {
		return fmt.Errorf("the deep page is empty: %s", deep)
	}

	bare, err := startBare(page1, hdr)
	if err != nil {
		return err
	}
	defer bare.Close()

	rss := &rssSampler{pid: srv.cmd.Process.Pid}
	targets := []*target{
		// The bare handler gets the same request, Authorization header
		// included, and answers the same bytes: the ratio is what Latchkey
		// adds to that work.
		{name: "bare net/http, same bytes", url: "http://" + bare.Addr().String() + "/v1/contacts?limit=25", token: token, pid: os.Getpid()},
		{name: "GET /v1/contacts?limit=25", url: page1URL, token: token, pid: srv.cmd.Process.Pid},
		{name: "same, with a login token", url: page1URL, token: loginToken, pid: srv.cmd.Process.Pid},
		{name: "same, after 1,000,001 contacts", url: deepURL, token: token, pid: srv.cmd.Process.Pid},
	}
	fmt.Printf("wrk -t%d -c%d for %s on each of: bare handler, page 1 (API key), page 1 (login token), deep page, in turns of %s; %d rounds, the order rotated each round\n",
		c.threads, c.conns, c.duration, c.slice, c.rounds)
	stopRSS := rss.start()
	for r := range c.rounds {
		sums := make([]turnSum, len(targets))
		err := eachTurn(c, r, len(targets), func(k int, d time.Duration) error {
			t := targets[k]
			cpu0 := cpuTime(t.pid)
			rps, lat, err := runWrk(c, d, t.url, t.token)
			if err != nil {
				return err
			}
			sums[k].add(d, rps, lat, cpuTime(t.pid)-cpu0, 0)
			return nil
		})
		if err != nil {
			stopRSS()
			return err
		}
		for k, t := range targets {
			t.rounds = append(t.rounds, result{rps: sums[k].rps(), lat: sums[k].lat(), cpu: sums[k].cpu})
		}
		bareT, p1T, loginT, deepT := targets[0].rounds[r], targets[1].rounds[r], targets[2].rounds[r], targets[3].rounds[r]
		fmt.Printf("  round %d: %8.0f %8.0f %8.0f %8.0f req/s   page 1 / bare %5.1f %% (login token %5.1f %%)   deep / page 1 %.2fx\n",
			r+1, bareT.rps, p1T.rps, loginT.rps, deepT.rps, 100*p1T.rps/bareT.rps, 100*loginT.rps/bareT.rps, deepT.rps/p1T.rps)
	}
	stopRSS()
	hwm := readStatusKB(srv.cmd.Process.Pid, "VmHWM")
	// Each ratio is taken within a round, whose turns interleave, and the
	// median over the rounds is reported (docs/benchmarks.md, "The load benchmark").
	p1Ratio := median(targets[0].ratios(targets[1]))
	loginRatio := median(targets[0].ratios(targets[2]))
	deepRatio := median(targets[1].ratios(targets[3]))

	fmt.Println()
	fmt.Printf("%-34s %10s %12s %16s   (medians over the rounds)\n", "", "req/s", "avg latency", "server CPU/req")
	for _, t := range targets {
		m := t.median()
		fmt.Printf("%-34s %10.0f %12s %16s\n", t.name, m.rps, m.lat, perRequest(m.cpu, m.rps, c.duration))
	}
	fmt.Println()
	check("page 1 / bare (API key)", p1Ratio >= 0.50, fmt.Sprintf("%.1f %%", 100*p1Ratio), ">= 50 %")
	check("page 1 / bare (login token)", loginRatio >= 0.50, fmt.Sprintf("%.1f %%", 100*loginRatio), ">= 50 %")
	check("deep page / page 1", deepRatio >= 0.9, fmt.Sprintf("%.2fx", deepRatio), ">= 0.90x")
	check(fmt.Sprintf("seed %d contacts", c.contacts), seed <= 30*time.Second, fmt.Sprintf("%.1f s", seed.Seconds()), "<= 30 s")
	check("serve ready", ready <= 300*time.Millisecond, fmt.Sprintf("%d ms", ready.Milliseconds()), "<= 300 ms")
	maxRSS := rss.max()
	check("RSS under load (max sampled)", maxRSS <= 100<<10, fmt.Sprintf("%.1f MiB", float64(maxRSS)/1024), "<= 100 MiB")
	fmt.Printf("     %-34s %14s\n", "peak RSS (VmHWM, whole run)", fmt.Sprintf("%.1f MiB", float64(hwm)/1024))
	fmt.Printf("\npage 1 is %d bytes; the server wrote %d log lines to %s\n", len(page1), countLines(srv.logPath), filepath.Base(srv.logPath))
	return nil
}

// target is one URL the benchmark drives, and its results, one per round.
type target struct {
	name, url, token string
	pid              int // the process whose CPU time serves it
	rounds           []result
}

// result is a target's turns of one round.
type result struct {
	rps float64
	lat string
	cpu time.Duration
}

// ratios returns, for each round, u's requests per second over t's.
func (t *target) ratios(u *target) []float64 {
	rs := make([]float64, len(t.rounds))
	for i := range t.rounds {
		rs[i] = u.rounds[i].rps / t.rounds[i].rps
	}
	return rs
}

// median returns the round with the median requests per second.
func (t *target) median() result {
	rs := slices.Clone(t.rounds)
	slices.SortFunc(rs, func(a, b result) int { return cmp.Compare(a.rps, b.rps) })
	return rs[len(rs)/2]
}

// median returns the median of xs (the upper one of an even count).
func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// prepare does the setup both benchmarks share: it checks that wrk is
// installed, creates a temporary work directory (named with prefix; printed
// after label when -keep is given, else removed by cleanup) and builds the
// example server into it unless -server names a binary. It returns the work
// directory, the server binary and cleanup, which the caller defers; on error
// it has already cleaned up.
func prepare(c config, prefix, label string) (work, bin string, cleanup func(), err error) {
	if _, err := exec.LookPath("wrk"); err != nil {
		return "", "", nil, errors.New("wrk is not installed (Debian/Ubuntu: apt-get install wrk)")
	}
	work, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", "", nil, err
	}
	cleanup = func() { _ = os.RemoveAll(work) }
	if c.keep {
		fmt.Println(label, work)
		cleanup = func() {}
	}
	bin = c.server
	if bin == "" {
		bin = filepath.Join(work, "server")
		fmt.Println("building ./examples/server ...")
		build := exec.Command("go", "build", "-o", bin, "./examples/server")
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			cleanup()
			return "", "", nil, fmt.Errorf("building the example server (run from the repository root): %w", err)
		}
	}
	return work, bin, cleanup, nil
}

// runCLI runs one command of the example server and returns its last
// output line.
func runCLI(bin, data string, args ...string) (map[string]any, error) {
	return runCLIWith(bin, data, nil, args...)
}

// runCLIWith is runCLI with stdin read from stdin (nil: none).
func runCLIWith(bin, data string, stdin io.Reader, args ...string) (map[string]any, error) {
	args = append(args[:2:2], append([]string{"-data", data}, args[2:]...)...)
	cmd := exec.Command(bin, args...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%v: %v: %s", args, err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var v map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &v); err != nil {
		return nil, fmt.Errorf("%v: output %q: %v", args, stdout.String(), err)
	}
	return v, nil
}

// freeAddr returns a loopback address with a free port.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func get(u, token string) ([]byte, http.Header, error) {
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("GET %s: %s: %s", u, res.Status, b)
	}
	return b, res.Header, nil
}

// waitReady polls u until it answers 200 and returns that answer.
func waitReady(u, token string, limit time.Duration) ([]byte, http.Header, error) {
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := client.Do(req)
		if err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return b, res.Header, nil
			}
			return nil, nil, fmt.Errorf("GET %s: %s: %s", u, res.Status, b)
		}
		if time.Now().After(deadline) {
			return nil, nil, fmt.Errorf("the server was not ready within %s: %v", limit, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// startBare serves body with the given headers on a free port: the bare
// net/http baseline.
func startBare(body []byte, hdr http.Header) (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, k := range []string{"Content-Type", "Cache-Control", "X-Content-Type-Options"} {
			if v := hdr.Get(k); v != "" {
				w.Header().Set(k, v)
			}
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})
	go func() { _ = http.Serve(ln, h) }()
	return ln, nil
}

var (
	rpsRE = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	latRE = regexp.MustCompile(`Latency\s+(\S+)`)
	errRE = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
)

// runWrk runs wrk on u for d and returns its requests per second and average
// latency. Any non-2xx answer fails the run.
func runWrk(c config, d time.Duration, u, token string) (float64, string, error) {
	args := []string{fmt.Sprintf("-t%d", c.threads), fmt.Sprintf("-c%d", c.conns), fmt.Sprintf("-d%ds", int(d.Seconds()))}
	if token != "" {
		args = append(args, "-H", "Authorization: Bearer "+token)
	}
	args = append(args, u)
	ctx, cancel := context.WithTimeout(context.Background(), d+time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "wrk", args...).CombinedOutput()
	if err != nil {
		return 0, "", fmt.Errorf("wrk: %v: %s", err, out)
	}
	if m := errRE.FindSubmatch(out); m != nil {
		return 0, "", fmt.Errorf("wrk saw %s error answers:\n%s", m[1], out)
	}
	m := rpsRE.FindSubmatch(out)
	if m == nil {
		return 0, "", fmt.Errorf("no Requests/sec in wrk output:\n%s", out)
	}
	rps, _ := strconv.ParseFloat(string(m[1]), 64)
	lat := ""
	if l := latRE.FindSubmatch(out); l != nil {
		lat = string(l[1])
	}
	return rps, lat, nil
}

// rssSampler samples a process's resident set size.
type rssSampler struct {
	pid   int
	every time.Duration // zero means 50 ms
	mu    sync.Mutex
	hi    int64 // KiB
}

// start samples every s.every until the returned function is called.
func (s *rssSampler) start() (stop func()) {
	done := make(chan struct{})
	every := s.every
	if every <= 0 {
		every = 50 * time.Millisecond
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if kb := readStatusKB(s.pid, "VmRSS"); kb > 0 {
				s.mu.Lock()
				s.hi = max(s.hi, kb)
				s.mu.Unlock()
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func (s *rssSampler) max() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hi
}

// cpuTime returns the user plus system CPU time a process has used so far,
// from /proc/PID/stat.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}

// perRequest formats the CPU time spent per request of a run.
func perRequest(cpu time.Duration, rps float64, d time.Duration) string {
	n := rps * d.Seconds()
	if n <= 0 || cpu <= 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f µs", float64(cpu.Microseconds())/n)
}

// readStatusKB reads a "Name:   1234 kB" field of /proc/PID/status.
func readStatusKB(pid int, name string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte{'\n'})
}

// benchServer is an example server started for a benchmark.
type benchServer struct {
	cmd      *exec.Cmd
	base     string      // its base URL, http://ADDR
	page1URL string      // GET /v1/contacts?limit=25 on it
	page1    []byte      // page 1's body, as first answered
	hdr      http.Header // page 1's headers
	ready    time.Duration
	logPath  string // the server's log
}

// check prints one target's line: ok or MISS, what it measures, the
// figure reached and the target.
func check(name string, ok bool, got, target string) {
	mark := "ok  "
	if !ok {
		mark = "MISS"
	}
	fmt.Printf("%s %-34s %14s   target %s\n", mark, name, got, target)
}

// startServer starts `bin serve -addr ADDR args...` on a free address,
// its log going to server.log in work, and waits until page 1 answers 200
// to token; ready is the time from the start of the process to that
// answer. Call stop to end the server.
func startServer(bin, work, token string, args ...string) (*benchServer, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(work, "server.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append([]string{"serve", "-addr", addr}, args...)...)
	cmd.Stdout, cmd.Stderr = io.Discard, logFile
	s := &benchServer{cmd: cmd, base: "http://" + addr, logPath: logFile.Name()}
	s.page1URL = s.base + "/v1/contacts?limit=25"
	start := time.Now()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, err
	}
	if s.page1, s.hdr, err = waitReady(s.page1URL, token, 10*time.Second); err != nil {
		s.stop()
		return nil, err
	}
	s.ready = time.Since(start)
	return s, nil
}

// stop ends the server (SIGTERM) and waits for it.
func (s *benchServer) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
	if f, ok := s.cmd.Stderr.(*os.File); ok {
		_ = f.Close()
	}
}
