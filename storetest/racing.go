package storetest

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// The races of the second stage, written once over a list of handles on
// one database: RunConcurrency runs them on one handle, RunShared on two,
// the goroutine of task i using handle i mod len(hs).

// raceTasks runs the tasks at once, each in its own goroutine, in a
// shuffled order of release, and waits for all of them. Task i is given
// the handle it uses.
func raceTasks(hs []store.Store, seed uint64, tasks []func(h store.Store)) {
	rng := rand.New(rand.NewPCG(seed, 1))
	order := rng.Perm(len(tasks))
	race(len(tasks), func(i int) { tasks[order[i]](hs[i%len(hs)]) })
}

// wantSessionEnded fails unless the family is revoked and neither its
// current generation nor its predecessor rotates any more, and returns it.
func wantSessionEnded(t *testing.T, s store.RefreshStore, f store.RefreshFamily, now time.Time, what string) store.RefreshFamily {
	t.Helper()
	got := mustGetFamily(t, s, f.ProjectID, f.ID)
	require.Falsef(t, got.RevokedAt.IsZero(), "%s: family %q is not revoked", what, f.ID)
	for _, gen := range []int64{got.Generation, got.Generation - 1} {
		if gen < 0 {
			continue
		}
		r, err := s.RotateRefresh(t.Context(), f.ProjectID, f.ID, gen, rotateParams(now))
		require.Errorf(t, err, "%s: RotateRefresh(%q, gen %d) of an ended session succeeded (Reused %v, generation %d)",
			what, f.ID, gen, r.Reused, r.Family.Generation)
	}
	return got
}

// DisableUser racing CreateRefreshFamily and RotateRefresh of the user's
// sessions never leaves a live session (see raceEndingSessions): a create
// that fails says ErrDisabled, a rotation ErrDisabled or ErrRevoked; the
// user ends up disabled, and the feed gains exactly one item, for the user.
func raceDisableSessions(t *testing.T, hs []store.Store) {
	s := hs[0]
	mustProject(t, s, projA)
	for round := range 6 {
		u := mustUser(t, s, projA, fmt.Sprintf("race%d@example.com", round))
		at := base.Add(time.Duration(round+1) * time.Hour)
		feed := newFeedTracker(t, s, projA)
		what := fmt.Sprintf("round %d", round)
		raceEndingSessions(t, hs, round, u, at, "DisableUser", func(h store.Store) error {
			return h.DisableUser(t.Context(), projA, u.ID, at)
		}, store.ErrDisabled, []error{store.ErrDisabled, store.ErrRevoked})
		require.True(t, mustGetUser(t, s, projA, u.ID).Disabled(), "%s: the user is disabled", what)
		feed.added(t, store.RevokedUser, u.ID, at, what+": DisableUser racing sessions")
	}
}

// A password reset (SetPasswordHash, then EndUserSessions) racing
// CreateRefreshFamily given the old hash, as a sign-in that checked the
// old password makes it, and RotateRefresh of the user's sessions, never
// leaves a live session (see raceEndingSessions): a create that fails says
// ErrConflict, a rotation ErrRevoked; the feed gains exactly one session
// item for each family the reset ended; and a session started with the new
// hash afterwards is live, one with the old hash refused.
func raceResetSessions(t *testing.T, hs []store.Store) {
	s := hs[0]
	mustProject(t, s, projA)
	for round := range 6 {
		u := mustUser(t, s, projA, fmt.Sprintf("reset%d@example.com", round))
		newHash := fmt.Sprintf("$argon2id$v=19$m=19456,t=2,p=1$cmVzZXRzYWx0cmVzZXQ$%044d", round)
		at := base.Add(time.Duration(round+1) * time.Hour)
		feed := newFeedTracker(t, s, projA)
		what := fmt.Sprintf("round %d", round)
		ended := raceEndingSessions(t, hs, round, u, at, "a reset", func(h store.Store) error {
			if err := h.SetPasswordHash(t.Context(), projA, u.ID, newHash); err != nil {
				return err
			}
			return h.EndUserSessions(t.Context(), projA, u.ID, at)
		}, store.ErrConflict, []error{store.ErrRevoked})
		items := make([]wantItem, len(ended))
		for i, f := range ended {
			items[i] = wantItem{store.RevokedSession, f.ID}
		}
		feed.addedAll(t, items, at, what+": a reset racing sessions")

		after := at.Add(time.Second)
		stale := newFamily(projA, u.ID, after, time.Hour)
		require.ErrorIsf(t, s.CreateRefreshFamily(t.Context(), stale, userHash), store.ErrConflict, "%s: CreateRefreshFamily with the old hash after the reset", what)
		live := newFamily(projA, u.ID, after, time.Hour)
		require.NoErrorf(t, s.CreateRefreshFamily(t.Context(), live, newHash), "%s: CreateRefreshFamily with the new hash after the reset", what)
		require.Truef(t, mustGetFamily(t, s, projA, live.ID).Live(after), "%s: a session started with the new hash after the reset is live", what)
	}
}

// raceEndingSessions runs, at once, end (a write that ends every session
// of u at at, named endName), 8 CreateRefreshFamily of u given u's hash as
// it is before end, and a rotation of each of 6 live sessions of u, and
// checks that none leaves a live session: end succeeds; every create
// either fails with createErr (storing nothing) or makes a family that
// ends up revoked at at; every rotation either fails with one of rotErrs
// or rotates a family that ends up revoked at at. It returns the families
// end revoked, the created ones among them. round seeds the order.
func raceEndingSessions(t *testing.T, hs []store.Store, round int, u store.User, at time.Time, endName string,
	end func(h store.Store) error, createErr error, rotErrs []error) []store.RefreshFamily {
	t.Helper()
	s := hs[0]
	existing := make([]store.RefreshFamily, 6)
	for i := range existing {
		existing[i] = mustFamilyOf(t, s, u, at.Add(-time.Minute), 24*time.Hour)
	}
	creates := make([]store.RefreshFamily, 8)
	for i := range creates {
		creates[i] = newFamily(u.ProjectID, u.ID, at, 24*time.Hour)
	}

	var endErr error
	createErrs := make([]error, len(creates))
	rots := make([]rotation, len(existing))
	tasks := []func(h store.Store){func(h store.Store) { endErr = end(h) }}
	for i := range creates {
		tasks = append(tasks, func(h store.Store) { createErrs[i] = h.CreateRefreshFamily(t.Context(), creates[i], u.PasswordHash) })
	}
	for i := range existing {
		tasks = append(tasks, func(h store.Store) {
			r, err := h.RotateRefresh(t.Context(), u.ProjectID, existing[i].ID, 0, rotateParams(at))
			rots[i] = rotation{r, err}
		})
	}
	raceTasks(hs, uint64(round), tasks)

	what := fmt.Sprintf("round %d", round)
	require.NoErrorf(t, endErr, "%s: %s", what, endName)
	after := at.Add(time.Second)
	var ended []store.RefreshFamily
	for i, f := range creates {
		if err := createErrs[i]; err != nil {
			require.ErrorIsf(t, err, createErr, "%s: CreateRefreshFamily racing %s", what, endName)
			_, err = s.GetRefreshFamily(t.Context(), u.ProjectID, f.ID)
			require.ErrorIsf(t, err, store.ErrNotFound, "%s: GetRefreshFamily of a family whose create failed", what)
			continue
		}
		got := wantSessionEnded(t, s, f, after, what+": a family created racing "+endName)
		wantTime(t, at, got.RevokedAt, "%s: RevokedAt of a family created before %s ended the sessions", what, endName)
		ended = append(ended, f)
	}
	for i, f := range existing {
		if err := rots[i].err; err != nil {
			wantErrAny(t, err, rotErrs, "%s: RotateRefresh racing %s", what, endName)
		}
		got := wantSessionEnded(t, s, f, after, what+": a family rotated racing "+endName)
		wantTime(t, at, got.RevokedAt, "%s: RevokedAt of a session %s ended", what, endName)
		ended = append(ended, f)
	}
	return ended
}

// A logout (RevokeRefreshFamily) racing rotations of the current
// generation never leaves a usable successor: after all return, the family
// is revoked at the logout's time, no generation rotates, every rotation
// that failed says ErrRevoked, and the feed gains exactly one item.
func raceRevokeRotate(t *testing.T, hs []store.Store) {
	s := hs[0]
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "logout@example.com")
	for round := range 8 {
		f := mustFamilyOf(t, s, u, base, 24*time.Hour)
		gen := int64(round % 3)
		for g := range gen {
			rotate(t, s, f, g, rotateParams(base.Add(time.Duration(g+1)*time.Minute)))
		}
		now := base.Add(time.Hour)
		at := now.Add(time.Duration(round) * time.Millisecond)
		feed := newFeedTracker(t, s, projA)

		var revokeErr error
		rots := make([]rotation, 10)
		tasks := []func(h store.Store){func(h store.Store) { revokeErr = h.RevokeRefreshFamily(t.Context(), projA, f.ID, at) }}
		for i := range rots {
			tasks = append(tasks, func(h store.Store) {
				r, err := h.RotateRefresh(t.Context(), projA, f.ID, gen, rotateParams(now.Add(time.Duration(i)*time.Millisecond)))
				rots[i] = rotation{r, err}
			})
		}
		raceTasks(hs, uint64(round), tasks)

		what := fmt.Sprintf("round %d", round)
		require.NoErrorf(t, revokeErr, "%s: RevokeRefreshFamily", what)
		for _, r := range rots {
			if r.err != nil {
				require.ErrorIsf(t, r.err, store.ErrRevoked, "%s: RotateRefresh(gen %d) racing a logout", what, gen)
			}
		}
		got := wantSessionEnded(t, s, f, now.Add(time.Second), what+": a family revoked racing rotations")
		wantTime(t, at, got.RevokedAt, "%s: RevokedAt after a logout racing rotations", what)
		for _, r := range rots {
			if r.err == nil {
				_, err := s.RotateRefresh(t.Context(), projA, f.ID, r.r.Family.Generation, rotateParams(now.Add(2*time.Second)))
				require.ErrorIsf(t, err, store.ErrRevoked, "%s: RotateRefresh of the successor a racing rotation returned", what)
			}
		}
		feed.added(t, store.RevokedSession, f.ID, at, what+": a logout racing rotations")
	}
}

// feedSubject is one thing to revoke in raceFeed.
type feedSubject struct {
	kind    store.RevocationKind
	subject string
	revoke  func(h store.Store, at time.Time) error
}

// Concurrent revocations of every kind in one project, with times out of
// order, each made twice: every revocation is in the feed exactly once,
// and a reader paging the feed from its cursor all along, as a verifier
// following it does, sees exactly the final feed, in order: it misses no
// item, since every item is added after every item already there.
func raceFeed(t *testing.T, hs []store.Store) {
	s := hs[0]
	ctx := t.Context()
	mustProject(t, s, projA)
	var subjects []feedSubject
	for i := range 12 {
		k := mustAPIKey(t, s, projA, fmt.Sprintf("key_%02d", i), base)
		subjects = append(subjects, feedSubject{store.RevokedAPIKey, k.ID, func(h store.Store, at time.Time) error {
			return h.RevokeAPIKey(ctx, projA, k.ID, at)
		}})
	}
	for i := range 6 {
		k := mustSigningKey(t, s, projA, fmt.Sprintf("sk_%02d", i), base.Add(time.Duration(i)*time.Second))
		subjects = append(subjects, feedSubject{store.RevokedSigningKey, k.ID, func(h store.Store, at time.Time) error {
			return h.RetireSigningKey(ctx, projA, k.ID, at)
		}})
	}
	mustSigningKey(t, s, projA, "sk_active", base.Add(time.Hour)) // the active key, never retired
	owner := mustUser(t, s, projA, "owner@example.com")
	for range 8 {
		f := mustFamilyOf(t, s, owner, base, 30*24*time.Hour)
		subjects = append(subjects, feedSubject{store.RevokedSession, f.ID, func(h store.Store, at time.Time) error {
			return h.RevokeRefreshFamily(ctx, projA, f.ID, at)
		}})
	}
	for range 6 {
		f := mustFamilyOf(t, s, owner, base, 30*24*time.Hour)
		rotate(t, s, f, 0, rotateParams(base.Add(time.Minute)))
		subjects = append(subjects, feedSubject{store.RevokedSession, f.ID, func(h store.Store, at time.Time) error {
			_, err := h.RotateRefresh(ctx, projA, f.ID, 0, rotateParams(at))
			if isOneOf(err, store.ErrReplayed, store.ErrRevoked) {
				return nil // the replay, or the replay of a family a replay revoked
			}
			return fmt.Errorf("replay: %w", err)
		}})
	}
	for i := range 6 {
		u := mustUser(t, s, projA, fmt.Sprintf("user%02d@example.com", i))
		mustFamilyOf(t, s, u, base, 30*24*time.Hour) // its session needs no item of its own
		subjects = append(subjects, feedSubject{store.RevokedUser, u.ID, func(h store.Store, at time.Time) error {
			return h.DisableUser(ctx, projA, u.ID, at)
		}})
	}

	// The reader pages with a small limit until the writers are done and
	// a page read after that has no more.
	var (
		writersDone atomic.Bool
		seen        []store.Revocation
		readErr     error
		reader      sync.WaitGroup
	)
	reader.Go(func() {
		var cur paginate.Cursor
		for {
			last := writersDone.Load()
			page, err := hs[len(hs)-1].ListRevocations(ctx, projA, paginate.Request{Limit: 3, After: cur})
			if err != nil {
				readErr = err
				return
			}
			seen = append(seen, page.Items...)
			if n := len(page.Items); n > 0 {
				if cur, err = paginate.ParseCursor(revocationPos(page.Items[n-1]).String()); err != nil {
					readErr = err
					return
				}
			}
			if last && !page.HasMore {
				return
			}
			if !page.HasMore {
				time.Sleep(100 * time.Microsecond)
			}
		}
	})

	rng := rand.New(rand.NewPCG(42, 42))
	errs := make([]error, 2*len(subjects))
	var tasks []func(h store.Store)
	for i, sub := range subjects {
		for j := range 2 {
			// Out of order, and all past the replayed generations' window.
			at := base.Add(2 * time.Minute).Add(time.Duration(rng.IntN(3600)) * time.Second).Add(time.Duration(rng.IntN(1000)))
			tasks = append(tasks, func(h store.Store) { errs[2*i+j] = sub.revoke(h, at) })
		}
	}
	raceTasks(hs, 7, tasks)
	writersDone.Store(true)
	reader.Wait()

	for i, err := range errs {
		require.NoErrorf(t, err, "revoking %s %q (attempt %d)", subjects[i/2].kind, subjects[i/2].subject, i%2)
	}
	require.NoError(t, readErr, "the reader's ListRevocations")
	final := feedList(s, projA).all(t)
	require.Lenf(t, final, len(subjects), "items in the feed after %d revocations, each made twice", len(subjects))
	bySubject := map[string]store.Revocation{}
	for _, r := range final {
		_, dup := bySubject[r.Subject]
		require.Falsef(t, dup, "subject %q has two items in the feed", r.Subject)
		bySubject[r.Subject] = r
	}
	for _, sub := range subjects {
		r, ok := bySubject[sub.subject]
		require.Truef(t, ok, "the revocation of %s %q is not in the feed", sub.kind, sub.subject)
		require.Equalf(t, sub.kind, r.Kind, "Kind of the item of %q", sub.subject)
	}
	wantRevocations(t, final, seen, "what the reader saw while the feed grew, against the final feed")
	for _, h := range hs[1:] {
		wantRevocations(t, final, feedList(h, projA).all(t), "the feed through another handle")
	}
}

// A revocation and its feed item are one atomic write: a reader that sees
// a record revoked (an API key, a session, a disabled user) finds its item
// in the feed read just after, and a reader that sees an item finds its
// record revoked in the read just after, while revocations commit
// concurrently.
func raceFeedAtomic(t *testing.T, hs []store.Store) {
	s := hs[0]
	ctx := t.Context()
	mustProject(t, s, projA)
	type subject struct {
		id      string
		revoke  func(h store.Store, at time.Time) error
		revoked func(h store.Store) (bool, error)
	}
	var subjects []subject
	for i := range 10 {
		k := mustAPIKey(t, s, projA, fmt.Sprintf("key_%02d", i), base)
		subjects = append(subjects, subject{k.ID,
			func(h store.Store, at time.Time) error { return h.RevokeAPIKey(ctx, projA, k.ID, at) },
			func(h store.Store) (bool, error) {
				k, err := h.GetAPIKey(ctx, projA, k.ID)
				return k.Revoked(), err
			}})
	}
	owner := mustUser(t, s, projA, "owner@example.com")
	for range 10 {
		f := mustFamilyOf(t, s, owner, base, 30*24*time.Hour)
		subjects = append(subjects, subject{f.ID,
			func(h store.Store, at time.Time) error { return h.RevokeRefreshFamily(ctx, projA, f.ID, at) },
			func(h store.Store) (bool, error) {
				f, err := h.GetRefreshFamily(ctx, projA, f.ID)
				return !f.RevokedAt.IsZero(), err
			}})
	}
	for i := range 5 {
		u := mustUser(t, s, projA, fmt.Sprintf("user%d@example.com", i))
		subjects = append(subjects, subject{u.ID,
			func(h store.Store, at time.Time) error { return h.DisableUser(ctx, projA, u.ID, at) },
			func(h store.Store) (bool, error) {
				u, err := h.GetUser(ctx, projA, u.ID)
				return u.Disabled(), err
			}})
	}

	reader := hs[len(hs)-1]
	revokedNow := func() (map[string]bool, error) {
		out := map[string]bool{}
		for _, sub := range subjects {
			ok, err := sub.revoked(reader)
			if err != nil {
				return nil, err
			}
			if ok {
				out[sub.id] = true
			}
		}
		return out, nil
	}
	feedNow := func() (map[string]bool, error) {
		out := map[string]bool{}
		req := paginate.Request{Limit: paginate.MaxLimit}
		for {
			page, err := reader.ListRevocations(ctx, projA, req)
			if err != nil {
				return nil, err
			}
			for _, r := range page.Items {
				out[r.Subject] = true
			}
			if !page.HasMore {
				return out, nil
			}
			req.After = revocationPos(page.Items[len(page.Items)-1])
		}
	}
	var (
		done      atomic.Bool
		violation error
		rounds    int
		wg        sync.WaitGroup
	)
	wg.Go(func() {
		for !done.Load() && violation == nil {
			rounds++
			revoked, err := revokedNow()
			if err != nil {
				violation = err
				return
			}
			feed, err := feedNow()
			if err != nil {
				violation = err
				return
			}
			for id := range revoked {
				if !feed[id] {
					violation = fmt.Errorf("%q was read revoked, and the feed read just after has no item for it", id)
					return
				}
			}
			again, err := revokedNow()
			if err != nil {
				violation = err
				return
			}
			for id := range feed {
				if !again[id] {
					violation = fmt.Errorf("the feed has an item for %q, and the read just after finds it not revoked", id)
					return
				}
			}
		}
	})
	errs := make([]error, len(subjects))
	var tasks []func(h store.Store)
	for i, sub := range subjects {
		tasks = append(tasks, func(h store.Store) {
			time.Sleep(time.Duration(i) * time.Millisecond) // spread the commits over the reader's rounds
			errs[i] = sub.revoke(h, base.Add(time.Duration(i)*time.Second))
		})
	}
	raceTasks(hs, 3, tasks)
	done.Store(true)
	wg.Wait()
	for i, err := range errs {
		require.NoErrorf(t, err, "revoking %q", subjects[i].id)
	}
	require.NoErrorf(t, violation, "the reader, after %d rounds", rounds)
	require.Len(t, feedList(s, projA).all(t), len(subjects), "items in the feed")
}

// raceReplaceHash replaces one user's password hash from many goroutines
// over the handles at once, each from the same old hash to a hash of its
// own: the replacement is a compare-and-swap, so exactly one succeeds, the
// others get ErrConflict, and the stored hash is the winner's.
func raceReplaceHash(t *testing.T, hs []store.Store) {
	s := hs[0]
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "replaced@example.com")
	const n = 8
	hashOf := func(i int) string { return fmt.Sprintf("$argon2id$v=19$m=19456,t=2,p=1$raced%d$hash", i) }
	errs := make([]error, n)
	tasks := make([]func(h store.Store), n)
	for i := range n {
		tasks[i] = func(h store.Store) {
			errs[i] = h.ReplacePasswordHash(t.Context(), projA, u.ID, u.PasswordHash, hashOf(i))
		}
	}
	raceTasks(hs, 31, tasks)
	winner := hashOf(wantOneWinner(t, errs, "replacement"))
	for _, h := range hs {
		require.Equal(t, winner, mustGetUser(t, h, projA, u.ID).PasswordHash, "the stored hash after the race: the winner's")
	}
}

// wantOneWinner fails unless exactly one of errs, the errors of racing
// compare-and-swaps (what names one), is nil and every other matches
// store.ErrConflict, and returns the winner's index.
func wantOneWinner(t *testing.T, errs []error, what string) int {
	t.Helper()
	winner := -1
	for i, err := range errs {
		if err == nil {
			require.Equalf(t, -1, winner, "%s %d and %d both succeeded", what, winner, i)
			winner = i
			continue
		}
		require.ErrorIsf(t, err, store.ErrConflict, "%s %d lost the race", what, i)
	}
	require.NotEqualf(t, -1, winner, "no %s succeeded", what)
	return winner
}
