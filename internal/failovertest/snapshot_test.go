package failovertest

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store/postgres"
)

// TestFailover_SnapshotReuse: an instance that read API key K, and a
// request with a login token of session S, on the old primary after the
// standby was promoted refuses both once K is revoked and S logged out on
// the new primary, even when the new primary's snapshot is, as text,
// exactly the snapshot the instance read them in. A promoted standby hands
// out again the transaction ids the old primary used after the promotion,
// so the two servers' snapshots can be equal as text while they see
// different commits: snapshot text alone does not name a database state.
func TestFailover_SnapshotReuse(t *testing.T) {
	p := newPair(t)
	ctx := t.Context()
	db := p.createDatabase(t)
	in := startInstance(t, "a", p.multiHostURL(db))
	createContacts(t, in, 3)
	k, kToken, err := in.lk.APIKeys().Create(ctx, project, "k")
	require.NoError(t, err, "create key K")
	_, otherToken, err := in.lk.APIKeys().Create(ctx, project, "other")
	require.NoError(t, err, "create the other key")
	_, err = in.lk.Users().Create(ctx, project, "ada@example.com", "pw-ada-secret", nil)
	require.NoError(t, err, "create a user")
	login := in.login(ctx, "ada@example.com", "pw-ada-secret")
	require.Equal(t, http.StatusOK, login.status, "login: %s", login)
	session := login.tokens()
	sid := familyOf(t, in, session.AccessToken).ID
	// Each token is used while the pair is healthy: a key's last use is
	// written now, not later.
	for _, tok := range []string{kToken, otherToken, session.AccessToken} {
		for range 2 {
			a := in.contacts(ctx, tok)
			require.Equal(t, http.StatusOK, a.status, "GET /v1/contacts before the failover: %s", a)
		}
	}
	p.waitReplayed(t)

	p.promote(t)
	oldPrimary := connect(t, p.primary, db)
	newPrimary := connect(t, p.standby, db)
	// The old primary's synchronous standby is gone: its own sessions
	// commit locally, as an old primary nobody fenced would.
	mustExec(t, oldPrimary, "SET synchronous_commit = local")
	// The old primary runs ahead of the new one by some transactions, so
	// that the new one can reach the old one's snapshot by running its own.
	oldNext, newNext := nextXid(t, oldPrimary), nextXid(t, newPrimary)
	for range max(0, newNext-oldNext) + 20 {
		mustExec(t, oldPrimary, "SELECT pg_current_xact_id()")
	}

	// The instance reads with K and with the login token on the old
	// primary: its pool's connections are there, and the old primary is
	// the first read-write host.
	seen := snapshotOf(t, oldPrimary)
	for _, tok := range []string{kToken, session.AccessToken} {
		a := in.contacts(ctx, tok)
		require.Equal(t, http.StatusOK, a.status, "GET /v1/contacts on the old primary after the promotion: %s", a)
	}
	require.Equal(t, seen, snapshotOf(t, oldPrimary), "the old primary's snapshot moved while the instance read: the scenario needs it still")
	require.True(t, strings.HasSuffix(seen, ":"), "the old primary's snapshot %s lists transactions in progress: the scenario needs none", seen)

	p.stopPrimary(t)
	// K is revoked and the session ended on the new primary, by another
	// process.
	admin, err := postgres.Open(ctx, nodeURL(p.standby, db), &postgres.Options{NoMigrate: true, Logger: discardLogger()})
	require.NoError(t, err, "open a store on the new primary")
	t.Cleanup(func() { _ = admin.Close() })
	require.NoError(t, admin.RevokeAPIKey(ctx, project, k.ID, time.Now()), "revoke K on the new primary")
	require.NoError(t, admin.RevokeRefreshFamily(ctx, project, sid, time.Now()), "end the session on the new primary")
	_ = admin.Close()
	// The instance moves to the new primary (a read with the other key).
	a := untilServed(time.Minute, func() answer { return in.contacts(ctx, otherToken) })
	require.Equal(t, http.StatusOK, a.status, "GET /v1/contacts with the other key after the failover: %s", a)

	// The new primary runs transactions until its snapshot is the one
	// the instance read in.
	for {
		s := snapshotOf(t, newPrimary)
		if s == seen {
			break
		}
		require.Less(t, xmax(t, s), xmax(t, seen), "the new primary's snapshot %s is already past %s, the one the instance read in", s, seen)
		mustExec(t, newPrimary, "SELECT pg_current_xact_id()")
	}
	withK := in.contacts(ctx, kToken)
	withSession := in.contacts(ctx, session.AccessToken)
	require.Equal(t, seen, snapshotOf(t, newPrimary), "the new primary's snapshot moved during the requests: the scenario was not exercised")
	t.Logf("read on the old primary and checked on the new one at the same snapshot %s: K %s, the ended session's login token %s", seen, withK, withSession)
	assert.Equal(t, "401 invalid_token", withK.statusCode(),
		"GET /v1/contacts with K, revoked on the new primary at the snapshot K was read in on the old one")
	assert.Equal(t, "401 invalid_token", withSession.statusCode(),
		"GET /v1/contacts with the login token of a session ended on the new primary at the snapshot it was read in on the old one")
}

// snapshotOf returns pg_current_snapshot() as text.
func snapshotOf(t *testing.T, c *pgx.Conn) string {
	t.Helper()
	var s string
	require.NoError(t, c.QueryRow(context.Background(), "SELECT pg_current_snapshot()::text").Scan(&s), "read the snapshot")
	return s
}

// nextXid returns the xmax of the server's current snapshot: the next
// transaction id it will hand out.
func nextXid(t *testing.T, c *pgx.Conn) int {
	t.Helper()
	return xmax(t, snapshotOf(t, c))
}

// xmax returns the xmax of a snapshot's text (xmin:xmax:xip,...).
func xmax(t *testing.T, snapshot string) int {
	t.Helper()
	parts := strings.Split(snapshot, ":")
	if len(parts) != 3 {
		t.Fatalf("snapshot %q is not xmin:xmax:xip", snapshot)
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil {
		t.Fatalf("snapshot %q: %v", snapshot, err)
	}
	return n
}

// mustExec runs sql on c.
func mustExec(t *testing.T, c *pgx.Conn, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	if _, err := c.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
