package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// TestSchema_IDsCollateC checks that every id column compares byte-wise.
func TestSchema_IDsCollateC(t *testing.T) {
	t.Parallel()
	_, _, url := newShared(t)
	conn := connect(t, url)
	rows, err := conn.Query(context.Background(), `
		SELECT c.relname, a.attname, coalesce(co.collname, '')
		FROM pg_attribute a
		JOIN pg_class c ON c.oid = a.attrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_collation co ON co.oid = a.attcollation
		WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0
		  AND (a.attname IN ('id', 'key', 'email_normalized') OR a.attname LIKE '%\_id')`)
	require.NoError(t, err)
	n := 0
	for rows.Next() {
		var table, column, coll string
		require.NoError(t, rows.Scan(&table, &column, &coll))
		assert.Equal(t, "C", coll, "collation of %s.%s", table, column)
		n++
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, 25, n, "id columns checked")
}

// TestTimes_SessionTimeZone checks that times come back in UTC and equal to
// their microsecond truncation whatever the session's TimeZone.
func TestTimes_SessionTimeZone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	st := openStore(t, url+sep+"timezone=Asia/Kathmandu")
	at := time.Date(2026, 3, 1, 12, 0, 0, 999999999, time.FixedZone("X", -7*3600))
	require.NoError(t, st.CreateProject(ctx, store.Project{ID: "p", CreatedAt: at}))
	p, err := st.GetProject(ctx, "p")
	require.NoError(t, err)
	assert.Equal(t, time.UTC, p.CreatedAt.Location())
	assert.True(t, p.CreatedAt.Equal(store.Truncate(at)), "got %s, want %s", p.CreatedAt, store.Truncate(at))
	assert.Equal(t, 999999000, p.CreatedAt.Nanosecond(), "truncated, not rounded")
}

// TestErrors_Translation checks the mapping of PostgreSQL errors to the
// store's sentinels.
func TestErrors_Translation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t)
	mustProject(t, st, "p")
	u := mustUser(t, st, "p", "Ann@Example.com")

	dup := u
	dup.ID = store.NewID(store.PrefixUser)
	dup.Email = "ann@EXAMPLE.com"
	assert.ErrorIs(t, st.CreateUser(ctx, dup), store.ErrConflict, "unique_violation on the normalized email")
	assert.ErrorIs(t, st.CreateUser(ctx, u), store.ErrConflict, "unique_violation on the id")
	other := u
	other.ProjectID = "nope"
	assert.ErrorIs(t, st.CreateUser(ctx, other), store.ErrNotFound, "foreign_key_violation: unknown project")

	fam := store.RefreshFamily{ID: store.NewID(store.PrefixFamily), ProjectID: "p", UserID: "usr_nobody", IssuedAt: t0, ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}
	assert.ErrorIs(t, st.CreateRefreshFamily(ctx, fam, "h"), store.ErrNotFound, "unknown user")
	mustProject(t, st, "q")
	other2 := mustUser(t, st, "q", "bob@example.com")
	fam.UserID = other2.ID
	assert.ErrorIs(t, st.CreateRefreshFamily(ctx, fam, "h"), store.ErrNotFound, "a user of another project")

	// Values the store.Check functions let through and PostgreSQL refuses
	// (data exceptions, class 22): malformed input, nothing stored.
	bad := store.User{ID: store.NewID(store.PrefixUser), ProjectID: "p", Email: "c@example.com", PasswordHash: "nul\x00", CreatedAt: t0}
	assert.ErrorIs(t, st.CreateUser(ctx, bad), store.ErrInvalid, "NUL byte in text")
	bad.PasswordHash = "bad\xc3\x28"
	assert.ErrorIs(t, st.CreateUser(ctx, bad), store.ErrInvalid, "invalid UTF-8")
	bad.PasswordHash = "h"
	bad.CreatedAt = time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC)
	assert.ErrorIs(t, st.CreateUser(ctx, bad), store.ErrInvalid, "time out of timestamptz's range")
	_, err := st.GetUserByEmail(ctx, "p", "c@example.com")
	assert.ErrorIs(t, err, store.ErrNotFound, "nothing stored")
	_, err = st.ListUsers(ctx, "p", "a\x00", paginate.Request{Limit: 10})
	assert.ErrorIs(t, err, store.ErrInvalid, "NUL byte in a prefix")

	// A cancelled context is reported as such.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = st.GetUser(cctx, "p", u.ID)
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, store.ErrUnavailable)
}

// TestUsers_Tags checks text[] tags: order kept, nil stored and read as an
// empty, non-nil slice.
func TestUsers_Tags(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t)
	mustProject(t, st, "p")
	u := mustUser(t, st, "p", "a@example.com")
	got, err := st.GetUser(ctx, "p", u.ID)
	require.NoError(t, err)
	assert.NotNil(t, got.Tags)
	assert.Empty(t, got.Tags)

	v := store.User{ID: store.NewID(store.PrefixUser), ProjectID: "p", Email: "b@example.com", PasswordHash: "h", Tags: []string{"z", "admin", "a.b", "ünï:cödé"}, CreatedAt: t0}
	require.NoError(t, st.CreateUser(ctx, v))
	got, err = st.GetUserByEmail(ctx, "p", "B@EXAMPLE.COM")
	require.NoError(t, err)
	assert.Equal(t, v.Tags, got.Tags)
}

// TestThrottle_Prune checks that ended windows are deleted as failures are
// added, while open ones stay, and that keys of the longest length are
// usable.
func TestThrottle_Prune(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw, _, url := newShared(t)
	st := store.Check(raw) // as hosts use it: arguments checked
	conn := connect(t, url)
	count := func() int {
		var n int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM throttles`).Scan(&n))
		return n
	}
	for _, k := range []string{"a", "b", "c"} {
		_, _, err := st.AddFailure(ctx, k, t0, time.Minute)
		require.NoError(t, err)
	}
	long := strings.Repeat("k", 512)
	n, reset, err := st.AddFailure(ctx, long, t0, time.Hour)
	require.NoError(t, err, "long key")
	assert.Equal(t, 1, n)
	assert.True(t, reset.Equal(store.Truncate(t0.Add(time.Hour))))
	assert.Equal(t, 4, count())
	_, _, err = st.AddFailure(ctx, long+"k", t0, time.Hour)
	assert.ErrorIs(t, err, store.ErrInvalid, "key over 512 bytes")

	// Two minutes later (past the prune interval): a, b and c have ended.
	_, _, err = st.AddFailure(ctx, "d", t0.Add(2*time.Minute), time.Minute)
	require.NoError(t, err)
	assert.Equal(t, 2, count(), "ended windows pruned, the long key's and d's kept")
	n, _, err = st.Failures(ctx, long, t0.Add(2*time.Minute), time.Hour)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	require.NoError(t, st.ClearFailures(ctx, long))
	assert.Equal(t, 1, count())
}

// TestThrottle_TwoInstances counts failures added at once through two pools
// exactly once each.
func TestThrottle_TwoInstances(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b, _ := newShared(t)
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		st := a
		if i%2 == 1 {
			st = b
		}
		wg.Go(func() {
			_, _, err := st.AddFailure(ctx, "login:p:ann", t0.Add(time.Duration(i)*time.Millisecond), time.Minute)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	got, reset, err := a.Failures(ctx, "login:p:ann", t0.Add(time.Second), time.Minute)
	require.NoError(t, err)
	assert.Equal(t, n, got)
	assert.True(t, reset.After(store.Truncate(t0)) && !reset.After(store.Truncate(t0.Add(time.Minute+n*time.Millisecond))), "reset %s", reset)
}
