package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// TestListContacts_UsesIndex checks with EXPLAIN that both keyset queries
// are a range scan of contacts_keyset with the cursor in the index
// condition, under a custom and a generic plan (pgx prepares statements, and
// PostgreSQL moves a prepared statement to a generic plan after five runs),
// with no sort and no OFFSET; and that ListContactsChecked's statements read
// the same range with no sort either (TestTokenRecords_ByPrimaryKey checks
// how they read the records).
func TestListContacts_UsesIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openInternal(t, pgtest.NewDatabase(t))
	for _, p := range []string{"p", "q"} {
		require.NoError(t, s.CreateProject(ctx, store.Project{ID: p, CreatedAt: time.Now()}))
		cs := make([]store.Contact, 20000)
		for i := range cs {
			cs[i] = store.Contact{ID: store.NewID(store.PrefixContact), Name: "n", CreatedAt: time.Unix(1e9+int64(i/3), 0)}
		}
		require.NoError(t, s.CreateContacts(ctx, p, cs))
	}
	conn, err := s.pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, "ANALYZE contacts")
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "PREPARE list_after(text, timestamptz, text, bigint) AS "+listContactsAfterSQL)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "PREPARE list_first(text, bigint) AS "+listContactsFirstSQL)
	require.NoError(t, err)
	firstSQL, _ := checkedSQL("p", store.TokenRecordIDs{SigningKeyID: "sk_a", APIKeyID: "key_a"}, "", paginate.Cursor{}, 26)
	_, err = conn.Exec(ctx, "PREPARE checked_first(text, text, text, text, text) AS "+firstSQL)
	require.NoError(t, err)
	afterSQL, _ := checkedSQL("p", store.TokenRecordIDs{SigningKeyID: "sk_a", SessionID: "rf_a"}, "", paginate.Cursor{ID: "ct_m", CreatedAt: time.Now()}, 26)
	_, err = conn.Exec(ctx, "PREPARE checked_after(text, text, text, text, text, timestamptz, text) AS "+afterSQL)
	require.NoError(t, err)

	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		_, err = conn.Exec(ctx, "SET plan_cache_mode = "+mode)
		require.NoError(t, err)
		for _, q := range []struct{ name, exec, cond string }{
			{"first", "EXECUTE list_first('p', 26)", "(project_id = "},
			{"after", "EXECUTE list_after('p', '2001-09-09 01:50:00+00', 'ct_m', 26)", "ROW(created_at, id) > ROW("},
			{"checked first", "EXECUTE checked_first('p', 'sk_a', 'key_a', '', '')", "(project_id = "},
			{"checked after", "EXECUTE checked_after('p', 'sk_a', '', 'rf_a', '', '2001-09-09 01:50:00+00', 'ct_m')", "ROW(created_at, id) > ROW("},
		} {
			rows, err := conn.Query(ctx, "EXPLAIN (FORMAT TEXT) "+q.exec)
			require.NoError(t, err)
			var lines []string
			for rows.Next() {
				var l string
				require.NoError(t, rows.Scan(&l))
				lines = append(lines, l)
			}
			require.NoError(t, rows.Err())
			text := strings.Join(lines, "\n")
			t.Logf("%s %s:\n%s", mode, q.name, text)
			name := fmt.Sprintf("%s/%s", mode, q.name)
			assert.Contains(t, text, "Index Scan using contacts_keyset on contacts", name)
			assert.Contains(t, text, "Index Cond: ", name)
			assert.Contains(t, text, q.cond, name)
			assert.NotContains(t, text, "Sort", name)
			assert.NotContains(t, text, "Seq Scan", name)
		}
	}
}

// TestNewListQueries_UseIndexes checks with EXPLAIN, under a custom and a
// generic plan, that the keyset queries of ListUsers (with and without a
// prefix), ListRevocations and ListAudit (unfiltered, by action, by target)
// are range scans of the project's index with the cursor or prefix in the
// index condition, and (but for the prefix, whose matches are sorted) read
// no more rows than they return.
func TestNewListQueries_UseIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openInternal(t, pgtest.NewDatabase(t))
	conn, err := s.pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	for _, sql := range []string{
		`INSERT INTO projects (id, created_at) VALUES ('p', now()), ('q', now())`,
		`INSERT INTO users (project_id, id, email, email_normalized, password_hash, created_at)
		 SELECT p, 'usr_' || p || i, 'u' || i || '@example.com', 'u' || i || '@example.com', 'h',
		        timestamptz '2026-01-01' + i * interval '1 second'
		 FROM generate_series(1, 20000) i, (VALUES ('p'), ('q')) v(p)`,
		`INSERT INTO revocations (project_id, id, kind, subject, revoked_at)
		 SELECT p, 'rev_' || i, 'session', 'rf_' || i, timestamptz '2026-01-01' + (i / 3) * interval '1 second'
		 FROM generate_series(1, 20000) i, (VALUES ('p'), ('q')) v(p)`,
		`INSERT INTO audit_log (project_id, id, occurred_at, actor, action, target, client_addr)
		 SELECT p, 'aud_' || i, timestamptz '2026-01-01' + (i / 3) * interval '1 second', 'usr_1',
		        (ARRAY['console.signin', 'apikey.create', 'user.update', 'session.logout'])[1 + i % 4],
		        'usr_' || (i % 500), '127.0.0.1'
		 FROM generate_series(1, 20000) i, (VALUES ('p'), ('q')) v(p)`,
		`ANALYZE`,
	} {
		_, err := conn.Exec(ctx, sql)
		require.NoError(t, err)
	}

	cursor := paginate.Cursor{ID: "x_m", CreatedAt: time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)}
	type query struct {
		name, index, cond string
		sql               string
		args              []any
	}
	var qs []query
	add := func(name, index, cond, sql string, args []any) {
		qs = append(qs, query{name, index, cond, sql, args})
	}
	sql, args := listUsersSQL("p", "", paginate.Cursor{}, 26)
	add("users first", "users_list", "(project_id = ", sql, args)
	sql, args = listUsersSQL("p", "", cursor, 26)
	add("users after", "users_list", "ROW(created_at, id) > ROW(", sql, args)
	sql, args = listUsersSQL("p", "u1234", cursor, 26)
	add("users prefix", "users_email_unique", "email_normalized >= ", sql, args)
	add("revocations first", "revocations_keyset", "(project_id = ", listRevocationsFirstSQL, []any{"p", 26})
	add("revocations after", "revocations_keyset", "ROW(revoked_at, id) > ROW(", listRevocationsAfterSQL, []any{"p", cursor.CreatedAt, cursor.ID, 26})
	sql, args = listAuditSQL("p", store.AuditFilter{}, cursor, 26)
	add("audit", "audit_log_newest", "ROW(occurred_at, id) < ROW(", sql, args)
	sql, args = listAuditSQL("p", store.AuditFilter{Action: "user.update"}, cursor, 26)
	add("audit action", "audit_log_action", "ROW(occurred_at, id) < ROW(", sql, args)
	sql, args = listAuditSQL("p", store.AuditFilter{Target: "usr_7"}, paginate.Cursor{}, 26)
	add("audit target", "audit_log_target", "(target = ", sql, args)

	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		_, err = conn.Exec(ctx, "SET plan_cache_mode = "+mode)
		require.NoError(t, err)
		for i, q := range qs {
			if q.index == "users_email_unique" && mode == "force_generic_plan" {
				// A generic plan cannot know how selective a prefix
				// is. Left to itself (plan_cache_mode auto) PostgreSQL
				// keeps planning each call while the generic plan is
				// estimated dearer than the custom ones, which the
				// custom case shows: the range of the prefix.
				continue
			}
			// EXPLAIN EXECUTE of a prepared statement, as pgx runs it.
			stmt := fmt.Sprintf("q%d_%s", i, mode[6:12])
			_, err := conn.Conn().Prepare(ctx, stmt, q.sql)
			require.NoError(t, err, q.name)
			params := make([]string, len(q.args))
			for j := range q.args {
				params[j] = fmt.Sprintf("$%d", j+1)
			}
			// The simple protocol inlines the arguments as literals.
			args := append([]any{pgx.QueryExecModeSimpleProtocol}, q.args...)
			rows, err := conn.Query(ctx, "EXPLAIN EXECUTE "+stmt+"("+strings.Join(params, ", ")+")", args...)
			require.NoError(t, err, q.name)
			var lines []string
			for rows.Next() {
				var l string
				require.NoError(t, rows.Scan(&l))
				lines = append(lines, l)
			}
			require.NoError(t, rows.Err())
			text := strings.Join(lines, "\n")
			name := mode + "/" + q.name
			t.Logf("%s:\n%s", name, text)
			assert.Contains(t, text, "using "+q.index+" on ", name)
			assert.Contains(t, text, "Index Cond: ", name)
			assert.Contains(t, text, q.cond, name)
			assert.NotContains(t, text, "Seq Scan", name)
			if q.index != "users_email_unique" {
				// The prefix range is sorted; every keyset scan is not.
				if strings.HasPrefix(q.name, "checked") {
					// The outer ORDER BY sorts the page (limit+1 rows, below
					// the Limit), never the range.
					assert.Contains(t, text, "->  Limit", name)
					assert.Equal(t, 1, strings.Count(text, "Sort Key"), name)
					assert.Contains(t, text, "Index Scan using signing_keys_pkey", name)
				} else {
					assert.NotContains(t, text, "Sort", name)
				}
			}
		}
	}
}
