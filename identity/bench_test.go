package identity_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/store"
)

// durations records the duration of each operation of a benchmark, to
// report medians (less noisy than means on a shared machine).
type durations struct {
	mu sync.Mutex
	d  []time.Duration
}

// time runs fn and records how long it took.
func (d *durations) time(fn func()) {
	start := time.Now()
	fn()
	el := time.Since(start)
	d.mu.Lock()
	d.d = append(d.d, el)
	d.mu.Unlock()
}

// median returns the median recorded duration.
func (d *durations) median() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.d) == 0 {
		return 0
	}
	s := slices.Clone(d.d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// benchEnv is an env on a file database (durable, synchronous=FULL) whose
// limiter never throttles, so that benchmarks measure hashing and I/O.
func benchEnv(b *testing.B) *env {
	b.Helper()
	return newEnv(b, envConfig{
		dbPath:  filepath.Join(b.TempDir(), "bench.db"),
		limiter: memoryLimiter(identity.LimiterOptions{AccountLimit: 1 << 30, AddressLimit: 1 << 30}),
	})
}

// loginOnce posts one login and checks its status.
func (e *env) loginOnce(b *testing.B, email, password string, want int) {
	res := e.login(b, "", email, password)
	if res.status != want {
		b.Fatalf("login(%q) = %d %s, want %d", email, res.status, res.body, want)
	}
}

func benchLoginFailure(b *testing.B, email string) {
	e := benchEnv(b)
	e.createUser(b, "default", "alice@example.com", "correct horse", "")
	var d durations
	b.ResetTimer()
	for b.Loop() {
		d.time(func() { e.loginOnce(b, email, "wrong horse", http.StatusUnauthorized) })
	}
	b.ReportMetric(ms(d.median()), "median-ms")
}

// BenchmarkLogin_WrongPassword measures a login of a known email with a
// wrong password.
func BenchmarkLogin_WrongPassword(b *testing.B) { benchLoginFailure(b, "alice@example.com") }

// BenchmarkLogin_UnknownEmail measures a login of an unknown email.
func BenchmarkLogin_UnknownEmail(b *testing.B) { benchLoginFailure(b, "nobody@example.com") }

// BenchmarkLogin_EnumerationRatio times both failures in each iteration, in
// random order, on one server, so that both see the same machine load, and
// reports the ratio of their medians (unknown email / wrong password);
// 1.00 means no difference. One iteration is two logins.
func BenchmarkLogin_EnumerationRatio(b *testing.B) {
	e := benchEnv(b)
	e.createUser(b, "default", "alice@example.com", "correct horse", "")
	var wrong, unknown durations
	runWrong := func() {
		wrong.time(func() { e.loginOnce(b, "alice@example.com", "wrong horse", http.StatusUnauthorized) })
	}
	runUnknown := func() {
		unknown.time(func() { e.loginOnce(b, "nobody@example.com", "wrong horse", http.StatusUnauthorized) })
	}
	b.ResetTimer()
	for b.Loop() {
		if rand.N(2) == 0 {
			runWrong()
			runUnknown()
		} else {
			runUnknown()
			runWrong()
		}
	}
	b.ReportMetric(ms(wrong.median()), "wrong-median-ms")
	b.ReportMetric(ms(unknown.median()), "unknown-median-ms")
	if w := wrong.median(); w > 0 {
		b.ReportMetric(float64(unknown.median())/float64(w), "ratio")
	}
}

// BenchmarkLogin measures a successful login over HTTP on a file database
// (one argon2id verification, an access token, a new refresh family
// written durably). Each iteration also times one bare argon2id
// verification, interleaved so that both see the same machine load, and the
// benchmark reports the difference of the medians: what a login costs
// beyond its one hash.
func BenchmarkLogin(b *testing.B) {
	e := benchEnv(b)
	e.createUser(b, "default", "alice@example.com", "correct horse", "")
	ctx := context.Background()
	hash, err := e.hasher.Hash(ctx, "correct horse")
	if err != nil {
		b.Fatal(err)
	}
	var login, verify durations
	b.ResetTimer()
	for b.Loop() {
		login.time(func() { e.loginOnce(b, "alice@example.com", "correct horse", http.StatusOK) })
		b.StopTimer()
		verify.time(func() { _, _, _ = e.hasher.Verify(ctx, hash, "correct horse") })
		b.StartTimer()
	}
	b.ReportMetric(ms(login.median()), "median-ms")
	b.ReportMetric(ms(verify.median()), "hash-median-ms")
	b.ReportMetric(ms(login.median()-verify.median()), "overhead-ms")
}

// BenchmarkRefresh measures refresh rotations over HTTP on a file database
// (durable, synchronous=FULL), from parallel clients each rotating its own
// family.
func BenchmarkRefresh(b *testing.B) {
	e := benchEnv(b)
	u := e.createUser(b, "default", "alice@example.com", "correct horse", "")
	ctx := context.Background()
	b.SetParallelism(16)
	const families = 512
	tokens := make(chan string, families)
	now := e.clock.Now()
	for range families {
		id := store.NewID(store.PrefixFamily)
		err := e.st.CreateRefreshFamily(ctx, store.RefreshFamily{
			ID: id, ProjectID: "default", UserID: u.ID, IssuedAt: now,
			ExpiresAt: now.Add(time.Hour), CreatedAt: now,
		}, u.PasswordHash)
		if err != nil {
			b.Fatal(err)
		}
		tokens <- identity.RefreshToken(e.masterKey, "default", id, 0)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	url := e.srv.URL + "/v1/identity/refresh"
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var cur string
		select {
		case cur = <-tokens:
		default:
			b.Error("more parallel clients than families")
			return
		}
		for pb.Next() {
			body, _ := json.Marshal(map[string]string{"refresh_token": cur})
			res, err := client.Post(url, "application/json", bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			var ts tokenSet
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK || json.Unmarshal(raw, &ts) != nil {
				b.Errorf("refresh = %d %s", res.StatusCode, raw)
				return
			}
			cur = ts.RefreshToken
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "refresh/s")
}
