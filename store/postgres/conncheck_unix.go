//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package postgres

import (
	"errors"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5"
)

// idleConnOK reports whether c, an idle connection of the pool, may be
// used: it is open, and its socket has nothing to read. The server sends
// nothing on an idle connection unless it is ending it: when a backend is
// terminated (pg_terminate_backend, a shutdown, a failover) it sends an
// error and closes the socket, and both are waiting there. The check peeks
// at the socket without blocking and without a round trip, so it costs one
// system call, and a connection the server dropped is replaced before a
// statement is sent on it. Whatever it cannot tell (a socket of another
// kind) passes.
//
// The peek runs under RawConn.Control, not RawConn.Read: after a write that
// took over 15 ms pgconn leaves a background reader parked in Read on the
// socket, holding its read lock until the server sends something, and a
// check waiting for that lock would wait for good. If that reader has taken
// the server's farewell, the end of the stream that follows it still shows.
func idleConnOK(c *pgx.Conn) bool {
	if c.IsClosed() {
		return false
	}
	nc := c.PgConn().Conn()
	for {
		u, ok := nc.(interface{ NetConn() net.Conn }) // *tls.Conn
		if !ok {
			break
		}
		nc = u.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	alive := true
	var buf [1]byte
	err = raw.Control(func(fd uintptr) {
		_, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// EAGAIN: nothing to read, the connection is idle as it should
		// be (EINTR: cannot tell, so it passes). Anything else is an
		// error, the end of the stream, or a message the server sent
		// unasked: its farewell.
		alive = errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR)
	})
	return alive && err == nil
}
