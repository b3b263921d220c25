package pgtest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
		conn := connect(t, url)
		if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
	})
	if name == "" {
		return // skipped
	}
	conn := connect(t, AdminURL(t))
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Errorf("database %s still exists after the test's cleanup", name)
	}
}

// TestNewSerializableDatabase checks that every connection to the database
// runs SERIALIZABLE, and that a write-write conflict between two
// transactions is a serialization failure there.
func TestNewSerializableDatabase(t *testing.T) {
	ctx := context.Background()
	url := NewSerializableDatabase(t)
	a := connect(t, url)
	b := connect(t, url)
	var level string
	if err := b.QueryRow(ctx, "SHOW transaction_isolation").Scan(&level); err != nil {
		t.Fatal(err)
	}
	if level != "serializable" {
		t.Fatalf("transaction_isolation = %q, want serializable", level)
	}
	if _, err := a.Exec(ctx, "CREATE TABLE t (k int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0)"); err != nil {
		t.Fatal(err)
	}
	txA, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer txA.Rollback(ctx)
	txB, err := b.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer txB.Rollback(ctx)
	// Both take their snapshot; A updates and commits; B's update of the
	// same row then cannot serialize.
	for _, tx := range []pgx.Tx{txA, txB} {
		if _, err := tx.Exec(ctx, "SELECT v FROM t WHERE k = 1"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := txA.Exec(ctx, "UPDATE t SET v = 1 WHERE k = 1"); err != nil {
		t.Fatal(err)
	}
	if err := txA.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = txB.Exec(ctx, "UPDATE t SET v = 2 WHERE k = 1")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "40001" {
		t.Fatalf("conflicting update under SERIALIZABLE = %v, want SQLSTATE 40001", err)
	}
}

// TestDatabases checks that each test gets a database of its own, in the
// prepared state (its tables and rows, no more), reachable and in the
// isolation asked for, whatever the test before it did: a database a test
// wrote to and made read-only is reset and handed out again, one where a
// test left a table behind is dropped; and that the owner's cleanup leaves
// none of the source's databases behind.
func TestDatabases(t *testing.T) {
	ctx := context.Background()
	admin := AdminURL(t)
	conn := connect(t, admin)
	exists := func(name string) (yes bool) {
		t.Helper()
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&yes); err != nil {
			t.Fatal(err)
		}
		return yes
	}
	for _, iso := range []Isolation{{Name: "default"}, {Name: "serializable", alter: serializable}} {
		t.Run(iso.Name, func(t *testing.T) {
			var names []string
			var template string
			t.Run("owner", func(t *testing.T) {
				dbs := iso.Databases(t, func(ctx context.Context, url string) error {
					c, err := pgx.Connect(ctx, url)
					if err != nil {
						return err
					}
					defer c.Close(ctx)
					// Two tables reference the first, named so that neither
					// order by name empties or fills them in an order their
					// foreign keys allow.
					_, err = c.Exec(ctx, `CREATE TABLE prepared (k int PRIMARY KEY); INSERT INTO prepared VALUES (1), (2);
						CREATE TABLE a_child (k int REFERENCES prepared, n int); INSERT INTO a_child VALUES (2, 20);
						CREATE TABLE z_child (k int REFERENCES prepared, n int); INSERT INTO z_child VALUES (1, 10)`)
					return err
				})
				template = dbs.template
				// Each case finds the prepared state, then leaves its own
				// mess: rows changed and the database read-only; in the
				// second, a table too.
				for i := range 4 {
					t.Run("case", func(t *testing.T) {
						url := dbs.New(t)
						c := connect(t, url)
						var name, level, readOnly string
						var tables []string
						var keys, a, z []int32
						if err := c.QueryRow(ctx, `SELECT current_database(), current_setting('transaction_isolation'),
							current_setting('transaction_read_only'),
							(SELECT array_agg(tablename::text ORDER BY tablename) FROM pg_tables WHERE schemaname = 'public'),
							(SELECT array_agg(k ORDER BY k) FROM prepared),
							(SELECT array_agg(n ORDER BY n) FROM a_child),
							(SELECT array_agg(n ORDER BY n) FROM z_child)`).Scan(&name, &level, &readOnly, &tables, &keys, &a, &z); err != nil {
							t.Fatal(err)
						}
						names = append(names, name)
						if !slices.Equal(tables, []string{"a_child", "prepared", "z_child"}) {
							t.Errorf("case %d: %s has tables %v, want only the prepared ones", i, name, tables)
						}
						if !slices.Equal(keys, []int32{1, 2}) || !slices.Equal(a, []int32{20}) || !slices.Equal(z, []int32{10}) {
							t.Errorf("case %d: the tables hold %v, %v and %v, want the prepared rows [1 2], [20] and [10]", i, keys, a, z)
						}
						want := "read committed"
						if iso.alter != nil {
							want = "serializable"
						}
						if level != want || readOnly != "off" {
							t.Errorf("case %d: transaction_isolation = %q, transaction_read_only = %q, want %q, off", i, level, readOnly, want)
						}
						if _, err := c.Exec(ctx, "DELETE FROM z_child; DELETE FROM prepared WHERE k = 1; INSERT INTO prepared VALUES (3); INSERT INTO a_child VALUES (3, 30)"); err != nil {
							t.Fatal(err)
						}
						if i == 1 {
							if _, err := c.Exec(ctx, "CREATE TABLE left_behind (k int)"); err != nil {
								t.Fatal(err)
							}
						}
						SetReadOnly(t, url, true)
					})
				}
			})
			// The first case's database, reset, served a later case; the
			// second's, with a table left behind, was dropped and never
			// handed out again.
			if len(names) != 4 || !slices.Contains(names[2:], names[0]) || slices.Contains(names[2:], names[1]) {
				t.Errorf("databases handed out %v: want the first again later, and never the second again", names)
			}
			for _, name := range append(names, template) {
				if exists(name) {
					t.Errorf("%s still exists after the owner's cleanup", name)
				}
			}
		})
	}
}

// connect opens a connection to url, failing the test if it cannot. The
// connection closes when the test ends, before the cleanups registered
// earlier run (a database's drop needs it closed).
func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}
