package keys_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

func TestAPIKeys_CreateListRevoke(t *testing.T) {
	e := newEnv(t, nil, "alpha", "beta")
	ctx := context.Background()
	e.clock.Advance(1234567 * time.Nanosecond) // sub-microsecond part is dropped

	k, tok, err := e.ak.Create(ctx, "alpha", "  CI deploys \n")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(k.ID, "key_"), k.ID)
	require.Equal(t, "alpha", k.ProjectID)
	require.Equal(t, "CI deploys", k.Name)
	require.True(t, k.CreatedAt.Equal(store.Truncate(e.clock.Now())))
	require.True(t, k.LastUsedAt.IsZero())
	require.False(t, k.Revoked())
	require.Equal(t, k.ID, decodeClaims(t, tok)["sub"])

	// The token is not kept: not in the record, not in the database files.
	disk := e.dbBytes()
	require.False(t, bytes.Contains(disk, []byte(tok)), "token stored")
	require.False(t, bytes.Contains(disk, []byte(strings.Split(tok, ".")[2])), "token signature stored")

	e.clock.Advance(time.Second) // keys list by (created_at, id)
	k2, _, err := e.ak.Create(ctx, "alpha", "second")
	require.NoError(t, err)
	_, _, err = e.ak.Create(ctx, "beta", "other project")
	require.NoError(t, err)

	list, err := e.ak.List(ctx, "alpha")
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, k.ID, list[0].ID)
	require.Equal(t, k2.ID, list[1].ID)

	requireOK(t, e.whoami("alpha", tok), "alpha", "api_key")
	list, err = e.ak.List(ctx, "alpha")
	require.NoError(t, err)
	require.True(t, list[0].LastUsedAt.Equal(store.Truncate(e.clock.Now())), "last use recorded: %v", list[0].LastUsedAt)

	e.clock.Advance(time.Hour)
	require.NoError(t, e.ak.Revoke(ctx, "alpha", k.ID))
	revokedAt := store.Truncate(e.clock.Now())
	e.clock.Advance(time.Hour)
	require.NoError(t, e.ak.Revoke(ctx, "alpha", k.ID), "revoking twice succeeds")
	list, err = e.ak.List(ctx, "alpha")
	require.NoError(t, err)
	require.Len(t, list, 2, "revoked keys stay listed")
	require.True(t, list[0].RevokedAt.Equal(revokedAt), "first revocation time kept: %v", list[0].RevokedAt)
	require.False(t, list[1].Revoked())
	e.requireRejected("alpha", tok, "revoked API key")

	require.ErrorIs(t, e.ak.Revoke(ctx, "alpha", store.NewID(store.PrefixAPIKey)), store.ErrNotFound)
	require.ErrorIs(t, e.ak.Revoke(ctx, "beta", k2.ID), store.ErrNotFound, "a key of another project")
}

func TestAPIKeys_CreateErrors(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	for _, name := range []string{"", "   ", strings.Repeat("x", store.MaxNameLen+1), "tab\tinside", "bad\xffutf8",
		"invoice\u202egnp.exe", "a\u2066b", "nul\x00"} {
		_, _, err := e.ak.Create(ctx, "alpha", name)
		require.ErrorIs(t, err, keys.ErrInvalidName, "%q", name)
	}
	k, _, err := e.ak.Create(ctx, "alpha", "  "+strings.Repeat("é", store.MaxNameLen)+"\n")
	require.NoError(t, err, "100 characters are fine, whatever their bytes; white space around is trimmed")
	require.Equal(t, strings.Repeat("é", store.MaxNameLen), k.Name)

	_, _, err = e.ak.Create(ctx, "nosuchproject", "x")
	require.ErrorIs(t, err, store.ErrNotFound)
	list, err := e.ak.List(ctx, "alpha")
	require.NoError(t, err)
	require.Len(t, list, 1, "failed creates leave no record")
}
