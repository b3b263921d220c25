package mysql

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store/mysql/mytest"
)

// TestIdleTransactionTimeout_Setting checks the sessions'
// idle_transaction_timeout on MariaDB: the default,
// Options.IdleTransactionTimeout rounded up to seconds, and the server's
// when the option is negative.
func TestIdleTransactionTimeout_Setting(t *testing.T) {
	url := mytest.NewDatabase(t)
	for _, c := range []struct {
		name    string
		timeout time.Duration
		want    int
	}{
		{"default", 0, 5},
		{"option", 1500 * time.Millisecond, 2},
		{"the server's", -1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Open(t.Context(), url, &Options{Logger: slog.New(slog.DiscardHandler), IdleTransactionTimeout: c.timeout})
			require.NoError(t, err)
			defer s.Close()
			if !s.MariaDB() {
				t.Skip("MySQL has no idle_transaction_timeout")
			}
			var got int
			require.NoError(t, s.db.QueryRowContext(t.Context(), "SELECT @@SESSION.idle_transaction_timeout").Scan(&got))
			assert.Equal(t, c.want, got)
		})
	}
}
