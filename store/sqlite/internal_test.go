package sqlite

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

func openFile(t *testing.T, path string, opts *Options) *Store {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	s, err := Open(t.Context(), path, opts)
	require.NoError(t, err, "Open(%q)", path)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// pragma returns the value of PRAGMA name on conn, as text.
func pragma(t *testing.T, conn *sql.Conn, name string) string {
	t.Helper()
	var v string
	require.NoError(t, conn.QueryRowContext(t.Context(), "PRAGMA "+name).Scan(&v), "PRAGMA %s", name)
	return v
}

// conns takes n connections of db at once, so that each is a separate
// SQLite connection, and returns them.
func conns(t *testing.T, db *sql.DB, n int) []*sql.Conn {
	t.Helper()
	var cs []*sql.Conn
	for i := 0; i < n; i++ {
		c, err := db.Conn(t.Context())
		require.NoError(t, err)
		cs = append(cs, c)
	}
	t.Cleanup(func() {
		for _, c := range cs {
			_ = c.Close()
		}
	})
	return cs
}

func TestOpen_PragmasOnEveryConnection(t *testing.T) {
	s := openFile(t, filepath.Join(t.TempDir(), "p.db"), &Options{MaxOpenConns: 3, BusyTimeout: 1500 * time.Millisecond})
	check := func(c *sql.Conn, queryOnly string) {
		t.Helper()
		require.Equal(t, "wal", pragma(t, c, "journal_mode"))
		require.Equal(t, "2", pragma(t, c, "synchronous"), "synchronous=FULL")
		require.Equal(t, "1", pragma(t, c, "foreign_keys"))
		require.Equal(t, "1500", pragma(t, c, "busy_timeout"))
		require.Equal(t, queryOnly, pragma(t, c, "query_only"))
	}
	for _, c := range conns(t, s.write, 1) {
		check(c, "0")
	}
	for _, c := range conns(t, s.read, 3) {
		check(c, "1")
	}
	require.Equal(t, 1, s.write.Stats().MaxOpenConnections)
	require.Equal(t, 3, s.read.Stats().MaxOpenConnections)
}

func TestOpen_DefaultBusyTimeout(t *testing.T) {
	s := openFile(t, filepath.Join(t.TempDir(), "p.db"), nil)
	c := conns(t, s.write, 1)[0]
	require.Equal(t, "5000", pragma(t, c, "busy_timeout"))
}

func TestOpen_WriteTransactionsAreImmediate(t *testing.T) {
	// A write transaction holds the write lock from BEGIN: a second
	// handle's write must wait (here: time out) even before the first
	// transaction has written anything.
	path := filepath.Join(t.TempDir(), "p.db")
	a := openFile(t, path, nil)
	b := openFile(t, path, &Options{BusyTimeout: 50 * time.Millisecond})
	tx, err := a.write.BeginTx(t.Context(), nil)
	require.NoError(t, err)
	defer tx.Rollback()
	err = b.CreateProject(t.Context(), store.Project{ID: "p1", CreatedAt: time.Now()})
	require.Error(t, err, "write while another handle holds BEGIN IMMEDIATE")
	require.Contains(t, strings.ToLower(err.Error()), "locked")
	require.NoError(t, tx.Rollback())
	require.NoError(t, b.CreateProject(t.Context(), store.Project{ID: "p1", CreatedAt: time.Now()}))
}

func TestOpen_Memory(t *testing.T) {
	a := openFile(t, MemoryPath, nil)
	b := openFile(t, MemoryPath, nil)
	ctx := t.Context()
	require.NoError(t, a.CreateProject(ctx, store.Project{ID: "only-a", CreatedAt: time.Now()}))
	_, err := b.GetProject(ctx, "only-a")
	require.ErrorIs(t, err, store.ErrNotFound, "each :memory: store is private")
	require.Same(t, a.read, a.write)
	require.Equal(t, 1, a.read.Stats().MaxOpenConnections)
	c := conns(t, a.read, 1)[0]
	require.Equal(t, "1", pragma(t, c, "foreign_keys"))
}

func TestOpen_PathNeedingEscapes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "we?ird#na%me.db")
	s := openFile(t, path, nil)
	require.NoError(t, s.CreateProject(t.Context(), store.Project{ID: "p", CreatedAt: time.Now()}))
	require.FileExists(t, path)
}

func migrationCount(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	require.NoError(t, s.read.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM schema_migrations").Scan(&n))
	return n
}

func TestMigrate_Idempotent(t *testing.T) {
	ms, err := loadMigrations()
	require.NoError(t, err)
	require.NotEmpty(t, ms)
	path := filepath.Join(t.TempDir(), "m.db")
	a := openFile(t, path, nil)
	require.NoError(t, a.CreateProject(t.Context(), store.Project{ID: "p", CreatedAt: time.Now()}))
	b := openFile(t, path, nil)
	require.NoError(t, b.Migrate(t.Context()))
	require.Equal(t, len(ms), migrationCount(t, a))
	_, err = b.GetProject(t.Context(), "p")
	require.NoError(t, err, "data survives a second Open")
}

func TestMigrate_ConcurrentOpens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	const n = 6
	var wg sync.WaitGroup
	stores := make([]*Store, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = Open(context.Background(), path, &Options{Logger: testLogger(t)}) })
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i], "Open %d", i)
		t.Cleanup(func() { _ = stores[i].Close() })
	}
	ms, _ := loadMigrations()
	require.Equal(t, len(ms), migrationCount(t, stores[0]))
}

func TestMigrate_NoMigrate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	s := openFile(t, path, &Options{NoMigrate: true})
	ctx := t.Context()
	err := s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()})
	require.Error(t, err, "no schema before Migrate")
	require.NoError(t, s.Migrate(ctx))
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
}

func TestMigrate_RefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	s := openFile(t, path, nil)
	_, err := s.write.ExecContext(t.Context(), recordMigrationSQL, 999, "0999_future", 0)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = Open(t.Context(), path, nil)
	require.ErrorContains(t, err, "newer than this build")
}

func TestTimes_MicrosecondRoundTrip(t *testing.T) {
	s := openFile(t, filepath.Join(t.TempDir(), "t.db"), nil)
	ctx := t.Context()
	zone := time.FixedZone("X", -7*3600-1800)
	times := []time.Time{
		time.Date(2026, 11, 21, 10, 15, 30, 123456789, zone),
		time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC), // before the epoch: still floors
		time.Date(2262, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 999, time.UTC),
	}
	for i, at := range times {
		p := store.Project{ID: "p" + string(rune('a'+i)), CreatedAt: at}
		require.NoError(t, s.CreateProject(ctx, p))
		got, err := s.GetProject(ctx, p.ID)
		require.NoError(t, err)
		require.True(t, got.CreatedAt.Equal(store.Truncate(at)), "got %v, want %v", got.CreatedAt, store.Truncate(at))
		require.Equal(t, time.UTC, got.CreatedAt.Location())
		require.Equal(t, micros(store.Truncate(at)), micros(at), "stored value is the truncation's")
	}
}

func TestTimes_ZeroIsNull(t *testing.T) {
	s := openFile(t, MemoryPath, nil)
	ctx := t.Context()
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
	require.NoError(t, s.CreateAPIKey(ctx, store.APIKey{ID: "key_1", ProjectID: "p", Name: "n", CreatedAt: time.Now()}))
	var used, revoked sql.NullInt64
	require.NoError(t, s.read.QueryRowContext(ctx, "SELECT last_used_at, revoked_at FROM api_keys").Scan(&used, &revoked))
	require.False(t, used.Valid)
	require.False(t, revoked.Valid)
	k, err := s.GetAPIKey(ctx, "p", "key_1")
	require.NoError(t, err)
	require.True(t, k.LastUsedAt.IsZero())
	require.True(t, k.RevokedAt.IsZero())
}

// queryPlan returns the EXPLAIN QUERY PLAN lines of query.
func queryPlan(t *testing.T, db *sql.DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	require.NoError(t, err)
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &notused, &detail))
		lines = append(lines, detail)
	}
	require.NoError(t, rows.Err())
	return strings.Join(lines, "\n")
}

func TestListContacts_QueryPlanUsesIndex(t *testing.T) {
	s := openFile(t, filepath.Join(t.TempDir(), "q.db"), nil)
	ctx := t.Context()
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
	cs := make([]store.Contact, 2000)
	for i := range cs {
		cs[i] = store.Contact{ID: store.NewID(store.PrefixContact), Name: "n", CreatedAt: time.Unix(int64(i/3), 0)}
	}
	require.NoError(t, s.CreateContacts(ctx, "p", cs))
	_, err := s.write.ExecContext(ctx, "ANALYZE")
	require.NoError(t, err)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{listContactsFirstSQL, []any{"p", 26}},
		{listContactsAfterSQL, []any{"p", contactPos(100, "ct_x"), 26}},
	} {
		plan := queryPlan(t, s.read, q.sql, q.args...)
		t.Logf("%s\n=> %s", q.sql, plan)
		require.Contains(t, plan, "USING PRIMARY KEY")
		require.Contains(t, plan, "project_id=?")
		require.NotContains(t, plan, "TEMP B-TREE")
		require.NotContains(t, plan, "SCAN")
	}
	plan := queryPlan(t, s.read, listContactsAfterSQL, "p", contactPos(100, "ct_x"), 26)
	require.Contains(t, plan, "(project_id=? AND pos>?)", "the seek uses the position")
}

func TestContacts_FloorRule(t *testing.T) {
	s := openFile(t, MemoryPath, nil)
	ctx := t.Context()
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	create := func(id string, at time.Time) time.Time {
		t.Helper()
		c, err := s.CreateContact(ctx, store.Contact{ID: id, ProjectID: "p", Name: id, CreatedAt: at})
		require.NoError(t, err)
		return c.CreatedAt
	}
	require.Equal(t, t0, create("ct_m", t0))
	require.Equal(t, t0, create("ct_n", t0), "same time, greater id: not raised")
	require.Equal(t, t0.Add(time.Microsecond), create("ct_a", t0), "same time, smaller id: one microsecond later")
	require.Equal(t, t0.Add(time.Microsecond), create("ct_b", t0.Add(-time.Hour)), "earlier: raised to the last, greater id")
	require.Equal(t, t0.Add(time.Hour), create("ct_0", t0.Add(time.Hour)), "later: kept")

	// Bulk: against the contacts that existed before; the batch's own
	// items may share a time.
	batch := []store.Contact{
		{ID: "ct_z", Name: "z", CreatedAt: t0},
		{ID: "ct_", Name: "", CreatedAt: t0},
		{ID: "ct_2", Name: "2", CreatedAt: t0.Add(2 * time.Hour)},
	}
	require.NoError(t, s.CreateContacts(ctx, "p", batch))
	page, err := s.ListContacts(ctx, "p", paginate.Request{Limit: 100})
	require.NoError(t, err)
	var got []string
	for _, c := range page.Items {
		got = append(got, c.ID+"@"+c.CreatedAt.Sub(t0).String())
	}
	require.Equal(t, []string{
		"ct_m@0s", "ct_n@0s", "ct_a@1µs", "ct_b@1µs", "ct_0@1h0m0s",
		"ct_z@1h0m0s", "ct_@1h0m0.000001s", "ct_2@2h0m0s",
	}, got)
}

func TestContacts_BulkIsAtomic(t *testing.T) {
	s := openFile(t, MemoryPath, nil)
	ctx := t.Context()
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
	cs := make([]store.Contact, 3*contactBatch+7)
	for i := range cs {
		cs[i] = store.Contact{ID: store.NewID(store.PrefixContact), Name: "n", CreatedAt: time.Now()}
	}
	cs[len(cs)-1].ID = cs[0].ID // a duplicate in the last, short batch
	require.ErrorIs(t, s.CreateContacts(ctx, "p", cs), store.ErrConflict)
	page, err := s.ListContacts(ctx, "p", paginate.Request{Limit: 10})
	require.NoError(t, err)
	require.Empty(t, page.Items, "nothing inserted on error")
	require.ErrorIs(t, s.CreateContacts(ctx, "nope", cs[:1]), store.ErrNotFound)
	require.ErrorIs(t, s.CreateContacts(ctx, "p", []store.Contact{{ID: ""}}), store.ErrInvalid)
	require.ErrorIs(t, s.CreateContacts(ctx, "p", []store.Contact{{ID: "ct_x", ProjectID: "q"}}), store.ErrInvalid)
	require.NoError(t, s.CreateContacts(ctx, "p", cs[:len(cs)-1]))
	n := 0
	req := paginate.Request{Limit: 100}
	for {
		page, err := s.ListContacts(ctx, "p", req)
		require.NoError(t, err)
		n += len(page.Items)
		if !page.HasMore {
			break
		}
		last := page.Items[len(page.Items)-1]
		req.After = paginate.Cursor{ID: last.ID, CreatedAt: last.CreatedAt}
	}
	require.Equal(t, len(cs)-1, n)
}

func TestErrors_Translation(t *testing.T) {
	s := openFile(t, MemoryPath, nil)
	ctx := t.Context()
	now := time.Now()
	require.ErrorIs(t, s.CreateUser(ctx, store.User{ID: "usr_1", ProjectID: "nope", Email: "a@b"}), store.ErrNotFound, "foreign key")
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: now}))
	require.ErrorIs(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: now}), store.ErrConflict, "primary key")
	require.NoError(t, s.CreateUser(ctx, store.User{ID: "usr_1", ProjectID: "p", Email: "A@b"}))
	require.ErrorIs(t, s.CreateUser(ctx, store.User{ID: "usr_2", ProjectID: "p", Email: " a@B "}), store.ErrConflict, "unique email_norm")
	err := s.CreateUser(ctx, store.User{ID: "usr_1", ProjectID: "p", Email: "c@d"})
	require.ErrorIs(t, err, store.ErrConflict)
	require.NotContains(t, err.Error(), "INSERT", "no SQL in errors")
	require.ErrorIs(t, s.CreateUser(ctx, store.User{ID: "usr_3", ProjectID: "p", Email: "x@y", Tags: []string{"\xff"}}), store.ErrInvalid)
}

func TestThrottle_PrunesEndedWindows(t *testing.T) {
	s := openFile(t, MemoryPath, nil)
	ctx := t.Context()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		_, _, err := s.AddFailure(ctx, "k"+string(rune(i+0x100)), t0.Add(time.Duration(i)*time.Second), time.Second)
		require.NoError(t, err)
	}
	var n int
	require.NoError(t, s.read.QueryRowContext(ctx, "SELECT COUNT(*) FROM throttle_windows").Scan(&n))
	require.Less(t, n, 2*pruneEvery, "ended windows are pruned")
	// A long window of another limiter is not pruned by short ones.
	_, _, err := s.AddFailure(ctx, "long", t0.Add(1000*time.Second), time.Hour)
	require.NoError(t, err)
	for i := range 200 {
		_, _, err := s.AddFailure(ctx, "short", t0.Add(time.Duration(1001+i)*time.Second), time.Second)
		require.NoError(t, err)
	}
	c, _, err := s.Failures(ctx, "long", t0.Add(1300*time.Second), time.Hour)
	require.NoError(t, err)
	require.Equal(t, 1, c)
}

// TestMigrate_ContactPosKeepsContacts opens a database made by a build
// whose schema stopped at 0002 (contacts keyed by created_at and id), and
// checks that migration 0003 keeps every contact, with its time and name,
// in the same order, and that cursors and inserts work on the result.
func TestMigrate_ContactPosKeepsContacts(t *testing.T) {
	ms, err := loadMigrations()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", fileDSN(path, time.Second, false))
	require.NoError(t, err)
	ctx := t.Context()
	_, err = db.ExecContext(ctx, createMigrationsTableSQL)
	require.NoError(t, err)
	for _, m := range ms[:2] {
		_, err = db.ExecContext(ctx, m.sql)
		require.NoError(t, err, m.name)
		_, err = db.ExecContext(ctx, recordMigrationSQL, m.version, m.name, 0)
		require.NoError(t, err)
	}
	_, err = db.ExecContext(ctx, `INSERT INTO projects (id, created_at) VALUES ('p', 0), ('q', 0)`)
	require.NoError(t, err)
	// Times of both signs and equal times with ids ordered byte by byte
	// (upper case sorts before lower case).
	old := []struct {
		project string
		at      int64
		id      string
	}{
		{"p", -62135596800000000, "c_year1"}, // 0001-01-01
		{"p", -1, "c_neg"},
		{"p", 0, "c_zero"},
		{"p", 1732222222000000, "c_B"},
		{"p", 1732222222000000, "c_a"},
		{"p", 1732222222000000, "c_b"},
		{"p", 253402300799999999, "c_max"}, // 9999-12-31
		{"q", 5, "c_other"},
	}
	for _, c := range old {
		_, err = db.ExecContext(ctx, `INSERT INTO contacts (project_id, created_at, id, name) VALUES (?, ?, ?, ?)`,
			c.project, c.at, c.id, "name of "+c.id)
		require.NoError(t, err)
	}
	_, err = db.ExecContext(ctx, `UPDATE projects SET contact_top_at = 253402300799999999, contact_top_id = 'c_max' WHERE id = 'p'`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s := openFile(t, path, nil)
	require.Equal(t, len(ms), migrationCount(t, s))
	var notBlob int
	require.NoError(t, s.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM contacts WHERE typeof(pos) <> 'blob'`).Scan(&notBlob))
	require.Zero(t, notBlob, "positions are stored as BLOBs")
	var got []store.Contact
	req := paginate.Request{Limit: 2}
	for {
		page, err := s.ListContacts(ctx, "p", req)
		require.NoError(t, err)
		got = append(got, page.Items...)
		if !page.HasMore {
			break
		}
		last := page.Items[len(page.Items)-1]
		req.After = paginate.Cursor{ID: last.ID, CreatedAt: last.CreatedAt}
	}
	require.Len(t, got, 7)
	for i, c := range old[:7] {
		require.Equal(t, c.id, got[i].ID)
		require.Equal(t, "name of "+c.id, got[i].Name)
		require.Equal(t, "p", got[i].ProjectID)
		require.True(t, fromMicros(c.at).Equal(got[i].CreatedAt), "%s: %v", c.id, got[i].CreatedAt)
	}
	created, err := s.CreateContact(ctx, store.Contact{ID: "c_new", ProjectID: "p", Name: "n", CreatedAt: time.Unix(0, 0)})
	require.NoError(t, err)
	require.Equal(t, int64(253402300799999999), micros(created.CreatedAt), "raised to the migrated floor (its id sorts after c_max)")
	page, err := s.ListContacts(ctx, "p", paginate.Request{Limit: 10, After: paginate.Cursor{ID: "c_max", CreatedAt: fromMicros(253402300799999999)}})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	require.Equal(t, "c_new", page.Items[0].ID)
	_, err = s.CreateContact(ctx, store.Contact{ID: "c_a", ProjectID: "q", Name: "dup"})
	require.ErrorIs(t, err, store.ErrConflict, "ids stay unique across projects")
	q, err := s.ListContacts(ctx, "q", paginate.Request{Limit: 10})
	require.NoError(t, err)
	require.Len(t, q.Items, 1)
	require.Equal(t, "c_other", q.Items[0].ID)
}

// TestContactPos_OrdersAsTimeThenID checks the position encoding against
// the (created_at, id) order it stands for.
func TestContactPos_OrdersAsTimeThenID(t *testing.T) {
	ats := []int64{math.MinInt64, -62135596800000000, -1, 0, 1, 1732222222000000, math.MaxInt64}
	ids := []string{"A", "a", "a\x00", "ab", "b", "\xff"}
	for _, a1 := range ats {
		for _, a2 := range ats {
			for _, i1 := range ids {
				for _, i2 := range ids {
					want := cmp.Compare(a1, a2)
					if want == 0 {
						want = strings.Compare(i1, i2)
					}
					got := bytes.Compare(contactPos(a1, i1), contactPos(a2, i2))
					require.Equal(t, want, got, "(%d,%q) vs (%d,%q)", a1, i1, a2, i2)
				}
			}
			at, err := splitPos(contactPos(a1, "x"))
			require.NoError(t, err)
			require.Equal(t, a1, at)
		}
	}
	_, err := splitPos([]byte("12345678"))
	require.Error(t, err, "a position without an id")
}

// TestRawPool_Close checks the raw read path around Close: a connection
// in use when the pool closes is closed when it is put back, and a list
// after Close fails instead of opening a connection.
func TestRawPool_Close(t *testing.T) {
	s := openFile(t, filepath.Join(t.TempDir(), "r.db"), nil)
	ctx := t.Context()
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
	_, err := s.CreateContact(ctx, store.Contact{ID: "c1", ProjectID: "p", Name: "n"})
	require.NoError(t, err)
	_, err = s.ListContacts(ctx, "p", paginate.Request{Limit: 10})
	require.NoError(t, err)

	held, err := s.raw.get(ctx)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NotZero(t, held.db, "a connection in use stays open until it is put back")
	s.raw.put(held)
	require.Zero(t, held.db, "put after close closes the connection")
	require.Empty(t, s.raw.idle)
	require.Empty(t, s.raw.slots, "every connection's slot is given back")

	_, err = s.ListContacts(ctx, "p", paginate.Request{Limit: 10})
	require.ErrorIs(t, err, errPoolClosed)
}

// TestRawPool_WaitsForAConnection checks that the pool never opens more
// connections than its size: a caller waits for one to be put back, or for
// its context to end.
func TestRawPool_WaitsForAConnection(t *testing.T) {
	s := openFile(t, filepath.Join(t.TempDir(), "r.db"), &Options{MaxOpenConns: 1})
	ctx := t.Context()
	held, err := s.raw.get(ctx)
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = s.raw.get(short)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the only connection is in use")
	got := make(chan *rawConn)
	go func() {
		c, err := s.raw.get(ctx)
		if err != nil {
			close(got)
			return
		}
		got <- c
	}()
	s.raw.put(held)
	c, ok := <-got
	require.True(t, ok)
	require.Same(t, held, c, "the waiter gets the connection put back")
	s.raw.put(c)
}
