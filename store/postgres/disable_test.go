package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// The four orders in which DisableUser (D) and a family write (CreateRefreshFamily
// C, RotateRefresh R) can meet on the rows they lock, made deterministic by
// running one side's statements in a raw transaction held open until the
// other side waits for its lock. Whatever the order, no family of the
// disabled user is live afterwards.

// TestDisableUser_BeforeCreate: D holds the user row; C waits for it and
// then finds the user disabled.
func TestDisableUser_BeforeCreate(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	s := openInternal(t, url)
	u := seedUser(t, s, "p")
	d := rawConn(t, url)
	tx, err := d.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	at := it0.Add(time.Minute)
	_, err = tx.Exec(ctx, lockUserSQL, "p", u.ID)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, disableUserSQL, "p", u.ID, at)
	require.NoError(t, err)

	errc := make(chan error, 1)
	go func() {
		errc <- s.CreateRefreshFamily(ctx, store.RefreshFamily{ID: "rf_c", ProjectID: "p", UserID: u.ID,
			IssuedAt: at, ExpiresAt: at.Add(time.Hour), CreatedAt: at})
	}()
	waitBlocked(t, rawConn(t, url), 1)
	_, err = tx.Exec(ctx, revokeUserFamiliesSQL, "p", u.ID, at)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	assert.ErrorIs(t, <-errc, store.ErrDisabled)
	_, err = s.GetRefreshFamily(ctx, "p", "rf_c")
	assert.ErrorIs(t, err, store.ErrNotFound, "no family was created")
}

// TestDisableUser_AfterCreate: C holds its lock on the user row; D waits for
// it and then revokes the new family.
func TestDisableUser_AfterCreate(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	s := openInternal(t, url)
	u := seedUser(t, s, "p")
	c := rawConn(t, url)
	tx, err := c.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	tag, err := tx.Exec(ctx, createFamilySQL, "p", "rf_c", u.ID, it0, it0.Add(time.Hour), it0, nil)
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())

	at := it0.Add(time.Minute)
	errc := make(chan error, 1)
	go func() { errc <- s.DisableUser(ctx, "p", u.ID, at) }()
	waitBlocked(t, rawConn(t, url), 1)
	require.NoError(t, tx.Commit(ctx))
	require.NoError(t, <-errc)
	f, err := s.GetRefreshFamily(ctx, "p", "rf_c")
	require.NoError(t, err)
	assert.True(t, f.RevokedAt.Equal(at), "the family created first is revoked at the disable time, got %v", f.RevokedAt)
}

// TestDisableUser_BeforeRotate: D has revoked the family row; R waits for
// it and then finds the family revoked and the user disabled.
func TestDisableUser_BeforeRotate(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	s := openInternal(t, url)
	u := seedUser(t, s, "p")
	f := seedFamily(t, s, u)
	d := rawConn(t, url)
	tx, err := d.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	at := it0.Add(time.Minute)
	for _, sql := range []string{lockUserSQL, disableUserSQL, revokeUserFamiliesSQL} {
		args := []any{"p", u.ID}
		if sql != lockUserSQL {
			args = append(args, at)
		}
		_, err = tx.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}

	errc := make(chan error, 1)
	go func() {
		_, err := s.RotateRefresh(ctx, "p", f.ID, 0, store.RotateParams{Now: at, TTL: time.Hour})
		errc <- err
	}()
	waitBlocked(t, rawConn(t, url), 1)
	require.NoError(t, tx.Commit(ctx))
	assert.ErrorIs(t, <-errc, store.ErrDisabled)
	got, err := s.GetRefreshFamily(ctx, "p", f.ID)
	require.NoError(t, err)
	assert.Equal(t, int64(0), got.Generation, "not rotated")
}

// TestDisableUser_AfterRotate: R holds the family row it rotated; D's
// revocation waits for it and then revokes the rotated family.
func TestDisableUser_AfterRotate(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	s := openInternal(t, url)
	u := seedUser(t, s, "p")
	f := seedFamily(t, s, u)
	r := rawConn(t, url)
	tx, err := r.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	now := it0.Add(time.Second)
	tag, err := tx.Exec(ctx, rotateFamilySQL, "p", f.ID, 0, now, now.Add(time.Hour))
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())

	at := it0.Add(time.Minute)
	errc := make(chan error, 1)
	go func() { errc <- s.DisableUser(ctx, "p", u.ID, at) }()
	waitBlocked(t, rawConn(t, url), 1)
	require.NoError(t, tx.Commit(ctx))
	require.NoError(t, <-errc)
	got, err := s.GetRefreshFamily(ctx, "p", f.ID)
	require.NoError(t, err)
	assert.Equal(t, int64(1), got.Generation, "the rotation committed first")
	assert.True(t, got.RevokedAt.Equal(at), "and its family is revoked, got %v", got.RevokedAt)
}

// TestDisableUser_Storm races sign-ins and rotations through two pools
// against DisableUser, in both isolation modes, and checks the invariant
// afterwards: every family of the disabled user is revoked, every call
// failed only with ErrDisabled (or ErrRevoked for a rotation that read the
// family after the revocation, or ErrReplayed for a generation another
// rotation consumed), and the feed holds one user item.
func TestDisableUser_Storm(t *testing.T) {
	for _, mode := range []struct {
		name  string
		newDB func(testing.TB) string
	}{{"ReadCommitted", pgtest.NewDatabase}, {"Serializable", pgtest.NewSerializableDatabase}} {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			url := mode.newDB(t)
			a, b := openInternal(t, url), openInternal(t, url)
			u := seedUser(t, a, "p")
			var fams []store.RefreshFamily
			for range 6 {
				fams = append(fams, seedFamily(t, a, u))
			}
			at := it0.Add(time.Minute)
			var wg sync.WaitGroup
			var mu sync.Mutex
			var unexpected []error
			fail := func(err error, ok ...error) {
				for _, o := range ok {
					if errors.Is(err, o) {
						return
					}
				}
				if err != nil {
					mu.Lock()
					unexpected = append(unexpected, err)
					mu.Unlock()
				}
			}
			start := make(chan struct{})
			for i := range 12 {
				s := []*Store{a, b}[i%2]
				wg.Go(func() {
					<-start
					err := s.CreateRefreshFamily(ctx, store.RefreshFamily{ID: fmt.Sprintf("rf_new_%d", i), ProjectID: "p", UserID: u.ID,
						IssuedAt: at, ExpiresAt: at.Add(time.Hour), CreatedAt: at})
					fail(err, store.ErrDisabled)
				})
			}
			for i, f := range fams {
				s := []*Store{a, b}[i%2]
				wg.Go(func() {
					<-start
					var gen int64
					for k := range 5 {
						r, err := s.RotateRefresh(ctx, "p", f.ID, gen, store.RotateParams{Now: at.Add(time.Duration(k) * time.Millisecond), TTL: time.Hour})
						if err != nil {
							fail(err, store.ErrDisabled, store.ErrRevoked)
							return
						}
						gen = r.Family.Generation
					}
				})
			}
			wg.Go(func() {
				<-start
				fail(b.DisableUser(ctx, "p", u.ID, at))
			})
			close(start)
			wg.Wait()
			require.Empty(t, unexpected)

			conn := rawConn(t, url)
			var live int
			require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM refresh_families
				WHERE project_id = 'p' AND user_id = $1 AND revoked_at IS NULL`, u.ID).Scan(&live))
			assert.Zero(t, live, "live families of the disabled user")
			page, err := a.ListRevocations(ctx, "p", paginate.Request{Limit: 10})
			require.NoError(t, err)
			require.Len(t, page.Items, 1)
			assert.Equal(t, store.RevokedUser, page.Items[0].Kind)
			assert.Equal(t, u.ID, page.Items[0].Subject)
		})
	}
}
