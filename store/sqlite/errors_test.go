package sqlite

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"

	"github.com/latchkey-dev/latchkey/store"
)

// TestWrap_ResultCodes checks which SQLite results become which store
// sentinel, extended codes included.
func TestWrap_ResultCodes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		code sqlite.ResultCode
		want error // nil: no sentinel
	}{
		{sqlite.ResultBusy, store.ErrUnavailable},
		{sqlite.ResultBusySnapshot, store.ErrUnavailable},
		{sqlite.ResultLocked, store.ErrUnavailable},
		{sqlite.ResultLockedSharedCache, store.ErrUnavailable},
		{sqlite.ResultFull, store.ErrUnavailable},
		{sqlite.ResultIOErr, store.ErrUnavailable},
		{sqlite.ResultIOErrWrite, store.ErrUnavailable},
		{sqlite.ResultIOErrFsync, store.ErrUnavailable},
		{sqlite.ResultIOErrShortRead, store.ErrUnavailable},
		{sqlite.ResultCantOpen, store.ErrUnavailable},
		{sqlite.ResultNoMem, store.ErrUnavailable},
		{sqlite.ResultConstraintUnique, store.ErrConflict},
		{sqlite.ResultConstraintPrimaryKey, store.ErrConflict},
		{sqlite.ResultConstraintForeignKey, store.ErrNotFound},
		{sqlite.ResultConstraintNotNull, nil},
		{sqlite.ResultError, nil},
		{sqlite.ResultCorrupt, nil},
		{sqlite.ResultReadOnly, nil},
	} {
		err := wrap("op", c.code.ToError())
		require.Error(t, err)
		for _, s := range []error{store.ErrUnavailable, store.ErrConflict, store.ErrNotFound} {
			require.Equal(t, s == c.want, errors.Is(err, s), "%v: errors.Is(%v, %v)", c.code, err, s)
		}
		if c.want == store.ErrUnavailable || c.want == nil {
			require.Equal(t, c.code, sqlite.ErrCode(err), "%v: the SQLite error stays in the chain, for logs", c.code)
		}
	}
	require.ErrorIs(t, wrap("op", errNoRows), store.ErrNotFound)
	require.NoError(t, wrap("op", nil))
}
