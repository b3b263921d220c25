package sqlite_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	sqlitestore "github.com/latchkey-dev/latchkey/store/sqlite"
)

// The fault tests run the failing side in a child process of this test
// binary (TestMain dispatches on faultEnv): a file-size limit applies to
// the whole process, and a lock held by another process is the case to
// test.
const (
	// faultEnv names the child's role and database: "full:PATH" or
	// "lock:PATH".
	faultEnv     = "LATCHKEY_SQLITE_TEST_FAULT"
	faultProject = "fault"
)

// runFaultChild is the child side of the fault tests, run by TestMain.
func runFaultChild(role string) error {
	kind, path, ok := strings.Cut(role, ":")
	if !ok {
		return fmt.Errorf("bad %s %q", faultEnv, role)
	}
	switch kind {
	case "full":
		return runFullDisk(path)
	case "lock":
		return holdLock(path)
	}
	return fmt.Errorf("unknown fault %q", kind)
}

// TestFault_LockHeld: while another process holds the write lock past the
// busy timeout, writes fail with ErrUnavailable and change nothing, reads
// are answered, and writes succeed once the lock is released.
func TestFault_LockHeld(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lock.db")
	s, err := sqlitestore.Open(t.Context(), path, &sqlitestore.Options{
		BusyTimeout: 100 * time.Millisecond,
		Logger:      slog.New(slog.NewTextHandler(t.Output(), nil)),
	})
	must(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()
	must(t, s.CreateProject(ctx, store.Project{ID: faultProject, CreatedAt: time.Now()}))

	cmd := childCommand(t, "lock:"+path)
	release, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { _ = release.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "LOCKED\n" {
		t.Fatalf("child: %q, %v", line, err)
	}

	start := time.Now()
	_, err = s.CreateContact(ctx, store.Contact{ID: "ct_1", ProjectID: faultProject, Name: "n", CreatedAt: time.Now()})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("CreateContact while another process holds the lock = %v, want ErrUnavailable", err)
	}
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Errorf("refused after %v, before the busy timeout", waited)
	}
	if _, _, err := s.AddFailure(ctx, "k", time.Now(), time.Minute); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("AddFailure while another process holds the lock = %v, want ErrUnavailable", err)
	}
	if n := countContacts(t, s); n != 0 {
		t.Errorf("contacts = %d after a refused write, want 0", n)
	}
	if _, err := s.GetProject(ctx, faultProject); err != nil {
		t.Errorf("GetProject while another process holds the lock: %v", err)
	}

	must(t, release.Close())
	must(t, cmd.Wait())
	_, err = s.CreateContact(ctx, store.Contact{ID: "ct_1", ProjectID: faultProject, Name: "n", CreatedAt: time.Now()})
	must(t, err)
	if n := countContacts(t, s); n != 1 {
		t.Errorf("contacts = %d after the lock was released, want 1", n)
	}
	wantIntegrity(t, path)
}

// holdLock is the child of TestFault_LockHeld: it takes the database's
// write lock, says LOCKED, and releases it when its standard input closes.
func holdLock(path string) error {
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := sqlitex.ExecuteTransient(conn, "BEGIN IMMEDIATE", nil); err != nil {
		return err
	}
	fmt.Println("LOCKED")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return sqlitex.ExecuteTransient(conn, "ROLLBACK", nil)
}

// childCommand returns a command that runs this test binary as a fault
// child with the given role.
func childCommand(t *testing.T, role string) *exec.Cmd {
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), faultEnv+"="+role)
	return cmd
}

// wantIntegrity fails the test unless PRAGMA integrity_check finds the
// database at path sound.
func wantIntegrity(t *testing.T, path string) {
	t.Helper()
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	must(t, err)
	defer conn.Close()
	var got []string
	must(t, sqlitex.ExecuteTransient(conn, "PRAGMA integrity_check", &sqlitex.ExecOptions{
		ResultFunc: func(st *sqlite.Stmt) error { got = append(got, st.ColumnText(0)); return nil },
	}))
	if len(got) != 1 || got[0] != "ok" {
		t.Errorf("PRAGMA integrity_check = %q, want ok", got)
	}
}

// listAll returns the ids of every contact of faultProject.
func listAll(ctx context.Context, s *sqlitestore.Store) ([]string, error) {
	var ids []string
	req := paginate.Request{Limit: paginate.MaxLimit}
	for {
		page, err := s.ListContacts(ctx, faultProject, req)
		if err != nil {
			return nil, err
		}
		for _, c := range page.Items {
			ids = append(ids, c.ID)
		}
		if !page.HasMore {
			return ids, nil
		}
		last := page.Items[len(page.Items)-1]
		req.After = paginate.Cursor{ID: last.ID, CreatedAt: last.CreatedAt}
	}
}

func countContacts(t *testing.T, s *sqlitestore.Store) int {
	t.Helper()
	ids, err := listAll(t.Context(), s)
	must(t, err)
	return len(ids)
}
