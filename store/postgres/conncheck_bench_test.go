package postgres

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// BenchmarkConnCheck measures what checking a pooled connection before each
// use costs, on a one-row read: no check (pgxpool pings only connections
// idle for over a second), the store's check (idleConnOK: a non-blocking
// peek at the socket), and pgxpool's ping on every acquire (a round trip).
func BenchmarkConnCheck(b *testing.B) {
	ctx := context.Background()
	url := pgtest.NewDatabase(b)
	for _, bc := range []struct {
		name  string
		setup func(*pgxpool.Config)
	}{
		{"none", func(*pgxpool.Config) {}},
		{"peek", func(c *pgxpool.Config) {
			c.PrepareConn = func(_ context.Context, conn *pgx.Conn) (bool, error) { return idleConnOK(conn), nil }
		}},
		{"ping", func(c *pgxpool.Config) {
			c.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return true }
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg, err := pgxpool.ParseConfig(url)
			if err != nil {
				b.Fatal(err)
			}
			bc.setup(cfg)
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer pool.Close()
			var one int
			for b.Loop() {
				if err := pool.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
