package mysql_test

import (
	"log/slog"
	"testing"

	"github.com/latchkey-dev/latchkey/store/mysql"
)

// openStore opens a Store on url whose log goes to the test's output, and
// closes it when the test ends.
func openStore(t testing.TB, url string) *mysql.Store {
	t.Helper()
	st, err := mysql.Open(t.Context(), url, &mysql.Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("mysql.Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// testLogger returns a logger writing to t.Output at Warn and above.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}
