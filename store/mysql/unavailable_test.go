package mysql_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/mysql"
	"github.com/latchkey-dev/latchkey/store/mysql/mytest"
)

// TestKilledConnections_Replaced kills every connection of a store's pool
// from another session, as a server restart or a failover would end them:
// the next calls, reads and writes, succeed on new connections (the dead
// ones are found before a statement is sent on them).
func TestKilledConnections_Replaced(t *testing.T) {
	url := mytest.NewDatabase(t)
	st, err := mysql.Open(t.Context(), url, &mysql.Options{Logger: testLogger(t), MaxConns: 4})
	require.NoError(t, err)
	defer st.Close()
	ctx := t.Context()
	mustProject(t, st, "p")
	for round := range 3 {
		db := rawDB(t, url)
		var n int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND ID <> CONNECTION_ID()`).Scan(&n))
		require.Positive(t, n, "the store's pool holds connections")
		rows, err := db.QueryContext(ctx, `SELECT ID FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND ID <> CONNECTION_ID()`)
		require.NoError(t, err)
		var ids []int64
		for rows.Next() {
			var id int64
			require.NoError(t, rows.Scan(&id))
			ids = append(ids, id)
		}
		rows.Close()
		for _, id := range ids {
			_, _ = db.ExecContext(ctx, "KILL CONNECTION ?", id)
		}
		db.Close()
		time.Sleep(50 * time.Millisecond) // the server closes the sockets
		_, err = st.GetProject(ctx, "p")
		require.NoErrorf(t, err, "round %d: GetProject after the pool's connections were killed", round)
		// The prepared read: its statement is prepared again on the new
		// connection.
		_, _, err = st.ListContactsChecked(ctx, "p", store.TokenRecordIDs{APIKeyID: "key_a"}, paginate.Request{Limit: 10})
		require.NoErrorf(t, err, "round %d: ListContactsChecked after the kill", round)
		require.NoErrorf(t, st.CreateAPIKey(ctx, store.APIKey{ID: "key_" + string(rune('a'+round)), ProjectID: "p", Name: "k", CreatedAt: t0}),
			"round %d: a write after the kill", round)
	}
}

// TestUnreachable_Unavailable checks that Open on a server that does not
// answer fails with an error matching store.ErrUnavailable.
func TestUnreachable_Unavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	_, err = mysql.Open(t.Context(), "mysql://root@"+addr+"/x", &mysql.Options{AcquireTimeout: time.Second})
	require.Error(t, err)
	require.Truef(t, errors.Is(err, store.ErrUnavailable), "Open on a closed port = %v, want ErrUnavailable", err)
}

// TestUnavailable_LostTransaction checks, on MariaDB, a transaction whose
// connection is lost after a statement that locked rows and before its
// COMMIT, with the server never told: the server ends the orphaned session
// once it has sat idle in its transaction for
// Options.IdleTransactionTimeout, which releases its locks, and the
// store's retry, waiting for them, then commits, once. MySQL has no such
// setting (see the option).
func TestUnavailable_LostTransaction(t *testing.T) {
	url := mytest.NewDatabase(t)
	px, viaProxy := newProxy(t, url)
	st, err := mysql.Open(t.Context(), viaProxy, &mysql.Options{Logger: testLogger(t), IdleTransactionTimeout: time.Second})
	require.NoError(t, err)
	defer st.Close()
	if !st.MariaDB() {
		t.Skip("MySQL has no idle_transaction_timeout")
	}
	mustProject(t, st, "p")

	const id = "ct_lost"
	px.CutAfter(id) // the INSERT, inside the transaction
	// Without the timeout the orphan would hold its locks until the
	// server's wait_timeout (eight hours by default).
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err = st.CreateContact(ctx, store.Contact{ID: id, ProjectID: "p", Name: "n", CreatedAt: t0})
	require.NoError(t, err, "the retry gets the rows once the server has ended the orphaned session")
	require.False(t, px.CutPending(), "the transaction was cut")
	page, err := st.ListContacts(t.Context(), "p", paginate.Request{Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Items, 1, "and applied once")
	require.Equal(t, id, page.Items[0].ID)
}
