package mytest

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestWithDatabase(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"mysql://root@127.0.0.1:3306/", "mysql://root@127.0.0.1:3306/db1"},
		{"mysql://u:p%40ss@h/other?timeout=2s", "mysql://u:p%40ss@h/db1?timeout=2s"},
		{"mysql://h", "mysql://h/db1"},
	} {
		got, err := WithDatabase(tc.in, "db1")
		if err != nil || got != tc.want {
			t.Errorf("WithDatabase(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"postgres://h/x", "mysql://u:secret@[::1/x"} {
		if _, err := WithDatabase(bad, "db1"); err == nil {
			t.Errorf("WithDatabase(%q): no error", bad)
		}
	}
}

// TestNewDatabase checks that the database exists and is reachable through
// the returned URL, and is dropped by the cleanup.
func TestNewDatabase(t *testing.T) {
	var name string
	t.Run("use", func(t *testing.T) {
		url := NewDatabase(t)
		cfg, err := adminConfig(url)
		if err != nil {
			t.Fatal(err)
		}
		cfg.DBName = strings.TrimPrefix(strings.SplitN(url[len("mysql://"):], "/", 2)[1], "")
		cfg.DBName, _, _ = strings.Cut(cfg.DBName, "?")
		db := open(t, cfg)
		if err := db.QueryRow("SELECT DATABASE()").Scan(&name); err != nil {
			t.Fatal(err)
		}
	})
	if name == "" {
		return
	}
	cfg, err := adminConfig(AdminURL(t))
	if err != nil {
		t.Fatal(err)
	}
	db := open(t, cfg)
	var n int
	if err := db.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("database %s still exists after the test's cleanup", name)
	}
}

func open(t *testing.T, cfg *mysql.Config) *sql.DB {
	t.Helper()
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}
