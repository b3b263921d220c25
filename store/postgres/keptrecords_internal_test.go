package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// checkedRecordsOn runs ListContactsChecked's statement on conn with the
// state known and returns the statement's state and whether its records
// were NULL (the ones read in known are current).
func checkedRecordsOn(t *testing.T, conn *pgx.Conn, ids store.TokenRecordIDs, known string) (state string, kept bool) {
	t.Helper()
	sql, args := checkedSQL("p", ids, known, paginate.Cursor{}, 3)
	rows, err := conn.Query(t.Context(), sql, args...)
	require.NoError(t, err)
	defer rows.Close()
	var a checkedAnswer
	require.NoError(t, a.scan(rows, "p"))
	require.Len(t, a.items, 3, "the page")
	if a.recs != nil {
		require.NotNil(t, a.recs.SigningKey)
		require.Equal(t, ids.SigningKeyID, a.recs.SigningKey.ID)
		require.NotNil(t, a.recs.APIKey)
		require.Equal(t, ids.APIKeyID, a.recs.APIKey.ID)
	}
	return a.state, a.recs == nil
}

// TestCheckedStatement_RecordsReadUnlessSnapshotKnown checks the rule
// keptRecords rests on, in one REPEATABLE READ transaction (one snapshot
// for all its statements): the statement leaves the records NULL exactly
// when the snapshot passed is its own, even after another connection
// committed a write that changed them, since the snapshot does not see it;
// and a statement of a later snapshot, which does see it, reads them.
func TestCheckedStatement_RecordsReadUnlessSnapshotKnown(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	s, err := Open(t.Context(), url, &Options{Logger: testDiscard})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ids, _ := checkedFixture(t, s, "p", 3)
	ctx := t.Context()

	conn := identifiedConn(t, url)
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(context.Background()) }()

	snap, kept := checkedRecordsOn(t, conn, ids, "")
	require.False(t, kept, "no snapshot known: the records are read")
	again, kept := checkedRecordsOn(t, conn, ids, snap)
	require.Equal(t, snap, again, "one transaction, one snapshot")
	require.True(t, kept, "the snapshot known is the statement's: the records are not read")
	_, kept = checkedRecordsOn(t, conn, ids, snap+"0")
	require.False(t, kept, "another snapshot known: the records are read")

	require.NoError(t, s.RevokeAPIKey(ctx, "p", ids.APIKeyID, it0.Add(time.Hour)))
	again, kept = checkedRecordsOn(t, conn, ids, snap)
	require.Equal(t, snap, again)
	require.True(t, kept, "the transaction's snapshot does not see the revocation, so the records kept are current in it")
	require.NoError(t, tx.Rollback(ctx))

	later, kept := checkedRecordsOn(t, conn, ids, snap)
	require.NotEqual(t, snap, later, "a snapshot taken after a commit")
	require.False(t, kept, "the snapshot sees the revocation: the records are read")
	recs, _, err := s.ListContactsChecked(ctx, "p", ids, paginate.Request{Limit: 3})
	require.NoError(t, err)
	require.True(t, recs.APIKey.Revoked(), "ListContactsChecked after the revocation")
}

// TestKeptRecords_ReusedWhileSnapshotHolds: once a token's records are
// kept, a call whose statement runs in the same snapshot returns them
// without reading them. The test marks the kept copy (a name the database
// does not hold) and calls again until a call comes back with it: a
// commit anywhere on the server in between (other tests share it) makes a
// call read the records instead, and then it must return the database's.
// Changing what a call returned changes nothing kept.
func TestKeptRecords_ReusedWhileSnapshotHolds(t *testing.T) {
	t.Parallel()
	s, err := Open(t.Context(), pgtest.NewDatabase(t), &Options{Logger: testDiscard})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ids, want := checkedFixture(t, s, "p", 3)
	ctx := t.Context()
	req := paginate.Request{Limit: 3}
	key := keptKey{"p", ids}

	deadline := time.Now().Add(20 * time.Second)
	for attempt := 1; ; attempt++ {
		recs, page, err := s.ListContactsChecked(ctx, "p", ids, req)
		require.NoError(t, err)
		require.Equal(t, "k", recs.APIKey.Name, "a call that read the records")
		kept := s.kept.get(key)
		require.NotNil(t, kept)
		marked := &keptEntry{state: kept.state, recs: copyRecords(kept.recs)}
		marked.recs.APIKey.Name = "kept copy"
		s.kept.put(key, marked)

		recs, page2, err := s.ListContactsChecked(ctx, "p", ids, req)
		require.NoError(t, err)
		require.Equal(t, want.Items, page.Items)
		require.Equal(t, want.Items, page2.Items)
		if recs.APIKey.Name == "k" {
			// A commit came between: the records were read again.
			require.NotSame(t, marked, s.kept.get(key))
			require.Falsef(t, time.Now().After(deadline), "no two calls in a row ran in one snapshot in %d attempts", attempt)
			continue
		}
		require.Equal(t, "kept copy", recs.APIKey.Name)
		require.Same(t, marked, s.kept.get(key), "a reuse replaces nothing")
		recs.APIKey.Name = "changed by the caller"
		recs.SigningKey.PublicKey[0] ^= 0xff
		assert.Equal(t, "kept copy", marked.recs.APIKey.Name)
		assert.Equal(t, byte(0), marked.recs.SigningKey.PublicKey[0])
		t.Logf("reused on attempt %d", attempt)
		return
	}
}

// TestKeptRecords_Bounded: the records of at most maxKeptTokens tokens are
// kept.
func TestKeptRecords_Bounded(t *testing.T) {
	t.Parallel()
	var k keptRecords
	for i := range maxKeptTokens + 10 {
		k.put(keptKey{"p", store.TokenRecordIDs{SigningKeyID: "sk", APIKeyID: fmt.Sprint("key_", i)}}, &keptEntry{state: "id 1:1:"})
		require.LessOrEqual(t, len(k.entries), maxKeptTokens)
	}
	require.NotNil(t, k.get(keptKey{"p", store.TokenRecordIDs{SigningKeyID: "sk", APIKeyID: fmt.Sprint("key_", maxKeptTokens+9)}}))
}

// TestTokenRecords_ByPrimaryKey checks with auto_explain, which logs the
// plans of the statements a function runs, that latchkey_token_records
// reads each record asked for by its table's primary key, under a custom
// and a generic plan (a custom plan leaves out the table of an empty id).
func TestTokenRecords_ByPrimaryKey(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	s, err := Open(t.Context(), url, &Options{Logger: testDiscard})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()
	checkedFixture(t, s, "p", 3)
	cfg, err := pgx.ParseConfig(url)
	require.NoError(t, err)
	var logged []string
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { logged = append(logged, n.Message) }
	conn, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	for _, sql := range []string{
		`LOAD 'auto_explain'`,
		`SET auto_explain.log_min_duration = 0`,
		`SET auto_explain.log_nested_statements = on`,
		`SET client_min_messages = log`,
	} {
		_, err := conn.Exec(ctx, sql)
		require.NoError(t, err, sql)
	}
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		_, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode)
		require.NoError(t, err)
		logged = nil
		// Both kinds of token; an id that no row has reads no less.
		for _, ids := range [][3]string{{"sk_p", "key_p", ""}, {"sk_p", "", "rf_none"}} {
			var recs tokenRecordsField
			require.NoError(t, conn.QueryRow(ctx, `SELECT latchkey_token_records('p', $1, $2, $3)`,
				ids[0], ids[1], ids[2]).Scan(&recs))
			require.False(t, recs.null)
			require.True(t, recs.row.present)
		}
		var plans []string
		for _, m := range logged {
			if strings.Contains(m, "signing_keys") {
				plans = append(plans, m)
			}
		}
		require.Len(t, plans, 2, "%s: the function's query, once a call: %q", mode, logged)
		for i, idx := range []string{"api_keys_pkey", "refresh_families_pkey"} {
			t.Logf("%s:\n%s", mode, plans[i])
			assert.Contains(t, plans[i], "Index Scan using signing_keys_pkey", mode)
			assert.Contains(t, plans[i], "Index Scan using "+idx, mode)
			assert.NotContains(t, plans[i], "Seq Scan", mode)
		}
	}
}
