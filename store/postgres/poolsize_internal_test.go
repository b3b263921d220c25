package postgres

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// TestOpen_PoolSize: the pool holds Options.MaxConns connections at most,
// else the URL's pool_max_conns, else DefaultMaxConns.
func TestOpen_PoolSize(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	with := func(param string) string {
		if strings.Contains(url, "?") {
			return url + "&" + param
		}
		return url + "?" + param
	}
	for _, c := range []struct {
		name string
		url  string
		opts *Options
		want int32
	}{
		{"default", url, &Options{}, DefaultMaxConns},
		{"url", with("pool_max_conns=3"), &Options{}, 3},
		{"option over url", with("pool_max_conns=3"), &Options{MaxConns: 5}, 5},
		{"option", url, &Options{MaxConns: 7}, 7},
	} {
		c.opts.Logger = testDiscard
		s, err := Open(t.Context(), c.url, c.opts)
		require.NoError(t, err, c.name)
		require.Equal(t, c.want, s.pool.Config().MaxConns, c.name)
		require.NoError(t, s.Close())
	}
	require.True(t, setsPoolMaxConns("host=localhost pool_max_conns=2 dbname=x"))
	require.False(t, setsPoolMaxConns("host=localhost dbname=x"))
}
