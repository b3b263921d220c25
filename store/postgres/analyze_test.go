package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// TestAnalyzeContacts_ReadiesAnImport imports contacts in batches as the
// example server's seed command does, then calls AnalyzeContacts, and
// checks that the table is as a pass of autovacuum would leave it: the
// planner knows its size and the project's rows (the page's scan estimates
// the project's row count, not a guess), its pages are all-visible, and the
// first reads of page 1 and of the last page dirty no buffer (the rows'
// hint bits are set). Autovacuum is off for the table, so that the state
// comes from AnalyzeContacts alone; before it, the table has none of this.
//
// A page may stay not all-visible: VACUUM, like autovacuum, leaves the
// visibility map alone on a page whose buffer another process has pinned
// when it comes to it (the checkpointer writing it out, say, during the
// checkpoint of another test's CREATE DATABASE), and the next pass sets it.
// Seen once in a run of the suite (515 of 516 pages); the test allows one
// page in a hundred.
func TestAnalyzeContacts_ReadiesAnImport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openInternal(t, pgtest.NewDatabase(t))
	_, err := s.pool.Exec(ctx, "ALTER TABLE contacts SET (autovacuum_enabled = off)")
	require.NoError(t, err)
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))

	const batches, batchSize = 20, 2500
	var all []store.Contact
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	for b := range batches {
		at := start.Add(time.Duration(b) * time.Second)
		batch := make([]store.Contact, batchSize)
		for i := range batch {
			batch[i] = store.Contact{ID: store.NewIDAt(store.PrefixContact, at), Name: "Ada Lovelace", CreatedAt: at}
		}
		slices.SortFunc(batch, func(a, b store.Contact) int { return strings.Compare(a.ID, b.ID) })
		require.NoError(t, s.CreateContacts(ctx, "p", batch))
		all = append(all, batch...)
	}
	const rows = batches * batchSize

	tuples, pages, visible := tableState(t, s.pool)
	t.Logf("before AnalyzeContacts: reltuples %v, relpages %d, relallvisible %d", tuples, pages, visible)
	require.Zero(t, visible, "all-visible pages before AnalyzeContacts (is autovacuum off for the table?)")

	require.NoError(t, s.AnalyzeContacts(ctx))

	tuples, pages, visible = tableState(t, s.pool)
	t.Logf("after AnalyzeContacts: reltuples %v, relpages %d, relallvisible %d", tuples, pages, visible)
	assert.InDelta(t, rows, tuples, rows/100, "pg_class.reltuples")
	assert.Positive(t, pages, "pg_class.relpages")
	assert.GreaterOrEqual(t, visible, pages-pages/100, "all-visible pages of the table (of %d)", pages)

	conn, err := s.pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, "PREPARE list_first(text, bigint) AS "+listContactsFirstSQL)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "PREPARE list_after(text, timestamptz, text, bigint) AS "+listContactsAfterSQL)
	require.NoError(t, err)
	deep := all[len(all)-26]
	for _, q := range []struct{ name, exec string }{
		{"page 1", "EXECUTE list_first('p', 26)"},
		{"last page", fmt.Sprintf("EXECUTE list_after('p', '%s', '%s', 26)", deep.CreatedAt.UTC().Format(time.RFC3339Nano), deep.ID)},
	} {
		var out []byte
		require.NoError(t, conn.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+q.exec).Scan(&out), q.name)
		t.Logf("%s: %s", q.name, out)
		var plans []struct{ Plan planNode }
		require.NoError(t, json.Unmarshal(out, &plans), q.name)
		require.Len(t, plans, 1, q.name)
		scan := plans[0].Plan.find("Index Scan")
		require.NotNil(t, scan, "%s: an Index Scan", q.name)
		assert.Equal(t, "contacts_keyset", scan.IndexName, q.name)
		assert.Zero(t, plans[0].Plan.dirtied(), "%s: buffers dirtied by its first read (hint bits not set)", q.name)
		if q.name == "page 1" {
			// The scan's estimate is for the whole range before LIMIT:
			// every row of the table is the project's.
			assert.InDelta(t, rows, scan.PlanRows, rows/10, "%s: the estimated rows of project p", q.name)
		}
	}
}

// tableState returns pg_class's reltuples, relpages and relallvisible of
// the contacts table.
func tableState(t *testing.T, pool *pgxpool.Pool) (tuples float64, pages, visible int32) {
	t.Helper()
	err := pool.QueryRow(context.Background(),
		"SELECT reltuples, relpages, relallvisible FROM pg_class WHERE oid = 'contacts'::regclass").Scan(&tuples, &pages, &visible)
	require.NoError(t, err)
	return tuples, pages, visible
}

// planNode is a node of EXPLAIN (FORMAT JSON)'s plan.
type planNode struct {
	NodeType      string     `json:"Node Type"`
	IndexName     string     `json:"Index Name"`
	PlanRows      float64    `json:"Plan Rows"`
	SharedDirtied int64      `json:"Shared Dirtied Blocks"`
	Plans         []planNode `json:"Plans"`
}

// find returns the first node of type typ in n's tree, or nil.
func (n *planNode) find(typ string) *planNode {
	if n.NodeType == typ {
		return n
	}
	for i := range n.Plans {
		if f := n.Plans[i].find(typ); f != nil {
			return f
		}
	}
	return nil
}

// dirtied returns the shared buffers n's tree dirtied.
func (n *planNode) dirtied() int64 {
	d := n.SharedDirtied
	for i := range n.Plans {
		d += n.Plans[i].dirtied()
	}
	return d
}
