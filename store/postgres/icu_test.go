package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// newICUDatabase creates a fresh database whose default collation is ICU's
// root locale, where "a" sorts before "B", so that a test can tell byte
// order from linguistic order. It falls back to pgtest.NewDatabase when the
// server lacks ICU.
func newICUDatabase(t *testing.T) string {
	t.Helper()
	admin := pgtest.AdminURL(t)
	u, err := url.Parse(admin)
	if err != nil || u.Scheme == "" {
		return pgtest.NewDatabase(t)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := pgtest.DatabasePrefix + "icu_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'und' LOCALE 'C.UTF-8'")
	if err != nil {
		t.Logf("no ICU database (%v); using the server's default collation", err)
		return pgtest.NewDatabase(t)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Errorf("drop %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}
