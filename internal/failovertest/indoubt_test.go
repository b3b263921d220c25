package failovertest

import (
	"io"
	"net"
	"net/http"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/store/postgres"
)

// TestFailover_InDoubtRefresh: a refresh whose commit is in doubt (the
// primary wrote it, the synchronous standby has it, but the primary died
// before answering) is answered 503, and the same refresh token presented
// again within the reuse window, once the standby is promoted, gets the
// successor the in-doubt commit made: the user stays logged in, and the
// successor refreshes.
//
// The standby streams from the primary through a proxy of the test, which
// can stop passing the standby's replies: the standby still receives and
// flushes the primary's WAL, but the primary never learns it did, so the
// commit of the refresh waits, applied on both servers, for an
// acknowledgement that never comes, until the primary is stopped.
func TestFailover_InDoubtRefresh(t *testing.T) {
	p := newPair(t)
	ctx := t.Context()
	db := p.createDatabase(t)
	proxy := startProxy(t, p.primary)
	p.streamThrough(t, proxy.addr)

	in := startInstance(t, "a", p.multiHostURL(db), func(o *latchkey.Options) {
		// The retry below comes after a stop and a promotion: a window
		// of a minute keeps the test's outcome from depending on how
		// long they take. The rule tested holds for any window.
		o.Identity = &identity.Options{ReuseWindow: time.Minute}
	})
	_, err := in.lk.Users().Create(ctx, project, "ada@example.com", "pw-ada-secret", nil)
	require.NoError(t, err, "create a user")
	login := in.login(ctx, "ada@example.com", "pw-ada-secret")
	require.Equal(t, http.StatusOK, login.status, "login: %s", login)
	session := login.tokens()
	sid := familyOf(t, in, session.AccessToken).ID

	primary := connect(t, p.primary, db)
	standby := connect(t, p.standby, db)
	proxy.holdReplies(true)
	refreshed := make(chan answer, 1)
	go func() { refreshed <- in.refresh(ctx, session.RefreshToken) }()
	// The refresh's commit is written on the primary when its backend
	// waits for the standby; the standby then receives it.
	waitFor(t, "the refresh's commit waiting for the synchronous standby", func() bool {
		var n int
		require.NoError(t, primary.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'").Scan(&n))
		return n > 0
	})
	var flushed string
	require.NoError(t, primary.QueryRow(ctx, "SELECT pg_current_wal_flush_lsn()::text").Scan(&flushed))
	waitFor(t, "the standby to receive the primary's WAL", func() bool {
		var ok bool
		require.NoError(t, standby.QueryRow(ctx, "SELECT pg_last_wal_receive_lsn() >= $1::pg_lsn", flushed).Scan(&ok))
		return ok
	})

	p.stopPrimary(t)
	first := <-refreshed
	assert.True(t, first.unavailable(), "a refresh whose commit is in doubt: %s (Retry-After %q), want 503 unavailable with Retry-After", first, first.retryAfter)
	p.promote(t)

	// The in-doubt rotation was applied: the new primary has the session
	// at its next generation.
	admin, err := postgres.Open(ctx, nodeURL(p.standby, db), &postgres.Options{NoMigrate: true, Logger: discardLogger()})
	require.NoError(t, err, "open a store on the new primary")
	t.Cleanup(func() { _ = admin.Close() })
	f, err := admin.GetRefreshFamily(ctx, project, sid)
	require.NoError(t, err, "the session on the new primary")
	require.EqualValues(t, 1, f.Generation, "the session's generation on the new primary: the in-doubt rotation should have reached it")

	again := untilServed(recoveryBound, func() answer { return in.refresh(ctx, session.RefreshToken) })
	require.Equal(t, http.StatusOK, again.status, "the in-doubt refresh presented again after the failover: %s", again)
	f, err = admin.GetRefreshFamily(ctx, project, sid)
	require.NoError(t, err, "the session on the new primary")
	assert.EqualValues(t, 1, f.Generation, "the retry got the successor the in-doubt rotation made, rotating nothing")
	next := in.refresh(ctx, again.tokens().RefreshToken)
	assert.Equal(t, http.StatusOK, next.status, "the successor's refresh: %s", next)
	a := in.contacts(ctx, again.tokens().AccessToken)
	assert.Equal(t, http.StatusOK, a.status, "GET /v1/contacts with the retry's access token: %s", a)
}

// waitFor polls cond until it holds, failing t after adminTimeout.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(adminTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", adminTimeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// streamThrough makes the standby stream from the primary through the proxy
// at addr, and waits until the primary counts it as synchronous again.
func (p *pair) streamThrough(t *testing.T, addr string) {
	t.Helper()
	ctx := t.Context()
	standby := connect(t, p.standby, "postgres")
	var conninfo string
	require.NoError(t, standby.QueryRow(ctx, "SHOW primary_conninfo").Scan(&conninfo))
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	through := regexp.MustCompile(`port=\S+`).ReplaceAllString(conninfo, "port="+port)
	require.NotEqual(t, conninfo, through, "the standby's primary_conninfo names no port")
	_, err = standby.Exec(ctx, "ALTER SYSTEM SET primary_conninfo = "+quote(through))
	require.NoError(t, err)
	_, err = standby.Exec(ctx, "SELECT pg_reload_conf()")
	require.NoError(t, err)
	primary := connect(t, p.primary, "postgres")
	waitFor(t, "the standby to stream through the proxy, synchronously", func() bool { return p.proxied(t, primary) })
}

// proxied reports whether the primary has a synchronous standby whose
// replication connection comes from the proxy: the walsender's client port
// is one the proxy dialled from.
func (p *pair) proxied(t *testing.T, primary *pgx.Conn) bool {
	var n int
	require.NoError(t, primary.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_replication
		WHERE sync_state = 'sync' AND client_port = ANY($1)`, proxyPorts()).Scan(&n))
	return n > 0
}

// quote returns s as an SQL string literal.
func quote(s string) string {
	return "'" + regexp.MustCompile(`'`).ReplaceAllString(s, "''") + "'"
}

// proxy forwards TCP connections to a server; holdReplies makes it drop
// what its clients send from then on, while the server's data still flows,
// and refuse new connections.
type proxy struct {
	addr string
	hold atomic.Bool
}

// dialled are the local ports of the proxy's connections to its server.
var dialled struct {
	sync.Mutex
	ports []int32
}

func proxyPorts() []int32 {
	dialled.Lock()
	defer dialled.Unlock()
	return append([]int32(nil), dialled.ports...)
}

// startProxy listens on a free port of 127.0.0.1 and forwards each
// connection to target until the test ends.
func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	pr := &proxy{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	track := func(c net.Conn) {
		mu.Lock()
		defer mu.Unlock()
		conns = append(conns, c)
	}
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			if pr.hold.Load() {
				// Refused: a connection whose client the server never
				// heard would hold a slot of the server until its
				// authentication_timeout, and its shutdown with it.
				_ = client.Close()
				continue
			}
			server, err := net.DialTimeout("tcp", target, 5*time.Second)
			if err != nil {
				_ = client.Close()
				continue
			}
			dialled.Lock()
			dialled.ports = append(dialled.ports, int32(server.LocalAddr().(*net.TCPAddr).Port))
			dialled.Unlock()
			track(client)
			track(server)
			wg.Go(func() {
				_, _ = io.Copy(client, server)
				_ = client.Close()
			})
			wg.Go(func() {
				buf := make([]byte, 32<<10)
				for {
					n, err := client.Read(buf)
					if n > 0 && !pr.hold.Load() {
						if _, werr := server.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				_ = server.Close()
			})
		}
	})
	return pr
}

// holdReplies makes the proxy drop what its clients send and refuse new
// connections (on), or pass and accept them again (off).
func (pr *proxy) holdReplies(on bool) { pr.hold.Store(on) }
