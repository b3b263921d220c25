package sqlite

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

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
func pragma(t *testing.T, conn *sqlite.Conn, name string) string {
	t.Helper()
	var v string
	require.NoError(t, sqlitex.ExecuteTransient(conn, "PRAGMA "+name, &sqlitex.ExecOptions{
		ResultFunc: func(st *sqlite.Stmt) error { v = st.ColumnText(0); return nil },
	}), "PRAGMA %s", name)
	return v
}

// scalar returns the integer that query, run on a connection of s's
// readers, returns.
func scalar(t *testing.T, s *Store, query string, args ...any) int64 {
	t.Helper()
	var n int64
	require.NoError(t, s.readRow(t.Context(), query, func(st *sqlite.Stmt) error {
		n = st.ColumnInt64(0)
		return nil
	}, args...), query)
	return n
}

// takeReaders takes n connections of s's read pool at once, so that each is
// a separate SQLite connection, and gives them back when the test ends.
func takeReaders(t *testing.T, s *Store, n int) []*sqlite.Conn {
	t.Helper()
	var cs []*sqlite.Conn
	for range n {
		c, err := s.readers.take(t.Context())
		require.NoError(t, err)
		cs = append(cs, c)
	}
	t.Cleanup(func() {
		for _, c := range cs {
			s.readers.put(c)
		}
	})
	return cs
}

// withWriter runs fn with the store's writer connection.
func withWriter(t *testing.T, s *Store, fn func(conn *sqlite.Conn)) {
	t.Helper()
	conn, err := s.writer.take(t.Context())
	require.NoError(t, err)
	defer s.writer.put(conn)
	fn(conn)
}

func TestOpen_PragmasOnEveryConnection(t *testing.T) {
	t.Parallel()
	s := openFile(t, filepath.Join(t.TempDir(), "p.db"), &Options{MaxOpenConns: 3, BusyTimeout: 1500 * time.Millisecond})
	check := func(c *sqlite.Conn, queryOnly string) {
		t.Helper()
		require.Equal(t, "wal", pragma(t, c, "journal_mode"))
		require.Equal(t, "2", pragma(t, c, "synchronous"), "synchronous=FULL")
		require.Equal(t, "1", pragma(t, c, "foreign_keys"))
		require.Equal(t, "1500", pragma(t, c, "busy_timeout"))
		require.Equal(t, queryOnly, pragma(t, c, "query_only"))
	}
	withWriter(t, s, func(c *sqlite.Conn) { check(c, "0") })
	for _, c := range takeReaders(t, s, 3) {
		check(c, "1")
	}
	s.version.mu.Lock()
	check(s.version.conn, "1")
	s.version.mu.Unlock()
	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, err := s.readers.take(short)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the pool holds MaxOpenConns connections")
}

// doneSpy is a context that records whether its Done channel was asked
// for.
type doneSpy struct {
	context.Context
	asked bool
}

func (d *doneSpy) Done() <-chan struct{} {
	d.asked = true
	return d.Context.Done()
}

// TestConnPool_TakeIdleWithoutWaiting: an idle connection is taken without
// asking the context for its Done channel (a request's context makes one on
// first use); only a take that has to wait does.
func TestConnPool_TakeIdleWithoutWaiting(t *testing.T) {
	t.Parallel()
	s := openFile(t, filepath.Join(t.TempDir(), "p.db"), &Options{MaxOpenConns: 1})
	_, err := s.ChangeVersion(t.Context()) // opens the one reader, idle after
	require.NoError(t, err)
	ctx := &doneSpy{Context: t.Context()}
	c, err := s.readers.take(ctx)
	require.NoError(t, err)
	defer s.readers.put(c)
	require.False(t, ctx.asked, "Done was asked for with an idle connection")

	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	waiting := &doneSpy{Context: short}
	_, err = s.readers.take(waiting)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.True(t, waiting.asked)
}

// openedReaders returns how many connections s's read pool has open.
func openedReaders(s *Store) int {
	s.readers.mu.Lock()
	defer s.readers.mu.Unlock()
	return s.readers.opened
}

// TestOpen_ReadersOpenedAsNeeded: Open opens no reader; reads made one at a
// time share one; a read that finds every open reader taken opens another,
// up to MaxOpenConns.
func TestOpen_ReadersOpenedAsNeeded(t *testing.T) {
	t.Parallel()
	s := openFile(t, filepath.Join(t.TempDir(), "p.db"), &Options{MaxOpenConns: 3})
	ctx := t.Context()
	require.Equal(t, 0, openedReaders(s), "Open opened a reader")
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
	for range 5 {
		_, err := s.GetProject(ctx, "p")
		require.NoError(t, err)
	}
	require.Equal(t, 1, openedReaders(s), "reads one at a time")
	takeReaders(t, s, 3)
	require.Equal(t, 3, openedReaders(s))
}

// TestConnPool_OpenFails: a connection that fails to open is not counted:
// the take that tried returns the error, and a later take opens one. After
// close, take fails and opens nothing.
func TestConnPool_OpenFails(t *testing.T) {
	t.Parallel()
	refused := errors.New("refused")
	calls := 0
	p := newOpeningPool(1, func() (*sqlite.Conn, error) {
		calls++
		if calls == 1 {
			return nil, refused
		}
		return sqlite.OpenConn(MemoryPath, sqlite.OpenReadWrite|sqlite.OpenMemory)
	})
	_, err := p.take(t.Context())
	require.ErrorIs(t, err, refused)
	c, err := p.take(t.Context())
	require.NoError(t, err, "the failed open still holds its place")
	p.put(c)
	c, err = p.take(t.Context())
	require.NoError(t, err)
	p.put(c)
	require.Equal(t, 2, calls, "an idle connection was not reused")
	require.NoError(t, p.close())
	_, err = p.take(t.Context())
	require.ErrorIs(t, err, errClosed)
	require.Equal(t, 2, calls, "a connection was opened after close")
}

// TestConnPool_CloseWhileOpening: a close that begins while a connection
// is being opened waits for the open, and does not wait for a connection
// whose open failed.
func TestConnPool_CloseWhileOpening(t *testing.T) {
	t.Parallel()
	opening, release := make(chan struct{}), make(chan struct{})
	p := newOpeningPool(2, func() (*sqlite.Conn, error) {
		close(opening)
		<-release
		return nil, errors.New("refused")
	})
	taken := make(chan error)
	go func() {
		_, err := p.take(t.Context())
		taken <- err
	}()
	<-opening
	closed := make(chan error)
	go func() { closed <- p.close() }()
	close(release)
	require.Error(t, <-taken)
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("close waits for a connection that failed to open")
	}
}

func TestOpen_DefaultBusyTimeout(t *testing.T) {
	t.Parallel()
	s := openFile(t, filepath.Join(t.TempDir(), "p.db"), nil)
	withWriter(t, s, func(c *sqlite.Conn) { require.Equal(t, "5000", pragma(t, c, "busy_timeout")) })
}

// holdWriteLock begins a write transaction on a, which holds the
// database's write lock until the returned function is called.
func holdWriteLock(t *testing.T, a *Store) (release func()) {
	t.Helper()
	holding := make(chan struct{})
	done := make(chan struct{})
	go func() {
		_ = a.inTx(context.Background(), func(*wtx) error { close(holding); <-done; return nil })
	}()
	<-holding
	var once sync.Once
	release = func() { once.Do(func() { close(done) }) }
	t.Cleanup(release)
	return release
}

// TestOpen_WriteTransactionsAreImmediate: a write transaction holds the
// write lock from BEGIN, so a second handle's write waits, even before the
// first transaction has written anything; past its busy timeout it fails
// with ErrUnavailable, having changed nothing, and succeeds once the lock
// is released.
func TestOpen_WriteTransactionsAreImmediate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "p.db")
	a := openFile(t, path, nil)
	b := openFile(t, path, &Options{BusyTimeout: 50 * time.Millisecond})
	ctx := t.Context()
	release := holdWriteLock(t, a)
	start := time.Now()
	err := b.CreateProject(ctx, store.Project{ID: "p1", CreatedAt: time.Now()})
	require.ErrorIs(t, err, store.ErrUnavailable, "write while another handle holds BEGIN IMMEDIATE")
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond, "waited for the busy timeout")
	_, err = b.GetProject(ctx, "p1")
	require.ErrorIs(t, err, store.ErrNotFound, "the refused write changed nothing")
	release()
	require.NoError(t, b.CreateProject(ctx, store.Project{ID: "p1", CreatedAt: time.Now()}))
}

// TestCheckWritable_DeadlineBoundsTheLockWait: while another handle holds
// the write lock, CheckWritable gives up at its context's deadline (a
// health check's), not at the busy timeout, with ErrUnavailable; the
// handle's writes still wait the whole busy timeout afterwards.
func TestCheckWritable_DeadlineBoundsTheLockWait(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "p.db")
	a := openFile(t, path, nil)
	b := openFile(t, path, &Options{BusyTimeout: time.Hour})
	release := holdWriteLock(t, a)

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	checked := make(chan error, 1)
	go func() { checked <- b.CheckWritable(ctx) }()
	select {
	case err := <-checked:
		require.ErrorIs(t, err, store.ErrUnavailable)
	case <-time.After(time.Minute):
		t.Fatal("CheckWritable still waits for the lock a minute past its deadline")
	}

	// A write started now waits for the lock (the busy timeout, an hour)
	// and succeeds once it is released.
	wrote := make(chan error, 1)
	go func() { wrote <- b.CreateProject(context.Background(), store.Project{ID: "p1", CreatedAt: time.Now()}) }()
	time.Sleep(100 * time.Millisecond)
	release()
	require.NoError(t, <-wrote, "a write waiting for the lock")
	require.NoError(t, b.CheckWritable(t.Context()))
}

func TestOpen_Memory(t *testing.T) {
	t.Parallel()
	a := openFile(t, MemoryPath, nil)
	b := openFile(t, MemoryPath, nil)
	ctx := t.Context()
	require.NoError(t, a.CreateProject(ctx, store.Project{ID: "only-a", CreatedAt: time.Now()}))
	_, err := b.GetProject(ctx, "only-a")
	require.ErrorIs(t, err, store.ErrNotFound, "each :memory: store is private")
	require.Same(t, a.writer, a.readers, "one connection does everything")
	require.Equal(t, 1, cap(a.writer.idle))
	withWriter(t, a, func(c *sqlite.Conn) { require.Equal(t, "1", pragma(t, c, "foreign_keys")) })
}

func TestOpen_PathNeedingEscapes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "we?ird#na%me.db")
	s := openFile(t, path, nil)
	require.NoError(t, s.CreateProject(t.Context(), store.Project{ID: "p", CreatedAt: time.Now()}))
	require.FileExists(t, path)
}

func migrationCount(t *testing.T, s *Store) int {
	t.Helper()
	return int(scalar(t, s, "SELECT COUNT(*) FROM schema_migrations"))
}

func TestMigrate_Idempotent(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openFile(t, path, &Options{NoMigrate: true})
	ctx := t.Context()
	err := s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()})
	require.Error(t, err, "no schema before Migrate")
	require.NoError(t, s.Migrate(ctx))
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
}

func TestMigrate_RefusesNewerSchema(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openFile(t, path, nil)
	_, err := s.exec(t.Context(), recordMigrationSQL, 999, "0999_future", 0)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = Open(t.Context(), path, nil)
	require.ErrorContains(t, err, "newer than this build")
}

func TestTimes_MicrosecondRoundTrip(t *testing.T) {
	t.Parallel()
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
		require.Equal(t, dbTime(store.Truncate(at)), dbTime(at), "stored value is the truncation's")
	}
}

func TestTimes_ZeroIsNull(t *testing.T) {
	t.Parallel()
	s := openFile(t, MemoryPath, nil)
	ctx := t.Context()
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
	require.NoError(t, s.CreateAPIKey(ctx, store.APIKey{ID: "key_1", ProjectID: "p", Name: "n", CreatedAt: time.Now()}))
	require.EqualValues(t, 1, scalar(t, s, "SELECT last_used_at IS NULL AND revoked_at IS NULL FROM api_keys"))
	k, err := s.GetAPIKey(ctx, "p", "key_1")
	require.NoError(t, err)
	require.True(t, k.LastUsedAt.IsZero())
	require.True(t, k.RevokedAt.IsZero())
}

// queryPlan returns the EXPLAIN QUERY PLAN lines of query.
func queryPlan(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	var lines []string
	require.NoError(t, s.read(t.Context(), func(conn *sqlite.Conn) error {
		return sqlitex.ExecuteTransient(conn, "EXPLAIN QUERY PLAN "+query, &sqlitex.ExecOptions{
			Args: args,
			ResultFunc: func(st *sqlite.Stmt) error {
				lines = append(lines, st.ColumnText(3))
				return nil
			},
		})
	}))
	return strings.Join(lines, "\n")
}

func TestListContacts_QueryPlanUsesIndex(t *testing.T) {
	t.Parallel()
	s := openFile(t, filepath.Join(t.TempDir(), "q.db"), nil)
	ctx := t.Context()
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
	cs := make([]store.Contact, 2000)
	for i := range cs {
		cs[i] = store.Contact{ID: store.NewID(store.PrefixContact), Name: "n", CreatedAt: time.Unix(int64(i/3), 0)}
	}
	require.NoError(t, s.CreateContacts(ctx, "p", cs))
	_, err := s.exec(ctx, "ANALYZE")
	require.NoError(t, err)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{listContactsFirstSQL, []any{"p", 26}},
		{listContactsAfterSQL, []any{"p", contactPos(100, "ct_x"), 26}},
	} {
		plan := queryPlan(t, s, q.sql, q.args...)
		t.Logf("%s\n=> %s", q.sql, plan)
		require.Contains(t, plan, "USING PRIMARY KEY")
		require.Contains(t, plan, "project_id=?")
		require.NotContains(t, plan, "TEMP B-TREE")
		require.NotContains(t, plan, "SCAN")
	}
	plan := queryPlan(t, s, listContactsAfterSQL, "p", contactPos(100, "ct_x"), 26)
	require.Contains(t, plan, "(project_id=? AND pos>?)", "the seek uses the position")
}

func TestContacts_FloorRule(t *testing.T) {
	t.Parallel()
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
		{ID: "ct_", Name: "_", CreatedAt: t0},
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
	t.Parallel()
	s := openFile(t, MemoryPath, nil)
	ctx := t.Context()
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
	cs := make([]store.Contact, 2000)
	for i := range cs {
		cs[i] = store.Contact{ID: store.NewID(store.PrefixContact), Name: "n", CreatedAt: time.Now()}
	}
	cs[len(cs)-1].ID = cs[0].ID // a duplicate, the last contact
	require.ErrorIs(t, s.CreateContacts(ctx, "p", cs), store.ErrConflict)
	page, err := s.ListContacts(ctx, "p", paginate.Request{Limit: 10})
	require.NoError(t, err)
	require.Empty(t, page.Items, "nothing inserted on error")
	require.ErrorIs(t, s.CreateContacts(ctx, "nope", cs[:1]), store.ErrNotFound)
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
	t.Parallel()
	s := openFile(t, MemoryPath, nil)
	ctx := t.Context()
	now := time.Now()
	user := func(id, email string) store.User {
		return store.User{ID: id, ProjectID: "p", Email: email, PasswordHash: "h", CreatedAt: now}
	}
	nope := user("usr_1", "a@b")
	nope.ProjectID = "nope"
	require.ErrorIs(t, s.CreateUser(ctx, nope), store.ErrNotFound, "foreign key")
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: now}))
	require.ErrorIs(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: now}), store.ErrConflict, "primary key")
	require.NoError(t, s.CreateUser(ctx, user("usr_1", "A@b")))
	require.ErrorIs(t, s.CreateUser(ctx, user("usr_2", "a@B")), store.ErrConflict, "unique email_norm")
	err := s.CreateUser(ctx, user("usr_1", "c@d"))
	require.ErrorIs(t, err, store.ErrConflict)
	require.NotContains(t, err.Error(), "INSERT", "no SQL in errors")
}

func TestThrottle_PrunesEndedWindows(t *testing.T) {
	t.Parallel()
	s := openFile(t, MemoryPath, nil)
	ctx := t.Context()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		_, _, err := s.AddFailure(ctx, "k"+string(rune(i+0x100)), t0.Add(time.Duration(i)*time.Second), time.Second)
		require.NoError(t, err)
	}
	n := scalar(t, s, "SELECT COUNT(*) FROM throttle_windows")
	require.Less(t, n, int64(2*pruneEvery), "ended windows are pruned")
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
	t.Parallel()
	ms, err := loadMigrations()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "old.db")
	db := oldDatabase(t, path, 2)
	ctx := t.Context()
	exec := func(query string, args ...any) {
		t.Helper()
		require.NoError(t, sqlitex.Execute(db, query, &sqlitex.ExecOptions{Args: args}), query)
	}
	exec(`INSERT INTO projects (id, created_at) VALUES ('p', 0), ('q', 0)`)
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
		exec(`INSERT INTO contacts (project_id, created_at, id, name) VALUES (?, ?, ?, ?)`,
			c.project, c.at, c.id, "name of "+c.id)
	}
	exec(`UPDATE projects SET contact_top_at = 253402300799999999, contact_top_id = 'c_max' WHERE id = 'p'`)
	require.NoError(t, db.Close())

	s := openFile(t, path, nil)
	require.Equal(t, len(ms), migrationCount(t, s))
	require.Zero(t, scalar(t, s, `SELECT COUNT(*) FROM contacts WHERE typeof(pos) <> 'blob'`), "positions are stored as BLOBs")
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
		require.True(t, fromDBTime(c.at).Equal(got[i].CreatedAt), "%s: %v", c.id, got[i].CreatedAt)
	}
	created, err := s.CreateContact(ctx, store.Contact{ID: "c_new", ProjectID: "p", Name: "n", CreatedAt: time.Unix(0, 0)})
	require.NoError(t, err)
	require.Equal(t, int64(253402300799999999), dbTime(created.CreatedAt), "raised to the migrated floor (its id sorts after c_max)")
	page, err := s.ListContacts(ctx, "p", paginate.Request{Limit: 10, After: paginate.Cursor{ID: "c_max", CreatedAt: fromDBTime(253402300799999999)}})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	require.Equal(t, "c_new", page.Items[0].ID)
	_, err = s.CreateContact(ctx, store.Contact{ID: "c_a", ProjectID: "q", Name: "dup", CreatedAt: time.Now()})
	require.ErrorIs(t, err, store.ErrConflict, "ids stay unique across projects")
	q, err := s.ListContacts(ctx, "q", paginate.Request{Limit: 10})
	require.NoError(t, err)
	require.Len(t, q.Items, 1)
	require.Equal(t, "c_other", q.Items[0].ID)
}

// TestContactPos_OrdersAsTimeThenID checks the position encoding against
// the (created_at, id) order it stands for.
func TestContactPos_OrdersAsTimeThenID(t *testing.T) {
	t.Parallel()
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

// oldDatabase creates the database file at path as a build whose schema
// stopped at migration upTo left it, and returns a connection to it for
// the test to add rows; the test closes it.
func oldDatabase(t *testing.T, path string, upTo int) *sqlite.Conn {
	t.Helper()
	ms, err := loadMigrations()
	require.NoError(t, err)
	db, err := connConfig{busy: time.Second}.openWriter(t.Context(), fileURI(path))
	require.NoError(t, err)
	require.NoError(t, sqlitex.ExecuteTransient(db, createMigrationsTableSQL, nil))
	for _, m := range ms[:upTo] {
		require.NoError(t, sqlitex.ExecuteScript(db, m.sql, nil), m.name)
		require.NoError(t, sqlitex.Execute(db, recordMigrationSQL, &sqlitex.ExecOptions{Args: []any{m.version, m.name, 0}}))
	}
	return db
}

// TestMigrate_SecondStageKeepsRows opens a database made by a build whose
// schema stopped at 0003, with a row in every table, and checks that
// migration 0004 keeps every row and field and gives the new fields their
// "unknown" values: no DisabledAt, no EndsAt, no CreatedBy or
// SigningKeyID, an empty revocation feed that new revocations extend; and
// that 0005 makes its signing key an EdDSA key.
func TestMigrate_SecondStageKeepsRows(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.db")
	db := oldDatabase(t, path, 3)
	exec := func(query string, args ...any) {
		t.Helper()
		require.NoError(t, sqlitex.Execute(db, query, &sqlitex.ExecOptions{Args: args}), query)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	us := dbTime(t0)
	pub := bytes.Repeat([]byte{7}, 32)
	exec(`INSERT INTO projects (id, created_at) VALUES ('p', ?)`, us)
	exec(`INSERT INTO users (id, project_id, email, email_norm, password_hash, tags, created_at)
VALUES ('usr_1', 'p', 'Ann@Example.com', 'ann@example.com', 'hash', '["admin"]', ?)`, us)
	exec(`INSERT INTO contacts (project_id, pos, id, name) VALUES ('p', ?, 'ct_1', 'Ada')`, contactPos(us, "ct_1"))
	exec(`UPDATE projects SET contact_top_at = ?, contact_top_id = 'ct_1' WHERE id = 'p'`, us)
	exec(`INSERT INTO api_keys (id, project_id, name, created_at, last_used_at, revoked_at)
VALUES ('key_1', 'p', 'ci', ?, ?, NULL)`, us, us+1)
	exec(`INSERT INTO signing_keys (id, project_id, public_key, encrypted_private_key, created_at, retired_at)
VALUES ('sk_1', 'p', ?, X'0102', ?, NULL)`, pub, us)
	exec(`INSERT INTO refresh_families (id, project_id, user_id, generation, issued_at, expires_at, created_at, rotated_at, revoked_at)
VALUES ('rf_1', 'p', 'usr_1', 3, ?, ?, ?, ?, NULL)`, us+10, us+3_600_000_000, us, us+10)
	exec(`INSERT INTO throttle_windows (key, count, started_at, reset_at) VALUES ('k', 2, ?, ?)`, us, us+60_000_000)
	require.NoError(t, db.Close())

	s := openFile(t, path, nil)
	ctx := t.Context()
	ms, err := loadMigrations()
	require.NoError(t, err)
	require.Equal(t, len(ms), migrationCount(t, s))

	p, err := s.GetProject(ctx, "p")
	require.NoError(t, err)
	require.Equal(t, t0, p.CreatedAt)
	u, err := s.GetUserByEmail(ctx, "p", "ann@example.com")
	require.NoError(t, err)
	require.Equal(t, store.User{ID: "usr_1", ProjectID: "p", Email: "Ann@Example.com", PasswordHash: "hash",
		Tags: []string{"admin"}, CreatedAt: t0}, u)
	users, err := s.ListUsers(ctx, "p", "", paginate.Request{Limit: 10})
	require.NoError(t, err)
	require.Equal(t, []store.User{u}, users.Items)
	page, err := s.ListContacts(ctx, "p", paginate.Request{Limit: 10})
	require.NoError(t, err)
	require.Equal(t, []store.Contact{{ID: "ct_1", ProjectID: "p", Name: "Ada", CreatedAt: t0}}, page.Items)
	k, err := s.GetAPIKey(ctx, "p", "key_1")
	require.NoError(t, err)
	require.Equal(t, store.APIKey{ID: "key_1", ProjectID: "p", Name: "ci", CreatedAt: t0,
		LastUsedAt: t0.Add(time.Microsecond), Scopes: []string{}}, k)
	sk, err := s.GetSigningKey(ctx, "p", "sk_1")
	require.NoError(t, err)
	require.Equal(t, store.SigningKey{ID: "sk_1", ProjectID: "p", Algorithm: store.AlgEdDSA, PublicKey: pub,
		EncryptedPrivateKey: []byte{1, 2}, CreatedAt: t0}, sk)
	f, err := s.GetRefreshFamily(ctx, "p", "rf_1")
	require.NoError(t, err)
	require.Equal(t, store.RefreshFamily{ID: "rf_1", ProjectID: "p", UserID: "usr_1", Generation: 3,
		IssuedAt: t0.Add(10 * time.Microsecond), ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}, f)
	n, reset, err := s.Failures(ctx, "k", t0.Add(time.Second), time.Minute)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, t0.Add(time.Minute), reset)

	// The old rows work with the new methods: the session rotates (no
	// EndsAt), within its reuse window.
	rot, err := s.RotateRefresh(ctx, "p", "rf_1", 3, store.RotateParams{Now: t0.Add(time.Minute), TTL: time.Hour})
	require.NoError(t, err)
	require.Equal(t, int64(4), rot.Family.Generation)
	feed, err := s.ListRevocations(ctx, "p", paginate.Request{Limit: 10})
	require.NoError(t, err)
	require.Empty(t, feed.Items, "no revocation before the first")
	require.NoError(t, s.RevokeAPIKey(ctx, "p", "key_1", t0))
	require.NoError(t, s.DisableUser(ctx, "p", "usr_1", t0.Add(2*time.Minute)))
	f, err = s.GetRefreshFamily(ctx, "p", "rf_1")
	require.NoError(t, err)
	require.Equal(t, t0.Add(2*time.Minute), f.RevokedAt, "disabling the user ended the migrated session")
	feed, err = s.ListRevocations(ctx, "p", paginate.Request{Limit: 10})
	require.NoError(t, err)
	require.Len(t, feed.Items, 2)
	require.Equal(t, store.RevokedAPIKey, feed.Items[0].Kind)
	require.Equal(t, store.RevokedUser, feed.Items[1].Kind)
	c, err := s.CreateContact(ctx, store.Contact{ID: "ct_0", ProjectID: "p", Name: "Bo", CreatedAt: t0})
	require.NoError(t, err)
	require.Equal(t, t0.Add(time.Microsecond), c.CreatedAt, "the migrated contact floor still holds")
}

// TestClose_WaitsForReads: Close waits for a read that holds a connection,
// and every call after Close fails.
func TestClose_WaitsForReads(t *testing.T) {
	t.Parallel()
	for _, path := range []string{filepath.Join(t.TempDir(), "c.db"), MemoryPath} {
		s := openFile(t, path, nil)
		ctx := t.Context()
		require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
		held, err := s.readers.take(ctx)
		require.NoError(t, err)
		closed := make(chan error)
		go func() { closed <- s.Close() }()
		select {
		case err := <-closed:
			t.Fatalf("%s: Close returned %v while a connection was in use", path, err)
		case <-time.After(50 * time.Millisecond):
		}
		s.readers.put(held)
		require.NoError(t, <-closed, path)
		_, err = s.ListContacts(ctx, "p", paginate.Request{Limit: 10})
		require.Error(t, err, "%s: ListContacts after Close", path)
		_, err = s.GetProject(ctx, "p")
		require.Error(t, err, "%s: GetProject after Close", path)
		require.Error(t, s.CreateProject(ctx, store.Project{ID: "q", CreatedAt: time.Now()}), "%s: CreateProject after Close", path)
	}
}

// TestListContacts_LimitAboveMaxLimit: a limit above paginate.MaxLimit (a
// caller other than the HTTP API) still gets that many contacts and a right
// HasMore.
func TestListContacts_LimitAboveMaxLimit(t *testing.T) {
	t.Parallel()
	for _, path := range []string{filepath.Join(t.TempDir(), "l.db"), MemoryPath} {
		s := openFile(t, path, nil)
		ctx := t.Context()
		require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
		n := 3*paginate.MaxLimit + 5
		cs := make([]store.Contact, n)
		for i := range cs {
			cs[i] = store.Contact{ID: store.NewID(store.PrefixContact), Name: "n", CreatedAt: time.Unix(int64(i), 0)}
		}
		require.NoError(t, s.CreateContacts(ctx, "p", cs))
		page, err := s.ListContacts(ctx, "p", paginate.Request{Limit: 2 * paginate.MaxLimit})
		require.NoError(t, err)
		require.Len(t, page.Items, 2*paginate.MaxLimit, path)
		require.True(t, page.HasMore, path)
		page, err = s.ListContacts(ctx, "p", paginate.Request{Limit: n})
		require.NoError(t, err)
		require.Len(t, page.Items, n, path)
		require.False(t, page.HasMore, path)
	}
}

// TestListContacts_LongValues: values longer than the page buffer's free
// space (a name written before names were limited) are read whole.
func TestListContacts_LongValues(t *testing.T) {
	t.Parallel()
	s := openFile(t, filepath.Join(t.TempDir(), "l.db"), nil)
	ctx := t.Context()
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: time.Now()}))
	var want []string
	for i, n := range []int{columnRoom - 1, columnRoom, columnRoom + 1, 3 * columnRoom, 10} {
		name := strings.Repeat(string(rune('a'+i)), n)
		want = append(want, name)
		id := fmt.Sprintf("ct_%d", i)
		_, err := s.exec(ctx, insertContactSQL, "p", contactPos(int64(i), id), id, name)
		require.NoError(t, err)
	}
	page, err := s.ListContacts(ctx, "p", paginate.Request{Limit: 10})
	require.NoError(t, err)
	var got []string
	for _, c := range page.Items {
		got = append(got, c.Name)
	}
	require.Equal(t, want, got)
}

// TestCheckWritable_WriteLockHeld: while another handle holds the
// database's write lock past the busy timeout, CheckWritable says
// ErrUnavailable, having written nothing; once the lock is released it
// says nil.
func TestCheckWritable_WriteLockHeld(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "w.db")
	a := openFile(t, path, nil)
	b := openFile(t, path, &Options{BusyTimeout: 50 * time.Millisecond})
	ctx := t.Context()
	require.NoError(t, b.CheckWritable(ctx))
	release := holdWriteLock(t, a)
	require.ErrorIs(t, b.CheckWritable(ctx), store.ErrUnavailable, "another handle holds the write lock")
	release()
	require.NoError(t, b.CheckWritable(ctx))
	v, err := b.ChangeVersion(ctx)
	require.NoError(t, err)
	require.NoError(t, b.CheckWritable(ctx))
	w, err := b.ChangeVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, v, w, "a check is not a write")
}

// TestMigrate_KeyControlsKeepKeys opens a database whose schema stopped
// before 0006 (key controls), with a valid and a revoked key, and checks
// that the keys read back with no scopes, no expiry and no roll, and that
// the valid one rolls.
func TestMigrate_KeyControlsKeepKeys(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.db")
	ms, err := loadMigrations()
	require.NoError(t, err)
	upTo := 0
	for i, m := range ms {
		if m.version < 6 {
			upTo = i + 1
		}
	}
	db := oldDatabase(t, path, upTo)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	us := dbTime(t0)
	for _, q := range []string{
		`INSERT INTO projects (id, created_at) VALUES ('p', ?)`,
		`INSERT INTO api_keys (id, project_id, name, created_at) VALUES ('key_1', 'p', 'ci', ?)`,
		`INSERT INTO api_keys (id, project_id, name, created_at, revoked_at) VALUES ('key_2', 'p', 'old', ?, ?)`,
	} {
		require.NoError(t, sqlitex.Execute(db, q, &sqlitex.ExecOptions{Args: []any{us, us}[:strings.Count(q, "?")]}), q)
	}
	require.NoError(t, db.Close())

	s := openFile(t, path, nil)
	ctx := t.Context()
	k, err := s.GetAPIKey(ctx, "p", "key_1")
	require.NoError(t, err)
	require.Equal(t, store.APIKey{ID: "key_1", ProjectID: "p", Name: "ci", CreatedAt: t0, Scopes: []string{}}, k)
	_, err = s.RollAPIKey(ctx, "p", "key_1", store.APIKey{ID: "key_3", ProjectID: "p", Name: "ci", CreatedAt: t0.Add(time.Hour)}, t0.Add(2*time.Hour))
	require.NoError(t, err, "an old key rolls")
	_, err = s.RollAPIKey(ctx, "p", "key_2", store.APIKey{ID: "key_4", ProjectID: "p", Name: "old", CreatedAt: t0.Add(time.Hour)}, t0.Add(2*time.Hour))
	require.ErrorIs(t, err, store.ErrRevoked, "an old revoked key does not roll")
}
