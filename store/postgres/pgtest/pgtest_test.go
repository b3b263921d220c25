package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestWithDatabase(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "postgres://postgres@127.0.0.1:5432/db1?sslmode=disable"},
		{"postgresql://u:p%40ss@h/", "postgresql://u:p%40ss@h/db1"},
		{"postgres://h", "postgres://h/db1"},
		{"host=h user=u dbname=postgres", "host=h user=u dbname=postgres dbname=db1"},
	} {
		got, err := withDatabase(tc.in, "db1")
		if err != nil || got != tc.want {
			t.Errorf("withDatabase(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := withDatabase("postgres://u:secret@[::1/x", "db1"); err == nil {
		t.Error("withDatabase of a bad URL: no error")
	}
}

// TestNewDatabase checks that the database exists, is empty and reachable
// through the returned URL, and is dropped by the cleanup.
func TestNewDatabase(t *testing.T) {
	ctx := context.Background()
	var name string
	t.Run("use", func(t *testing.T) {
		url := NewDatabase(t)
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
	})
	if name == "" {
		return // skipped
	}
	conn, err := pgx.Connect(ctx, AdminURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Errorf("database %s still exists after the test's cleanup", name)
	}
}
