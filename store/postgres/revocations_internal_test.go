package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// TestRevocations_PlacedUnderLock holds a revoking transaction open after it
// placed its item, and starts another revocation with an earlier time: the
// second waits for the first to commit and is placed after its item, so a
// reader that saw the first item can never later see one before it.
func TestRevocations_PlacedUnderLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	s := openInternal(t, url)
	u := seedUser(t, s, "p")
	f := seedFamily(t, s, u)
	first := rawConn(t, url)
	tx, err := first.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	late := it0.Add(time.Hour)
	require.NoError(t, addRevocation(ctx, tx, "p", store.RevokedAPIKey, "key_x", late))

	errc := make(chan error, 1)
	go func() { errc <- s.RevokeRefreshFamily(ctx, "p", f.ID, it0) }()
	waitBlocked(t, rawConn(t, url), 1)
	require.NoError(t, tx.Commit(ctx))
	require.NoError(t, <-errc)

	page, err := s.ListRevocations(ctx, "p", paginate.Request{Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Items, 2)
	assert.Equal(t, "key_x", page.Items[0].Subject)
	assert.Equal(t, f.ID, page.Items[1].Subject, "the second revocation sorts after the first")
	assert.False(t, page.Items[1].RevokedAt.Before(late), "placed at %s, after %s", page.Items[1].RevokedAt, late)
}
