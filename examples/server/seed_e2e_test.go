package main

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// contact seed on PostgreSQL leaves the contacts table ready to serve, as
// autovacuum's passes would leave it: its size known to the planner, its
// pages all-visible (postgres.Store.AnalyzeContacts after the batches).
func TestE2E_contactSeedReadiesPostgres(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	dir := t.TempDir()
	ok(t, dir, "", "project create", "-db", db, "seeded")
	const n = 25000
	ok(t, dir, "", "contact seed", "-db", db, "-project", "seeded", "-n", "25000")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var tuples float64
	var pages, visible int32
	require.NoError(t, conn.QueryRow(ctx,
		"SELECT reltuples, relpages, relallvisible FROM pg_class WHERE oid = 'contacts'::regclass").Scan(&tuples, &pages, &visible))
	assert.InDelta(t, n, tuples, n/100, "pg_class.reltuples")
	assert.Positive(t, pages, "pg_class.relpages")
	// VACUUM leaves a page another process holds pinned as it passes (a
	// checkpoint writing the seed's pages pins each for a moment), as
	// store/postgres's own test of AnalyzeContacts allows.
	assert.GreaterOrEqual(t, visible, pages-pages/100, "all-visible pages of the table (of %d)", pages)
}
