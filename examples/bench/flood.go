package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
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

// floodScript is the wrk script of the login flood: every request is a POST
// of JSON to the URL's path with an email never used before (thread id and
// counter, prefixed by the first script argument) and a wrong password, so
// that only the per-address limit can stop it. It counts the answers by
// status and prints "status CODE COUNT" lines when wrk is done.
const floodScript = `
local threads = {}
local next_id = 1

function setup(thread)
  thread:set("id", next_id)
  table.insert(threads, thread)
  next_id = next_id + 1
end

function init(args)
  prefix = args[1] or "flood"
  n = 0
  codes = {}
end

function request()
  n = n + 1
  local body = string.format('{"email":"%s-%d-%d@example.com","password":"wrong-password-%d"}', prefix, id, n, n)
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, body)
end

function response(status, headers, body)
  codes[status] = (codes[status] or 0) + 1
end

function done(summary, latency, requests)
  local total = {}
  for _, t in ipairs(threads) do
    for code, count in pairs(t:get("codes")) do
      total[code] = (total[code] or 0) + count
    end
  end
  for code, count in pairs(total) do
    io.write(string.format("status %d %d\n", code, count))
  end
end
`

// floodScenario is one run of the login flood against a fresh server.
type floodScenario struct {
	name         string
	addressLimit int // -login-address-limit of the server; 0 keeps the default
}

// floodResult is what one scenario measured.
type floodResult struct {
	scenario   floodScenario
	loadBefore string
	loadAfter  string
	idle       latencies // authenticated GETs with no flood
	flood      latencies // authenticated GETs during the flood
	rssMax     int64     // KiB, sampled every 100 ms during the flood
	rssHWM     int64     // KiB, VmHWM at the end
	codes      map[int]int
	floodRPS   float64
	floodLat   string
	cpu        time.Duration // server CPU time during the flood
	hashes     int           // 401 answers: one argon2id hash each
	sockErrs   string        // wrk's socket errors line, if any
	duration   time.Duration // of the flood
}

// runFlood runs the login flood scenarios and prints their figures.
func runFlood(c config) error {
	work, bin, cleanup, err := prepare(c, "latchkey-flood-", "work directory:")
	if err != nil {
		return err
	}
	defer cleanup()
	script := filepath.Join(work, "flood.lua")
	if err := os.WriteFile(script, []byte(floodScript), 0o600); err != nil {
		return err
	}
	scenarios := []floodScenario{
		{name: "a: default throttling (one client address)"},
		{name: "b: address limit lifted (-login-address-limit 1000000000)", addressLimit: 1_000_000_000},
	}
	var results []floodResult
	for i, s := range scenarios {
		if !strings.Contains(c.scenarios, s.name[:1]) {
			continue
		}
		fmt.Printf("\nscenario %s\n", s.name)
		r, err := floodOnce(c, bin, filepath.Join(work, fmt.Sprintf("scenario-%d", i)), script, s)
		if err != nil {
			return fmt.Errorf("scenario %s: %w", s.name, err)
		}
		results = append(results, r)
		printFlood(r)
	}
	fmt.Println("\nsummary (targets: RSS < 256 MiB; authenticated GET p99 <= 100 ms during the flood)")
	for _, r := range results {
		p99 := r.flood.percentile(99)
		fmt.Printf("%s %-60s peak RSS %6.1f MiB   GET p99 %8s\n", mark(r.rssMax < 256<<10 && p99 <= 100*time.Millisecond),
			r.scenario.name, float64(r.rssMax)/1024, fmtDur(p99))
	}
	return nil
}

func mark(ok bool) string {
	if ok {
		return "ok  "
	}
	return "MISS"
}

// floodOnce starts a server on a fresh data directory dir, creates a user
// and an API key, measures the authenticated endpoint idle, then floods
// login with wrk while it measures the endpoint and the server's RSS.
func floodOnce(c config, bin, dir, script string, s floodScenario) (floodResult, error) {
	r := floodResult{scenario: s, duration: c.duration}
	data := filepath.Join(dir, "data")
	// The other commands need an existing deployment.
	if _, err := runCLI(bin, data, "project", "create", "flood"); err != nil {
		return r, err
	}
	if _, err := runCLIInput(bin, data, "correct horse battery staple\n", "user", "create", "-project", "default", "-email", "victim@example.com"); err != nil {
		return r, err
	}
	key, err := runCLI(bin, data, "key", "create", "-project", "default", "-name", "flood")
	if err != nil {
		return r, err
	}
	token := key["token"].(string)

	addr, err := freeAddr()
	if err != nil {
		return r, err
	}
	logFile, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return r, err
	}
	defer logFile.Close()
	args := []string{"serve", "-data", data, "-addr", addr}
	if s.addressLimit > 0 {
		args = append(args, "-login-address-limit", strconv.Itoa(s.addressLimit))
	}
	srv := exec.Command(bin, args...)
	srv.Stdout, srv.Stderr = io.Discard, logFile
	if err := srv.Start(); err != nil {
		return r, err
	}
	defer func() {
		_ = srv.Process.Signal(syscall.SIGTERM)
		_ = srv.Wait()
	}()
	base := "http://" + addr
	getURL := base + "/v1/contacts?limit=25"
	if _, _, err := waitReady(getURL, token, 10*time.Second); err != nil {
		return r, err
	}

	r.loadBefore = loadAvg()
	r.idle, err = probe(context.Background(), getURL, token, 3*time.Second)
	if err != nil {
		return r, err
	}

	rss := &rssSampler{pid: srv.Process.Pid, every: 100 * time.Millisecond}
	stopRSS := rss.start()
	cpu0 := cpuTime(srv.Process.Pid)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var probeErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Let wrk open its connections first; stop with it.
		time.Sleep(500 * time.Millisecond)
		r.flood, probeErr = probe(ctx, getURL, token, c.duration)
	}()
	prefix := fmt.Sprintf("flood%d", time.Now().UnixNano())
	out, werr := exec.Command("wrk", fmt.Sprintf("-t%d", c.threads), fmt.Sprintf("-c%d", c.conns),
		fmt.Sprintf("-d%ds", int(c.duration.Seconds())), "--timeout", "10s", "-s", script,
		base+"/v1/identity/login", "--", prefix).CombinedOutput()
	cancel()
	wg.Wait()
	r.cpu = cpuTime(srv.Process.Pid) - cpu0
	stopRSS()
	r.rssMax = rss.max()
	r.rssHWM = readStatusKB(srv.Process.Pid, "VmHWM")
	r.loadAfter = loadAvg()
	if werr != nil {
		return r, fmt.Errorf("wrk: %v: %s", werr, out)
	}
	if probeErr != nil {
		return r, probeErr
	}
	r.codes = map[int]int{}
	for _, m := range statusRE.FindAllSubmatch(out, -1) {
		code, _ := strconv.Atoi(string(m[1]))
		n, _ := strconv.Atoi(string(m[2]))
		r.codes[code] += n
	}
	if m := rpsRE.FindSubmatch(out); m != nil {
		r.floodRPS, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	if m := latRE.FindSubmatch(out); m != nil {
		r.floodLat = string(m[1])
	}
	r.hashes = r.codes[http.StatusUnauthorized]
	if m := sockRE.FindSubmatch(out); m != nil {
		r.sockErrs = string(m[1])
	}
	if c.verbose {
		fmt.Printf("%s", out)
	}
	return r, nil
}

var (
	statusRE = regexp.MustCompile(`(?m)^status (\d+) (\d+)$`)
	sockRE   = regexp.MustCompile(`Socket errors: ([^\n]*)`)
)

// printFlood prints one scenario's raw figures.
func printFlood(r floodResult) {
	fmt.Printf("  load average before / after:     %s / %s\n", r.loadBefore, r.loadAfter)
	codes := make([]int, 0, len(r.codes))
	total := 0
	for code, n := range r.codes {
		codes = append(codes, code)
		total += n
	}
	slices.Sort(codes)
	var mix []string
	for _, code := range codes {
		mix = append(mix, fmt.Sprintf("%d: %d", code, r.codes[code]))
	}
	fmt.Printf("  login flood:                     %d answers, %.0f req/s, wrk avg latency %s\n", total, r.floodRPS, r.floodLat)
	fmt.Printf("  login status mix:                %s\n", strings.Join(mix, ", "))
	fmt.Printf("  argon2id hashes (the 401s):      %d, %.1f per second of flood\n", r.hashes, float64(r.hashes)/r.duration.Seconds())
	if r.sockErrs != "" {
		fmt.Printf("  wrk socket errors:               %s\n", r.sockErrs)
	}
	fmt.Printf("  server CPU during the flood:     %.1f s\n", r.cpu.Seconds())
	fmt.Printf("  server RSS, max sampled (100 ms): %.1f MiB (VmHWM %.1f MiB)\n", float64(r.rssMax)/1024, float64(r.rssHWM)/1024)
	fmt.Printf("  GET /v1/contacts?limit=25 idle:  %s\n", r.idle)
	fmt.Printf("  same, during the flood:          %s\n", r.flood)
}

// latencies are the durations of sequential requests.
type latencies []time.Duration

// percentile returns the p-th percentile (nearest rank).
func (l latencies) percentile(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func (l latencies) String() string {
	if len(l) == 0 {
		return "no requests"
	}
	return fmt.Sprintf("n=%d p50 %s p90 %s p99 %s max %s", len(l),
		fmtDur(l.percentile(50)), fmtDur(l.percentile(90)), fmtDur(l.percentile(99)), fmtDur(l.percentile(100)))
}

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
}

// probeGap is the pause between two probe requests: the authenticated
// client is another user of the service, not a second flood.
const probeGap = 10 * time.Millisecond

// probe requests u with the bearer token one request at a time, a probeGap
// apart, for d or until ctx ends, and returns every request's duration.
// Any answer but 200 is an error.
func probe(ctx context.Context, u, token string, d time.Duration) (latencies, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	var lat latencies
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		req, err := http.NewRequest("GET", u, nil)
		if err != nil {
			return lat, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return lat, err
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		elapsed := time.Since(start)
		if err != nil {
			return lat, err
		}
		if res.StatusCode != http.StatusOK {
			return lat, fmt.Errorf("GET %s: %s", u, res.Status)
		}
		lat = append(lat, elapsed)
		time.Sleep(probeGap)
	}
	return lat, nil
}

// runCLIInput is runCLI with input on the command's stdin.
func runCLIInput(bin, data, input string, args ...string) (map[string]any, error) {
	return runCLIWith(bin, data, strings.NewReader(input), args...)
}

// loadAvg returns the 1, 5 and 15 minute load averages of the machine.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(bytes.TrimSpace(b)))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
