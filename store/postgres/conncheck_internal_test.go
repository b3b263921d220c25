package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// TestIdleConnOK checks the pool's idle check on a live connection, on one
// whose backend was terminated, and on one whose socket another goroutine
// is waiting to read, as pgconn's background reader does after a write that
// took over 15 ms: the check must not wait for that reader, and still see a
// terminated backend.
func TestIdleConnOK(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	killer := rawConn(t, url)
	terminate := func(c *pgx.Conn) {
		t.Helper()
		_, err := killer.Exec(ctx, `SELECT pg_terminate_backend($1, 5000)`, c.PgConn().PID())
		require.NoError(t, err)
	}
	check := func(c *pgx.Conn) bool {
		t.Helper()
		res := make(chan bool, 1)
		go func() { res <- idleConnOK(c) }()
		select {
		case ok := <-res:
			return ok
		case <-time.After(10 * time.Second):
			t.Fatal("idleConnOK still waits after 10s")
			return false
		}
	}

	c := rawConn(t, url)
	assert.True(t, check(c), "a live idle connection")
	terminate(c)
	assert.False(t, check(c), "a terminated backend")

	for _, kill := range []bool{false, true} {
		c := rawConn(t, url)
		// Park a reader on the socket, holding its read lock, as the
		// background reader does. It gets what the server sends.
		got := make(chan []byte, 1)
		go func() {
			buf := make([]byte, 1024)
			n, _ := c.PgConn().Conn().Read(buf)
			got <- buf[:n]
		}()
		time.Sleep(50 * time.Millisecond) // let it park
		if !kill {
			assert.True(t, check(c), "a live connection with a parked reader")
			c.PgConn().Conn().Close()
			<-got
			continue
		}
		terminate(c)
		farewell := <-got
		assert.NotEmpty(t, farewell, "the parked reader got the server's farewell")
		assert.False(t, check(c), "a terminated backend whose farewell a parked reader took: the end of the stream shows")
	}
}
