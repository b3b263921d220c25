//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package postgres

import "github.com/jackc/pgx/v5"

// idleConnOK reports whether c, an idle connection of the pool, may be
// used. On this platform it cannot peek at the socket without blocking, so
// it only checks that pgx has not closed c; a connection the server dropped
// then costs the call that finds it (reads are retried once, see
// [Store.run]).
func idleConnOK(c *pgx.Conn) bool { return !c.IsClosed() }
