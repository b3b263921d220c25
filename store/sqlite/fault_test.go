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
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
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

// TestFault_FullDisk runs a store in a process whose files may not grow
// (RLIMIT_FSIZE, as a full file system refuses writes): reads are answered,
// writes are refused with ErrUnavailable and change nothing, writes succeed
// again once the files may grow, and the database passes PRAGMA
// integrity_check.
func TestFault_FullDisk(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "full.db")
	s := open(t, path)
	ctx := t.Context()
	must(t, s.CreateProject(ctx, store.Project{ID: faultProject, CreatedAt: time.Now()}))
	_, err := s.CreateContact(ctx, store.Contact{ID: "ct_first", ProjectID: faultProject, Name: "first", CreatedAt: time.Now()})
	must(t, err)
	must(t, s.Close())

	out, err := childCommand(t, "full:"+path).CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	if !strings.Contains(string(out), "FULL-OK") {
		t.Fatal("the child did not finish")
	}
	wantIntegrity(t, path)
	s = open(t, path)
	n := countContacts(t, s)
	if n != 1+2*fullBatch+1 {
		t.Errorf("contacts after the child = %d, want %d: the first, two batches and one single", n, 1+2*fullBatch+1)
	}
}

// fullBatch is the size of the child's CreateContacts calls.
const fullBatch = 2000

// runFullDisk is the child of TestFault_FullDisk.
func runFullDisk(path string) error {
	// A write past the limit raises SIGXFSZ; ignored, the write fails
	// with EFBIG instead of ending the process.
	signal.Ignore(syscall.SIGXFSZ)
	ctx := context.Background()
	s, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	batch := func(tag string) []store.Contact {
		cs := make([]store.Contact, fullBatch)
		for i := range cs {
			cs[i] = store.Contact{ID: fmt.Sprintf("ct_%s_%05d", tag, i), Name: "a name long enough to need pages", CreatedAt: time.Now()}
		}
		return cs
	}
	if err := s.CreateContacts(ctx, faultProject, batch("before")); err != nil {
		return fmt.Errorf("CreateContacts before the limit: %w", err)
	}
	before, err := listAll(ctx, s)
	if err != nil {
		return err
	}

	// From here on no file of the process may grow.
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		return err
	}
	size := int64(0)
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		if fi, err := os.Stat(f); err == nil {
			size = max(size, fi.Size())
		}
	}
	full := syscall.Rlimit{Cur: uint64(size), Max: lim.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &full); err != nil {
		return err
	}
	fmt.Printf("file size limit %d bytes\n", size)

	// Writes: the bulk path (a transaction of its own) and a small write
	// (group commit) are refused with ErrUnavailable.
	bulk := batch("during")
	err = s.CreateContacts(ctx, faultProject, bulk)
	if !errors.Is(err, store.ErrUnavailable) {
		return fmt.Errorf("CreateContacts on a full disk = %v, want ErrUnavailable", err)
	}
	fmt.Printf("CreateContacts: %v\n", err)
	one := store.Contact{ID: "ct_single", ProjectID: faultProject, Name: "single", CreatedAt: time.Now()}
	for i := range 50 {
		// A small write may fit in the WAL's last page; write until one
		// is refused.
		c := one
		c.ID = fmt.Sprintf("ct_single_%02d", i)
		if _, err = s.CreateContact(ctx, c); err != nil {
			break
		}
		before = append(before, c.ID)
	}
	if !errors.Is(err, store.ErrUnavailable) {
		return fmt.Errorf("CreateContact on a full disk = %v, want ErrUnavailable", err)
	}
	fmt.Printf("CreateContact: %v\n", err)

	// Reads are answered, and show that nothing of the refused writes
	// was kept.
	during, err := listAll(ctx, s)
	if err != nil {
		return fmt.Errorf("ListContacts on a full disk: %w", err)
	}
	if len(during) != len(before) {
		return fmt.Errorf("contacts on a full disk = %d, want %d: a refused write changed something", len(during), len(before))
	}
	if _, err := s.GetProject(ctx, faultProject); err != nil {
		return fmt.Errorf("GetProject on a full disk: %w", err)
	}

	// Space returns: the same store writes again.
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		return err
	}
	if err := s.CreateContacts(ctx, faultProject, bulk); err != nil {
		return fmt.Errorf("CreateContacts after the limit: %w", err)
	}
	if _, err := s.CreateContact(ctx, one); err != nil {
		return fmt.Errorf("CreateContact after the limit: %w", err)
	}
	after, err := listAll(ctx, s)
	if err != nil {
		return err
	}
	if len(after) != len(before)+fullBatch+1 {
		return fmt.Errorf("contacts after the limit = %d, want %d", len(after), len(before)+fullBatch+1)
	}
	// The parent counts the single contacts written before the refusal
	// too: drop them, so that its count is exact.
	for _, id := range before {
		if strings.HasPrefix(id, "ct_single_") {
			if err := s.DeleteContact(ctx, faultProject, id); err != nil {
				return err
			}
		}
	}
	fmt.Println("FULL-OK")
	return nil
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
