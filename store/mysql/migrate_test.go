package mysql_test

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"sync"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/mysql"
	"github.com/latchkey-dev/latchkey/store/mysql/mytest"
)

// TestOpen_ConcurrentMigrate opens several stores on one empty database at
// once: the named lock makes one migrate and the others find it done.
func TestOpen_ConcurrentMigrate(t *testing.T) {
	url := mytest.NewDatabase(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			st, err := mysql.Open(context.Background(), url, &mysql.Options{Logger: testLogger(t)})
			if err == nil {
				st.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		require.NoErrorf(t, err, "Open %d", i)
	}
	db := rawDB(t, url)
	var n, complete int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*), SUM(complete) FROM schema_migrations`).Scan(&n, &complete))
	files, err := os.ReadDir("migrations")
	require.NoError(t, err)
	require.Equal(t, len(files), n, "migrations recorded")
	require.Equal(t, len(files), complete, "migrations recorded complete")
}

// TestOpen_NoMigrate leaves the database empty until Migrate.
func TestOpen_NoMigrate(t *testing.T) {
	url := mytest.NewDatabase(t)
	st, err := mysql.Open(t.Context(), url, &mysql.Options{NoMigrate: true, Logger: testLogger(t)})
	require.NoError(t, err)
	defer st.Close()
	require.Error(t, st.CreateProject(t.Context(), store.Project{ID: "p", CreatedAt: t0}))
	require.NoError(t, st.Migrate(t.Context()))
	require.NoError(t, st.Migrate(t.Context()), "a second Migrate")
	require.NoError(t, st.CreateProject(t.Context(), store.Project{ID: "p", CreatedAt: t0}))
}

// TestOpen_ServerSettings checks the session settings every connection of
// the store gets, whatever the URL says.
func TestOpen_ServerSettings(t *testing.T) {
	url := mytest.NewDatabase(t) + "&parseTime=false&loc=Local"
	if !strings.Contains(url, "?") {
		url = strings.Replace(url, "&", "?", 1)
	}
	cfg, err := mysql.ParseURL(url)
	require.NoError(t, err)
	require.True(t, cfg.ParseTime)
	require.Equal(t, "UTC", cfg.Loc.String())
	require.True(t, cfg.InterpolateParams)
	require.False(t, cfg.MultiStatements)
	st := openStore(t, url)
	require.NoError(t, st.CreateProject(t.Context(), store.Project{ID: "p", CreatedAt: t0}))
	p, err := st.GetProject(t.Context(), "p")
	require.NoError(t, err)
	require.True(t, p.CreatedAt.Equal(t0))
}

// TestParseURL checks the URL forms and that errors do not quote a
// password.
func TestParseURL(t *testing.T) {
	cfg, err := mysql.ParseURL("mysql://u%40x:p%3Ass@db.example:3307/latchkey?tls=false&timeout=3s")
	require.NoError(t, err)
	require.Equal(t, "u@x", cfg.User)
	require.Equal(t, "p:ss", cfg.Passwd)
	require.Equal(t, "db.example:3307", cfg.Addr)
	require.Equal(t, "latchkey", cfg.DBName)
	require.Equal(t, "3s", cfg.Timeout.String())
	cfg, err = mysql.ParseURL("mysql://root@localhost/lk")
	require.NoError(t, err)
	require.Equal(t, "localhost:3306", cfg.Addr)
	cfg, err = mysql.ParseURL("root:pw@tcp(127.0.0.1:3306)/lk")
	require.NoError(t, err)
	require.Equal(t, "lk", cfg.DBName)
	for _, bad := range []string{"mysql://u:secret@h:3306/", "mysql://u:secret@[::1/x", "mysql://u:secret@h/a/b", "u:secret@nonsense"} {
		_, err := mysql.ParseURL(bad)
		require.Errorf(t, err, "ParseURL(%q)", bad)
		require.NotContains(t, err.Error(), "secret")
	}
}

func rawDB(t testing.TB, url string) *sql.DB {
	t.Helper()
	cfg, err := mysql.ParseURL(url)
	require.NoError(t, err)
	conn, err := gomysql.NewConnector(cfg)
	require.NoError(t, err)
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}
