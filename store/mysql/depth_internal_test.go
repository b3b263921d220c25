package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/mysql/mytest"
)

// handlerReads returns the session's count of index and row reads by the
// storage engine (Handler_read_*), on conn.
func handlerReads(t *testing.T, conn *sql.Conn) int {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), `SHOW SESSION STATUS LIKE 'Handler_read%'`)
	require.NoError(t, err)
	defer rows.Close()
	total := 0
	for rows.Next() {
		var name, value string
		require.NoError(t, rows.Scan(&name, &value))
		n, err := strconv.Atoi(value)
		require.NoError(t, err)
		total += n
	}
	require.NoError(t, rows.Err())
	return total
}

// TestListContacts_CostIndependentOfDepth counts the rows the storage
// engine reads for the first page and for a page deep in a project of
// 20,000 contacts, for ListContacts' and ListContactsChecked's statements:
// a keyset range scan reads about limit+1 index entries wherever it starts,
// where OFFSET or a scan that did not start at the cursor would read the
// rows before it.
func TestListContacts_CostIndependentOfDepth(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, mytest.NewDatabase(t), nil)
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, st.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
	require.NoError(t, st.CreateProject(ctx, store.Project{ID: "q", CreatedAt: time.Now()}))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 20000
	for _, p := range []string{"p", "q"} {
		cs := make([]store.Contact, n)
		for i := range cs {
			cs[i] = store.Contact{ID: fmt.Sprintf("ct_%06d", i), Name: "c", CreatedAt: base.Add(time.Duration(i/3) * time.Millisecond)}
		}
		require.NoError(t, st.CreateContacts(ctx, p, cs))
	}
	_, err = st.db.ExecContext(ctx, "ANALYZE TABLE contacts")
	require.NoError(t, err)
	conn, err := st.db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()

	deep := paginate.Cursor{ID: fmt.Sprintf("ct_%06d", n-100), CreatedAt: base.Add(time.Duration((n-100)/3) * time.Millisecond)}
	const limit = 20
	for _, stmt := range []struct {
		name  string
		query func(after paginate.Cursor) (string, []any)
	}{
		{"ListContacts", func(after paginate.Cursor) (string, []any) { return listContactsSQLFor("p", after, limit+1) }},
		{"ListContactsChecked", func(after paginate.Cursor) (string, []any) {
			c := &checkedCall{projectID: "p", ids: store.TokenRecordIDs{SigningKeyID: "sk_x", APIKeyID: "key_x", SessionID: "rf_x"}, fetch: limit + 1}
			if !after.IsZero() {
				c.after = string(position(after.CreatedAt, after.ID))
			}
			st := checkedSQL([]*checkedCall{c})
			return st.query, st.args
		}},
	} {
		cost := func(after paginate.Cursor) int {
			q, args := stmt.query(after)
			before := handlerReads(t, conn)
			rows, err := conn.QueryContext(ctx, q, args...)
			require.NoError(t, err)
			got := 0
			for rows.Next() {
				got++
			}
			require.NoError(t, rows.Err())
			rows.Close()
			require.GreaterOrEqual(t, got, limit+1)
			return handlerReads(t, conn) - before
		}
		first, deepCost := cost(paginate.Cursor{}), cost(deep)
		t.Logf("%s: engine reads for page 1: %d, for a page %d rows deep: %d", stmt.name, first, n-100, deepCost)
		require.LessOrEqualf(t, first, 4*(limit+10), "%s: page 1 reads %d rows", stmt.name, first)
		require.LessOrEqualf(t, deepCost, first+10, "%s: a deep page reads %d rows, page 1 %d", stmt.name, deepCost, first)
	}
}
