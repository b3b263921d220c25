//go:build linux || darwin

package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/latchkey-dev/latchkey/store"
	sqlitestore "github.com/latchkey-dev/latchkey/store/sqlite"
)

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
