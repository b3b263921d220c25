package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
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

// The four orders in which DisableUser (D) and a family write (CreateRefreshFamily
// C, RotateRefresh R) can meet on the rows they lock, made deterministic by
// running one side's statements in a raw transaction held open until the
// other side waits for its lock. Whatever the order, no family of the
// disabled user is live afterwards.

// lockOrder is the set-up of one order: a store and a user of project "p"
// on a fresh database, and a transaction on a connection of its own, in
// which the first side runs its statements, rolled back at the end of the
// test unless committed.
type lockOrder struct {
	url string
	s   *Store
	u   store.User
	tx  pgx.Tx
}

func newLockOrder(t *testing.T) *lockOrder {
	t.Helper()
	o := &lockOrder{url: pgtest.NewDatabase(t)}
	o.s = openInternal(t, o.url)
	o.u = seedUser(t, o.s, "p")
	tx, err := rawConn(t, o.url).Begin(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	o.tx = tx
	return o
}

// exec runs sql with args in the held transaction.
func (o *lockOrder) exec(t *testing.T, sql string, args ...any) pgconn.CommandTag {
	t.Helper()
	tag, err := o.tx.Exec(context.Background(), sql, args...)
	require.NoError(t, err)
	return tag
}

// then runs second, the other side, until it waits for a lock the held
// transaction holds; runs before (nil for nothing) in the transaction and
// commits it; and returns second's error.
func (o *lockOrder) then(t *testing.T, second func() error, before func()) error {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- second() }()
	waitBlocked(t, rawConn(t, o.url), 1)
	if before != nil {
		before()
	}
	require.NoError(t, o.tx.Commit(context.Background()))
	return <-errc
}

// TestDisableUser_BeforeCreate: D holds the user row; C waits for it and
// then finds the user disabled.
func TestDisableUser_BeforeCreate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := newLockOrder(t)
	at := it0.Add(time.Minute)
	o.exec(t, lockUserSQL, "p", o.u.ID)
	o.exec(t, disableUserSQL, "p", o.u.ID, at)
	err := o.then(t, func() error {
		return o.s.CreateRefreshFamily(ctx, store.RefreshFamily{ID: "rf_c", ProjectID: "p", UserID: o.u.ID,
			IssuedAt: at, ExpiresAt: at.Add(time.Hour), CreatedAt: at}, o.u.PasswordHash)
	}, func() { o.exec(t, revokeUserFamiliesSQL, "p", o.u.ID, at) })
	assert.ErrorIs(t, err, store.ErrDisabled)
	_, err = o.s.GetRefreshFamily(ctx, "p", "rf_c")
	assert.ErrorIs(t, err, store.ErrNotFound, "no family was created")
}

// TestDisableUser_AfterCreate: C holds its lock on the user row; D waits for
// it and then revokes the new family.
func TestDisableUser_AfterCreate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := newLockOrder(t)
	tag := o.exec(t, createFamilySQL, "p", "rf_c", o.u.ID, it0, it0.Add(time.Hour), it0, nil, o.u.PasswordHash)
	require.EqualValues(t, 1, tag.RowsAffected())

	at := it0.Add(time.Minute)
	require.NoError(t, o.then(t, func() error { return o.s.DisableUser(ctx, "p", o.u.ID, at) }, nil))
	f, err := o.s.GetRefreshFamily(ctx, "p", "rf_c")
	require.NoError(t, err)
	assert.True(t, f.RevokedAt.Equal(at), "the family created first is revoked at the disable time, got %v", f.RevokedAt)
}

// TestResetPassword_BeforeCreate: a reset has set the hash and holds the
// user row (as EndUserSessions does) in a transaction still open when C
// takes its snapshot, in which the old hash is the user's; C waits for the
// row, then re-checks its newest version, finds the hash changed, and
// inserts nothing.
func TestResetPassword_BeforeCreate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := newLockOrder(t)
	at := it0.Add(time.Minute)
	o.exec(t, setPasswordSQL, "p", o.u.ID, "the new hash")
	o.exec(t, lockUserSQL, "p", o.u.ID)
	err := o.then(t, func() error {
		return o.s.CreateRefreshFamily(ctx, store.RefreshFamily{ID: "rf_c", ProjectID: "p", UserID: o.u.ID,
			IssuedAt: at, ExpiresAt: at.Add(time.Hour), CreatedAt: at}, o.u.PasswordHash)
	}, func() { o.exec(t, revokeUserFamiliesSQL, "p", o.u.ID, at) })
	assert.ErrorIs(t, err, store.ErrConflict)
	_, err = o.s.GetRefreshFamily(ctx, "p", "rf_c")
	assert.ErrorIs(t, err, store.ErrNotFound, "no family was created")
}

// TestResetPassword_AfterCreate: C holds its lock on the user row with the
// old hash checked; the reset sets the hash (which that lock does not
// block), then EndUserSessions waits for the lock and revokes the new
// family.
func TestResetPassword_AfterCreate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := newLockOrder(t)
	tag := o.exec(t, createFamilySQL, "p", "rf_c", o.u.ID, it0, it0.Add(time.Hour), it0, nil, o.u.PasswordHash)
	require.EqualValues(t, 1, tag.RowsAffected())

	at := it0.Add(time.Minute)
	require.NoError(t, o.then(t, func() error {
		if err := o.s.SetPasswordHash(ctx, "p", o.u.ID, "the new hash"); err != nil {
			return err
		}
		return o.s.EndUserSessions(ctx, "p", o.u.ID, at)
	}, nil))
	f, err := o.s.GetRefreshFamily(ctx, "p", "rf_c")
	require.NoError(t, err)
	assert.True(t, f.RevokedAt.Equal(at), "the family created first is revoked at the reset's time, got %v", f.RevokedAt)
}

// TestDisableUser_BeforeRotate: D has revoked the family row; R waits for
// it and then finds the family revoked and the user disabled.
func TestDisableUser_BeforeRotate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := newLockOrder(t)
	f := seedFamily(t, o.s, o.u)
	at := it0.Add(time.Minute)
	o.exec(t, lockUserSQL, "p", o.u.ID)
	o.exec(t, disableUserSQL, "p", o.u.ID, at)
	o.exec(t, revokeUserFamiliesSQL, "p", o.u.ID, at)

	err := o.then(t, func() error {
		_, err := o.s.RotateRefresh(ctx, "p", f.ID, 0, store.RotateParams{Now: at, TTL: time.Hour})
		return err
	}, nil)
	assert.ErrorIs(t, err, store.ErrDisabled)
	got, err := o.s.GetRefreshFamily(ctx, "p", f.ID)
	require.NoError(t, err)
	assert.Equal(t, int64(0), got.Generation, "not rotated")
}

// TestDisableUser_AfterRotate: R holds the family row it rotated; D's
// revocation waits for it and then revokes the rotated family.
func TestDisableUser_AfterRotate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := newLockOrder(t)
	f := seedFamily(t, o.s, o.u)
	now := it0.Add(time.Second)
	tag := o.exec(t, rotateFamilySQL, "p", f.ID, 0, now, now.Add(time.Hour))
	require.EqualValues(t, 1, tag.RowsAffected())

	at := it0.Add(time.Minute)
	require.NoError(t, o.then(t, func() error { return o.s.DisableUser(ctx, "p", o.u.ID, at) }, nil))
	got, err := o.s.GetRefreshFamily(ctx, "p", f.ID)
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
	t.Parallel()
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
						IssuedAt: at, ExpiresAt: at.Add(time.Hour), CreatedAt: at}, u.PasswordHash)
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
