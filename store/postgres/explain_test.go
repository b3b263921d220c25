package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// TestListContacts_UsesIndex checks with EXPLAIN that both keyset queries
// are a range scan of contacts_keyset with the cursor in the index
// condition, under a custom and a generic plan (pgx prepares statements, and
// PostgreSQL moves a prepared statement to a generic plan after five runs),
// with no sort and no OFFSET.
func TestListContacts_UsesIndex(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, pgtest.NewDatabase(t), &Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer s.Close()
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

	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		_, err = conn.Exec(ctx, "SET plan_cache_mode = "+mode)
		require.NoError(t, err)
		for _, q := range []struct{ name, exec, cond string }{
			{"first", "EXECUTE list_first('p', 26)", "(project_id = "},
			{"after", "EXECUTE list_after('p', '2001-09-09 01:50:00+00', 'ct_m', 26)", "ROW(created_at, id) > ROW("},
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
