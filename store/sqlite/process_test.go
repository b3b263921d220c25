package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
)

// The multi-process test runs this test binary again as child processes
// that write to the parent's database file at the same time as each other,
// as a server and the command line tool do.
const (
	childEnv     = "LATCHKEY_SQLITE_TEST_CHILD"
	procProject  = "proc"
	procFamily   = "rf_shared"
	procKey      = "key_revoked"
	procContacts = 150
	procFailures = 100
)

// TestMultiProcess starts three processes at once on one file: each opens
// it, sees a revocation the parent made, creates contacts, counts throttle
// failures and races the others to rotate one refresh family. No write may fail with SQLITE_BUSY, every
// count must add up, and each generation must be rotated exactly once.
func TestMultiProcess(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	path := filepath.Join(t.TempDir(), "shared.db")
	parent := open(t, path)
	ctx := t.Context()
	now := time.Now()
	must(t, parent.CreateProject(ctx, store.Project{ID: procProject, CreatedAt: now}))
	must(t, parent.CreateUser(ctx, store.User{ID: "usr_1", ProjectID: procProject, Email: "a@example.com", PasswordHash: "h", CreatedAt: now}))
	must(t, parent.CreateRefreshFamily(ctx, store.RefreshFamily{ID: procFamily, ProjectID: procProject, UserID: "usr_1",
		IssuedAt: now, ExpiresAt: now.Add(time.Hour), CreatedAt: now}, "h"))
	must(t, parent.CreateAPIKey(ctx, store.APIKey{ID: procKey, ProjectID: procProject, Name: "k", CreatedAt: now}))
	must(t, parent.RevokeAPIKey(ctx, procProject, procKey, now))

	// The change version must notice the other processes' commits.
	v0, err := parent.ChangeVersion(ctx)
	must(t, err)

	const children = 3
	var wg sync.WaitGroup
	rotated := make([]int, children)
	for i := range children {
		wg.Go(func() {
			// TestMain runs the child side instead of the tests.
			cmd := exec.CommandContext(ctx, os.Args[0])
			cmd.Env = append(os.Environ(), childEnv+"="+path, "LATCHKEY_CHILD_ID="+strconv.Itoa(i))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("child %d: %v\n%s", i, err, out)
				return
			}
			_, after, ok := strings.Cut(string(out), "ROTATED=")
			if !ok {
				t.Errorf("child %d printed no count:\n%s", i, out)
				return
			}
			rotated[i], _ = strconv.Atoi(strings.Fields(after)[0])
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if v1, err := parent.ChangeVersion(ctx); err != nil || v1 == v0 {
		t.Errorf("ChangeVersion = %d, %v after other processes wrote; before %d", v1, err, v0)
	}

	n := 0
	req := paginate.Request{Limit: paginate.MaxLimit}
	for {
		page, err := parent.ListContacts(ctx, procProject, req)
		must(t, err)
		n += len(page.Items)
		if !page.HasMore {
			break
		}
		last := page.Items[len(page.Items)-1]
		req.After = paginate.Cursor{ID: last.ID, CreatedAt: last.CreatedAt}
	}
	if n != children*procContacts {
		t.Errorf("contacts = %d, want %d", n, children*procContacts)
	}
	count, _, err := parent.Failures(ctx, "shared-key", time.Now(), time.Hour)
	must(t, err)
	if count != children*procFailures {
		t.Errorf("failures = %d, want %d", count, children*procFailures)
	}
	f, err := parent.GetRefreshFamily(ctx, procProject, procFamily)
	must(t, err)
	total := rotated[0] + rotated[1] + rotated[2]
	t.Logf("rotations per process: %v; generation %d", rotated, f.Generation)
	if int64(total) != f.Generation {
		t.Errorf("successful rotations = %d, family generation = %d: a generation was rotated twice or lost", total, f.Generation)
	}
	if total == 0 {
		t.Error("no rotation succeeded")
	}
}

// runChild is the child side of TestMultiProcess, run by TestMain in a
// process started with childEnv naming the shared database: it checks the
// parent's revocation, then creates contacts, counts throttle failures and
// races the other children to rotate one refresh family, and prints how
// many rotations it won as ROTATED=n.
func runChild(path, id string) error {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	k, err := s.GetAPIKey(ctx, procProject, procKey)
	if err != nil {
		return err
	}
	if !k.Revoked() {
		return errors.New("the parent's revocation is not visible")
	}
	var (
		mu   sync.Mutex
		errs []error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range procContacts {
			_, err := s.CreateContact(ctx, store.Contact{ID: fmt.Sprintf("ct_%s_%03d", id, i), ProjectID: procProject, Name: "n", CreatedAt: time.Now()})
			if err != nil {
				fail(fmt.Errorf("CreateContact: %w", err))
				return
			}
		}
	})
	wg.Go(func() {
		for range procFailures {
			if _, _, err := s.AddFailure(ctx, "shared-key", time.Now(), time.Hour); err != nil {
				fail(fmt.Errorf("AddFailure: %w", err))
				return
			}
		}
	})
	rotated := 0
	wg.Go(func() {
		for range 100 {
			f, err := s.GetRefreshFamily(ctx, procProject, procFamily)
			if err != nil {
				fail(fmt.Errorf("GetRefreshFamily: %w", err))
				return
			}
			p := store.RotateParams{Now: time.Now(), TTL: time.Hour, ReuseWindow: time.Hour}
			rot, err := s.RotateRefresh(ctx, procProject, procFamily, f.Generation, p)
			switch {
			case err == nil && !rot.Reused:
				rotated++
			case err == nil && rot.Reused:
				// Another process rotated this generation first.
			case errors.Is(err, store.ErrReplayed), errors.Is(err, store.ErrRevoked):
				// Two others rotated between our read and our rotation
				// (a replay, which revokes the family): rare, and
				// correct. The generation count still has to add up.
				return
			default:
				fail(fmt.Errorf("RotateRefresh(gen %d): %w", f.Generation, err))
				return
			}
		}
	})
	wg.Wait()
	fmt.Printf("ROTATED=%d\n", rotated)
	return errors.Join(errs...)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
