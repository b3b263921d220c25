package postgres

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// identityFormat is what identitySQL sets on a primary:
// system_identifier/timeline/start.
var identityFormat = regexp.MustCompile(`^[0-9]+/[0-9A-F]{8}/[0-9]+$`)

// identifiedConn opens a plain connection to url whose session has its
// identity, as the store's connections do.
func identifiedConn(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	c := rawConn(t, url)
	var id string
	require.NoError(t, c.QueryRow(context.Background(), identitySQL).Scan(&id))
	require.Regexp(t, identityFormat, id)
	return c
}

// setSessionIdentity sets the identity of conn's session to id, as
// identitySQL would on another server (or on a standby, for "").
func setSessionIdentity(t testing.TB, conn interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, id string) {
	t.Helper()
	_, err := conn.Exec(context.Background(), `SELECT set_config('`+identitySetting+`', $1, false)`, id)
	require.NoError(t, err)
}

// TestIdentity_ReadAtConnect: every connection of the pool has the
// database's identity in its session, the one the store recorded.
func TestIdentity_ReadAtConnect(t *testing.T) {
	t.Parallel()
	s := openInternal(t, pgtest.NewDatabase(t))
	ctx := t.Context()
	var conns []*pgxpool.Conn
	for range 3 {
		c, err := s.pool.Acquire(ctx)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	for _, c := range conns {
		var id string
		require.NoError(t, c.QueryRow(ctx, `SELECT `+sessionIdentitySQL).Scan(&id))
		assert.Regexp(t, identityFormat, id)
		s.ident.mu.Lock()
		assert.Equal(t, s.ident.current, id)
		s.ident.mu.Unlock()
		c.Release()
	}
}

// TestCheckedStatement_StateHoldsIdentity checks, in one REPEATABLE READ
// transaction (one snapshot), that the state the checked statement compares
// is the identity of the session it runs on with the snapshot: a state of
// another identity with the very same snapshot text (what a promoted
// standby can show) reads the records, and a session without an identity
// (opened during recovery, or whose identity could not be read) always
// reads them.
func TestCheckedStatement_StateHoldsIdentity(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	s := openInternal(t, url)
	ids, _ := checkedFixture(t, s, "p", 3)
	ctx := t.Context()

	conn := identifiedConn(t, url)
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(context.Background()) }()

	state, kept := checkedRecordsOn(t, conn, ids, "")
	require.False(t, kept)
	id, snap, ok := strings.Cut(state, " ")
	require.True(t, ok, "state %q", state)
	require.Regexp(t, identityFormat, id)
	_, kept = checkedRecordsOn(t, conn, ids, state)
	require.True(t, kept, "the state known is the statement's")

	other := "1/00000002/1 " + snap
	_, kept = checkedRecordsOn(t, conn, ids, other)
	require.False(t, kept, "the same snapshot text on another database: the records are read")

	for _, none := range []string{"", "unset"} {
		if none == "" {
			setSessionIdentity(t, conn, "")
		} else {
			_, err := conn.Exec(ctx, `RESET `+identitySetting)
			require.NoError(t, err)
		}
		got, kept := checkedRecordsOn(t, conn, ids, " "+snap)
		require.Equal(t, " "+snap, got, "%s: a session without an identity", none)
		require.False(t, kept, "%s: a session without an identity never reuses records", none)
		_, kept = checkedRecordsOn(t, conn, ids, state)
		require.False(t, kept, "%s: a session without an identity never reuses records", none)
	}
}

// TestKeptRecords_NotReusedAcrossIdentity replays the failover of the
// issue: an instance keeps a key's records read on the old primary, the
// key is revoked on the promoted standby, and a statement there runs in a
// snapshot whose text is the one the records were kept in. The pool's
// sessions are given another identity (the promoted standby's); the kept
// entry is made, each attempt, with the server's current snapshot text
// and the old identity, and a call whose statement ran in that very
// snapshot must return the revocation. Keyed by the snapshot text alone,
// it would return the kept, unrevoked key. Then the entries of the old
// identity are gone.
func TestKeptRecords_NotReusedAcrossIdentity(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	s, err := Open(t.Context(), url, &Options{Logger: testDiscard, MaxConns: 2, PipelineConns: 1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ids, _ := checkedFixture(t, s, "p", 3)
	ctx := t.Context()
	req := paginate.Request{Limit: 3}
	key := keptKey{"p", ids}

	recs, _, err := s.ListContactsChecked(ctx, "p", ids, req)
	require.NoError(t, err)
	require.False(t, recs.APIKey.Revoked())
	old := s.kept.get(key)
	require.NotNil(t, old)
	oldID := stateIdentity(old.state)
	require.Regexp(t, identityFormat, oldID)

	// The failover: every session of the pool is now on "another server".
	const newID = "1/00000002/1"
	var conns []*pgxpool.Conn
	for range 2 {
		c, err := s.pool.Acquire(ctx)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	for _, c := range conns {
		setSessionIdentity(t, c, newID)
		c.Release()
	}
	require.NoError(t, s.RevokeAPIKey(ctx, "p", ids.APIKeyID, it0.Add(time.Hour)))

	admin := rawConn(t, url)
	deadline := time.Now().Add(20 * time.Second)
	for attempt := 1; ; attempt++ {
		var snap string
		require.NoError(t, admin.QueryRow(ctx, `SELECT pg_current_snapshot()::text`).Scan(&snap))
		s.kept.reset()
		s.kept.put(key, &keptEntry{state: oldID + " " + snap, recs: copyRecords(old.recs)})

		recs, _, err := s.ListContactsChecked(ctx, "p", ids, req)
		require.NoError(t, err)
		require.True(t, recs.APIKey.Revoked(), "attempt %d: a revoked key's records kept on another database were reused", attempt)
		now := s.kept.get(key)
		require.NotNil(t, now)
		require.Equal(t, newID, stateIdentity(now.state), "the entry kept now is of the new identity")
		s.kept.mu.Lock()
		assert.Equal(t, newID, s.kept.identity)
		assert.Len(t, s.kept.entries, 1)
		s.kept.mu.Unlock()
		if strings.TrimPrefix(now.state, newID+" ") == snap {
			t.Logf("the statement ran in the kept snapshot on attempt %d", attempt)
			return
		}
		require.Falsef(t, time.Now().After(deadline), "no statement ran in the snapshot read just before it in %d attempts", attempt)
	}
}

// TestKeptRecords_IdentityChangeDrops: an entry of another identity
// replaces every entry; a state without identity is never kept; a
// connection of another identity drops them all and makes the revocation
// watcher wake its waiters and listen again.
func TestKeptRecords_IdentityChangeDrops(t *testing.T) {
	t.Parallel()
	var k keptRecords
	a := keptKey{"p", store.TokenRecordIDs{SigningKeyID: "sk", APIKeyID: "key_a"}}
	b := keptKey{"p", store.TokenRecordIDs{SigningKeyID: "sk", APIKeyID: "key_b"}}
	k.put(a, &keptEntry{state: "1/00000001/1 5:5:"})
	k.put(b, &keptEntry{state: "1/00000001/1 5:6:"})
	require.NotNil(t, k.get(a))
	k.put(b, &keptEntry{state: "1/00000002/9 5:6:"})
	assert.Nil(t, k.get(a), "an entry of another identity drops the others")
	assert.NotNil(t, k.get(b))
	k.put(a, &keptEntry{state: " 5:7:"})
	assert.Nil(t, k.get(a), "a state without identity is not kept")
	k.reset()
	assert.Nil(t, k.get(b))

	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	s, b2 := openInternal(t, url), openInternal(t, url)
	u := seedUser(t, b2, "p")
	ids, _ := checkedFixture(t, s, "q", 3)
	_, _, err := s.ListContactsChecked(ctx, "q", ids, paginate.Request{Limit: 3})
	require.NoError(t, err)
	require.NotNil(t, s.kept.get(keptKey{"q", ids}))
	// While the watcher connects (slowly on a loaded machine) it wakes its
	// waiters on every tick: wait until a channel stays open, listening.
	var ch <-chan struct{}
	require.Eventually(t, func() bool {
		ch = s.WatchRevocations(ctx)
		return !closedWithin(ch, quietFor)
	}, time.Minute, 10*time.Millisecond, "listening")

	// As if the last connection had been to another server: the next
	// one the pool opens is of a new identity.
	s.ident.mu.Lock()
	s.ident.current = "1/00000001/1"
	s.ident.mu.Unlock()
	s.pool.Reset() // the pool opens a new connection next
	c, err := s.pool.Acquire(ctx)
	require.NoError(t, err)
	c.Release()
	assert.Nil(t, s.kept.get(keptKey{"q", ids}), "a new identity drops the kept records")
	assert.True(t, closedWithin(ch, 5*time.Second), "a new identity wakes the watcher's waiters")

	require.Eventually(t, func() bool {
		ch = s.WatchRevocations(ctx)
		return !closedWithin(ch, quietFor)
	}, time.Minute, time.Millisecond, "listens again")
	f := seedFamily(t, b2, u)
	require.NoError(t, b2.RevokeRefreshFamily(ctx, "p", f.ID, it0))
	assert.True(t, closedWithin(ch, 5*time.Second), "woke after listening again")
}

// TestIdentity_NonSuperuser opens the store as a role that is not a
// superuser: it reads the identity (the functions are PUBLIC). Where they
// are revoked, the store still works, logs that once, and never keeps
// records: it fails closed.
func TestIdentity_NonSuperuser(t *testing.T) {
	t.Parallel()
	admin := pgtest.AdminURL(t)
	for _, revoked := range []bool{false, true} {
		role := newRole(t, admin)
		url := pgtest.NewDatabase(t)
		roleURL := ownedBy(t, admin, url, role)
		if revoked {
			c := rawConn(t, url)
			_, err := c.Exec(t.Context(), `REVOKE EXECUTE ON FUNCTION pg_control_system() FROM PUBLIC`)
			require.NoError(t, err)
		}
		var logs syncBuffer
		s, err := Open(t.Context(), roleURL, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), MaxConns: 3})
		require.NoError(t, err, "revoked=%v", revoked)
		ids, _ := checkedFixture(t, s, "p", 3)
		for range 5 {
			_, _, err := s.ListContactsChecked(t.Context(), "p", ids, paginate.Request{Limit: 3})
			require.NoError(t, err)
			// New connections each time, to log again if it would.
			s.pool.Reset()
		}
		kept := s.kept.get(keptKey{"p", ids})
		n := strings.Count(logs.String(), "cannot read the database's identity")
		require.NoError(t, s.Close())
		if revoked {
			assert.Nil(t, kept, "no identity: nothing kept")
			assert.Equal(t, 1, n, "logged once: %s", logs.String())
		} else {
			require.NotNil(t, kept)
			assert.Regexp(t, identityFormat, stateIdentity(kept.state))
			assert.Zero(t, n)
		}
	}
}

// newRole creates a login role that is not a superuser, dropped in
// t.Cleanup, and returns its name. Create it before the databases it will
// own, so that they are dropped first.
func newRole(t *testing.T, admin string) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	role := "latchkey_test_role_" + hex.EncodeToString(b[:])
	_, err := rawConn(t, admin).Exec(t.Context(), `CREATE ROLE `+role+` LOGIN NOSUPERUSER`)
	require.NoError(t, err)
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), admin)
		if err != nil {
			t.Errorf("drop role: %v", err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), `DROP ROLE IF EXISTS `+role); err != nil {
			t.Errorf("drop role: %v", err)
		}
	})
	return role
}

// ownedBy makes role the owner of the database of dbURL and of its public
// schema, and returns dbURL with role as the user.
func ownedBy(t *testing.T, admin, dbURL, role string) string {
	t.Helper()
	ctx := t.Context()
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	db := strings.TrimPrefix(u.Path, "/")
	_, err = rawConn(t, admin).Exec(ctx, `ALTER DATABASE `+db+` OWNER TO `+role)
	require.NoError(t, err)
	_, err = rawConn(t, dbURL).Exec(ctx, `ALTER SCHEMA public OWNER TO `+role)
	require.NoError(t, err)
	u.User = url.User(role)
	return u.String()
}

// syncBuffer is a bytes.Buffer safe for concurrent use, for logs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
