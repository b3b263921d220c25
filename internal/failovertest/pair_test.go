package failovertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// envPair names the directory of the pair .ci/pgpair started. Unset, the
// tests skip; set, they fail when the pair is missing.
const envPair = "LATCHKEY_TEST_FAILOVER"

// pairScript is .ci/pgpair, from this package's directory.
const pairScript = "../../.ci/pgpair"

// adminTimeout bounds one administrative statement or script run.
const adminTimeout = 2 * time.Minute

// pairUsed says whether a test of this process promoted the pair's standby,
// so that the next test needs a fresh pair.
var pairUsed struct {
	sync.Mutex
	used bool
}

// pair is a PostgreSQL primary with a synchronous standby, made by
// .ci/pgpair in dir.
type pair struct {
	dir              string
	primary, standby string // host:port
}

// newPair returns the pair named by LATCHKEY_TEST_FAILOVER, checked to be a
// running primary with a synchronous standby. When an earlier test used it
// up, it is made again first (.ci/pgpair reset). It skips t when the
// variable is unset and fails t when the pair is missing or unhealthy.
func newPair(t *testing.T) *pair {
	t.Helper()
	dir := os.Getenv(envPair)
	if dir == "" {
		t.Skipf("%s is unset: no PostgreSQL pair to fail over (see the package documentation)", envPair)
	}
	pairUsed.Lock()
	used := pairUsed.used
	pairUsed.Unlock()
	if used {
		runScript(t, "reset", dir)
		pairUsed.Lock()
		pairUsed.used = false
		pairUsed.Unlock()
	}
	p := &pair{dir: dir, primary: readPort(t, dir, "primary"), standby: readPort(t, dir, "standby")}
	p.checkHealthy(t)
	return p
}

// readPort returns 127.0.0.1:port of the node's port file in dir.
func readPort(t *testing.T, dir, node string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, node+".port"))
	if err != nil {
		t.Fatalf("%s=%s names no pair made by .ci/pgpair start: %v", envPair, dir, err)
	}
	return "127.0.0.1:" + strings.TrimSpace(string(b))
}

// runScript runs .ci/pgpair with args.
func runScript(t *testing.T, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, pairScript, args...).CombinedOutput()
	if err != nil {
		t.Fatalf(".ci/pgpair %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// checkHealthy fails t unless the primary takes writes and the standby
// replays from it as its synchronous standby.
func (p *pair) checkHealthy(t *testing.T) {
	t.Helper()
	var state string
	p.queryRow(t, p.primary, "postgres", `SELECT coalesce((SELECT sync_state FROM pg_stat_replication
		WHERE sync_state = 'sync' LIMIT 1), 'none') || ':' || pg_is_in_recovery()::text`).scan(t, &state)
	if state != "sync:false" {
		t.Fatalf("the pair's primary %s is not a primary with a synchronous standby (sync state and recovery: %s)", p.primary, state)
	}
	var recovery bool
	p.queryRow(t, p.standby, "postgres", "SELECT pg_is_in_recovery()").scan(t, &recovery)
	if !recovery {
		t.Fatalf("the pair's standby %s is not in recovery", p.standby)
	}
}

// use notes that the test is about to promote the standby: the next test
// needs a fresh pair.
func (p *pair) use() {
	pairUsed.Lock()
	defer pairUsed.Unlock()
	pairUsed.used = true
}

// promote promotes the standby and returns once it accepts writes.
func (p *pair) promote(t *testing.T) {
	t.Helper()
	p.use()
	runScript(t, "promote", p.dir)
}

// stopPrimary stops the primary at once, as a crash would.
func (p *pair) stopPrimary(t *testing.T) {
	t.Helper()
	p.use()
	runScript(t, "stop-primary", p.dir)
}

// createDatabase creates a database of a random name on the primary and
// returns its name.
func (p *pair) createDatabase(t *testing.T) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "latchkey_failover_" + hex.EncodeToString(b[:])
	p.exec(t, p.primary, "postgres", "CREATE DATABASE "+name)
	return name
}

// multiHostURL is the URL an instance uses: both servers, the one that
// takes writes chosen.
func (p *pair) multiHostURL(db string) string {
	return fmt.Sprintf("postgres://postgres@%s,%s/%s?target_session_attrs=read-write&sslmode=disable", p.primary, p.standby, db)
}

// nodeURL is the URL of database db on the server at addr alone.
func nodeURL(addr, db string) string {
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable&connect_timeout=5", addr, db)
}

// connect opens a connection to database db on the server at addr.
func connect(t *testing.T, addr, db string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	c, err := pgx.Connect(ctx, nodeURL(addr, db))
	if err != nil {
		t.Fatalf("connect to %s/%s: %v", addr, db, err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// exec runs sql on a fresh connection to database db at addr.
func (p *pair) exec(t *testing.T, addr, db, sql string) {
	t.Helper()
	c := connect(t, addr, db)
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	if _, err := c.Exec(ctx, sql); err != nil {
		t.Fatalf("%s on %s: %v", sql, addr, err)
	}
	_ = c.Close(ctx)
}

// row is one row of queryRow.
type row struct {
	sql string
	r   pgx.Row
}

func (r row) scan(t *testing.T, dest ...any) {
	t.Helper()
	if err := r.r.Scan(dest...); err != nil {
		t.Fatalf("%s: %v", r.sql, err)
	}
}

// queryRow runs sql on a fresh connection to database db at addr.
func (p *pair) queryRow(t *testing.T, addr, db, sql string, args ...any) row {
	t.Helper()
	c := connect(t, addr, db)
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	t.Cleanup(cancel)
	return row{sql, c.QueryRow(ctx, sql, args...)}
}

// waitReplayed waits until the standby has replayed everything the primary
// has written, so that what was committed is visible there.
func (p *pair) waitReplayed(t *testing.T) {
	t.Helper()
	var lsn string
	p.queryRow(t, p.primary, "postgres", "SELECT pg_current_wal_lsn()::text").scan(t, &lsn)
	c := connect(t, p.standby, "postgres")
	deadline := time.Now().Add(adminTimeout)
	for {
		var done bool
		if err := c.QueryRow(context.Background(), "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", lsn).Scan(&done); err != nil {
			t.Fatalf("the standby's replay position: %v", err)
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby did not replay up to %s in %s", lsn, adminTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
