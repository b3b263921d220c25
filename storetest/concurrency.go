package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

func concurrencyGroups() []group {
	return []group{
		{"Refresh", []testCase{
			{"OneSuccessor", testConcRefreshOneSuccessor},
			{"OneSuccessorWindowZero", testConcRefreshWindowZero},
			{"SuccessiveRounds", testConcRefreshRounds},
			{"ManyFamilies", testConcRefreshManyFamilies},
			{"ConcurrentReplay", testConcRefreshReplay},
			{"RevokeRacesRotate", func(t *testing.T, s store.Store) { raceRevokeRotate(t, []store.Store{s}) }},
		}},
		{"Users", []testCase{
			{"SameEmail", testConcUsersSameEmail},
			{"DistinctEmails", testConcUsersDistinctEmails},
			{"DisableRacesSessions", func(t *testing.T, s store.Store) { raceDisableSessions(t, []store.Store{s}) }},
			{"ResetRacesSessions", func(t *testing.T, s store.Store) { raceResetSessions(t, []store.Store{s}) }},
			{"ReplaceHashOneWinner", func(t *testing.T, s store.Store) { raceReplaceHash(t, []store.Store{s}) }},
		}},
		{"Revocations", []testCase{
			{"AllOnceReaderMissesNone", func(t *testing.T, s store.Store) { raceFeed(t, []store.Store{s}) }},
			{"AtomicWithRecord", func(t *testing.T, s store.Store) { raceFeedAtomic(t, []store.Store{s}) }},
		}},
		{"APIKeyControls", []testCase{
			{"RollOneSuccessor", func(t *testing.T, s store.Store) { raceRoll(t, []store.Store{s}) }},
		}},
		{"Projects", []testCase{
			{"SameID", testConcProjectsSameID},
		}},
		{"Contacts", []testCase{
			{"CreateOrder", testConcContactsCreateOrder},
			{"PageWhileInserting", testConcContactsPageWhileInserting},
			{"BulkAndSingle", testConcContactsBulkAndSingle},
			{"OverlappingBatches", testConcContactsOverlappingBatches},
		}},
		{"APIKeys", []testCase{
			{"TouchMonotonic", testConcAPIKeysTouch},
			{"RevokeKeepsOne", testConcAPIKeysRevoke},
		}},
		{"Throttle", []testCase{
			{"AddFailure", testConcThrottleAddFailure},
		}},
	}
}

// race runs f(i) for i in [0, n) in n goroutines released together, and
// waits for all of them.
func race(n int, f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}

type rotation struct {
	r   store.Rotation
	err error
}

// handleOf picks one of several handles for goroutine i.
type handleOf func(i int) store.RefreshStore

// raceRotate has n goroutines present generation gen of f at once.
func raceRotate(ctx context.Context, n int, h handleOf, f store.RefreshFamily, gen int64, p func(i int) store.RotateParams) []rotation {
	out := make([]rotation, n)
	race(n, func(i int) {
		r, err := h(i).RotateRefresh(ctx, f.ProjectID, f.ID, gen, p(i))
		out[i] = rotation{r, err}
	})
	return out
}

// checkOneSuccessor checks that of rs exactly one call rotated and every
// other one got the same successor with Reused true.
func checkOneSuccessor(t *testing.T, rs []rotation, gen int64) store.RefreshFamily {
	t.Helper()
	var winners []int
	for i, r := range rs {
		require.NoErrorf(t, r.err, "RotateRefresh(gen %d) in goroutine %d of %d, want a rotation or a reuse (all within the window)", gen, i, len(rs))
		if !r.r.Reused {
			winners = append(winners, i)
		}
	}
	require.Lenf(t, winners, 1, "%d concurrent RotateRefresh(gen %d): calls that rotated (Reused false), want exactly 1", len(rs), gen)
	win := rs[winners[0]].r.Family
	require.Equal(t, gen+1, win.Generation, "the winner's generation")
	for i, r := range rs {
		wantFamily(t, win, r.r.Family, fmt.Sprintf("goroutine %d's family (must be the one successor)", i))
	}
	return win
}

// 50 goroutines presenting one token at once get one successor: exactly one
// rotates, the others are answered with that successor as a reuse.
func testConcRefreshOneSuccessor(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	now := base.Add(time.Minute)
	rs := raceRotate(t.Context(), 50, func(int) store.RefreshStore { return s }, f, 0, func(i int) store.RotateParams {
		return rotateParams(now.Add(time.Duration(i) * time.Millisecond))
	})
	win := checkOneSuccessor(t, rs, 0)
	wantFamily(t, win, mustGetFamily(t, s, projA, f.ID), "the family after the race")
}

// With a zero window, exactly one of the racing calls rotates and every
// other is a replay that revokes the family.
func testConcRefreshWindowZero(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	now := base.Add(time.Minute)
	rs := raceRotate(t.Context(), 50, func(int) store.RefreshStore { return s }, f, 0, func(int) store.RotateParams {
		return store.RotateParams{Now: now, TTL: time.Hour}
	})
	wins := 0
	for i, r := range rs {
		if r.err == nil {
			require.Falsef(t, r.r.Reused, "RotateRefresh in goroutine %d with ReuseWindow 0 = Reused, want a replay", i)
			wins++
			continue
		}
		wantErrAny(t, r.err, []error{store.ErrReplayed, store.ErrRevoked}, "RotateRefresh in goroutine %d with ReuseWindow 0", i)
	}
	require.Equal(t, 1, wins, "calls that rotated")
	got := mustGetFamily(t, s, projA, f.ID)
	require.EqualValues(t, 1, got.Generation)
	require.False(t, got.RevokedAt.IsZero(), "a replay revoked the family")
}

// Round after round, the racing callers of the current generation get one
// successor.
func testConcRefreshRounds(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	for gen := int64(0); gen < 4; gen++ {
		now := base.Add(time.Minute + time.Duration(gen)*time.Second)
		rs := raceRotate(t.Context(), 20, func(int) store.RefreshStore { return s }, f, gen, func(int) store.RotateParams { return rotateParams(now) })
		checkOneSuccessor(t, rs, gen)
	}
	require.EqualValues(t, 4, mustGetFamily(t, s, projA, f.ID).Generation)
}

// Rotations of different families do not interfere: no lost update, no
// spurious error.
func testConcRefreshManyFamilies(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	u := mustUser(t, s, projA, "many@example.com")
	fams := make([]store.RefreshFamily, 16)
	for i := range fams {
		fams[i] = newFamily(projA, u.ID, base, 30*24*time.Hour)
		require.NoErrorf(t, s.CreateRefreshFamily(t.Context(), fams[i], userHash), "CreateRefreshFamily")
	}
	errs := make([]error, len(fams))
	race(len(fams), func(i int) {
		for gen := int64(0); gen < 10; gen++ {
			r, err := s.RotateRefresh(t.Context(), projA, fams[i].ID, gen, rotateParams(base.Add(time.Duration(gen+1)*time.Minute)))
			if err == nil && (r.Reused || r.Family.Generation != gen+1) {
				err = fmt.Errorf("rotation %d: Reused %v, generation %d", gen, r.Reused, r.Family.Generation)
			}
			if err != nil {
				errs[i] = err
				return
			}
		}
	})
	for i, err := range errs {
		require.NoErrorf(t, err, "RotateRefresh of family %d", i)
		require.EqualValues(t, 10, mustGetFamily(t, s, projA, fams[i].ID).Generation)
	}
}

// Of many concurrent creates of one email (in different cases) exactly one
// succeeds; the others are ErrConflict.
func testConcUsersSameEmail(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	users := make([]store.User, 50)
	for i := range users {
		email := "race@example.com"
		if i%2 == 1 {
			email = strings.ToUpper(email)
		}
		users[i] = newUser(projA, email)
	}
	errs := make([]error, len(users))
	race(len(users), func(i int) { errs[i] = s.CreateUser(t.Context(), users[i]) })
	winner := -1
	for i, err := range errs {
		if err == nil {
			require.Equalf(t, -1, winner, "CreateUser(%q) succeeded in goroutines %d and %d, want exactly one", users[i].Email, winner, i)
			winner = i
			continue
		}
		require.ErrorIsf(t, err, store.ErrConflict, "CreateUser(%q) in goroutine %d", users[i].Email, i)
	}
	require.GreaterOrEqual(t, winner, 0, "no CreateUser succeeded")
	got, err := s.GetUserByEmail(t.Context(), projA, "Race@Example.com")
	require.NoErrorf(t, err, "GetUserByEmail")
	require.Equal(t, users[winner].ID, got.ID, "the user stored is the one whose create succeeded")
}

// Concurrent creates of distinct users all succeed.
func testConcUsersDistinctEmails(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	errs := make([]error, 50)
	users := make([]store.User, 50)
	for i := range users {
		users[i] = newUser(projA, fmt.Sprintf("user%02d@example.com", i))
	}
	race(len(users), func(i int) { errs[i] = s.CreateUser(t.Context(), users[i]) })
	for i, err := range errs {
		require.NoErrorf(t, err, "CreateUser(%q) concurrently with others", users[i].Email)
		got, err := s.GetUserByEmail(t.Context(), projA, users[i].Email)
		require.NoErrorf(t, err, "GetUserByEmail(%q)", users[i].Email)
		require.Equal(t, users[i].ID, got.ID)
	}
}

// Of many concurrent creates of one project id exactly one succeeds.
func testConcProjectsSameID(t *testing.T, s store.Store) {
	errs := make([]error, 20)
	race(len(errs), func(i int) {
		errs[i] = s.CreateProject(t.Context(), store.Project{ID: "contested", CreatedAt: base.Add(time.Duration(i) * time.Second)})
	})
	ok := 0
	for i, err := range errs {
		if err == nil {
			ok++
			continue
		}
		require.ErrorIsf(t, err, store.ErrConflict, "CreateProject(contested) in goroutine %d", i)
	}
	require.Equal(t, 1, ok, "creates that succeeded")
	ps, err := s.ListProjects(t.Context())
	require.NoErrorf(t, err, "ListProjects")
	require.Len(t, ps, 1)
}

// Concurrent CreateContact keeps the ordering rule: a contact whose create
// returned before another's began sorts before it, and the list shows each
// contact exactly as its create returned it.
func testConcContactsCreateOrder(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	type rec struct {
		in         store.Contact
		got        store.Contact
		err        error
		start, end int64
	}
	const writers, each = 8, 25
	recs := make([][]rec, writers)
	var seq atomic.Int64
	race(writers, func(g int) {
		rng := rand.New(rand.NewPCG(uint64(g), 42))
		for i := range each {
			at := base.Add(time.Duration(rng.IntN(7200)-3600) * time.Second).Add(time.Duration(rng.IntN(1000)))
			in := newContact(projA, fmt.Sprintf("ct_%d_%02d_%d", g, i, rng.IntN(10)), at)
			r := rec{in: in, start: seq.Add(1)}
			r.got, r.err = s.CreateContact(t.Context(), in)
			r.end = seq.Add(1)
			recs[g] = append(recs[g], r)
		}
	})
	var all []rec
	byID := map[string]store.Contact{}
	for _, rs := range recs {
		for _, r := range rs {
			require.NoErrorf(t, r.err, "concurrent CreateContact(%q)", r.in.ID)
			require.Falsef(t, r.got.CreatedAt.Before(store.Truncate(r.in.CreatedAt)), "CreateContact(%q) lowered CreatedAt", r.in.ID)
			all = append(all, r)
			byID[r.got.ID] = r.got
		}
	}
	for _, x := range all {
		for _, y := range all {
			if x.end < y.start {
				require.Truef(t, contactLess(x.got, y.got), "CreateContact(%q) returned (%s) before CreateContact(%q) began, yet the latter was stored at (%s, %q), not after (%s, %q)",
					x.in.ID, x.got.CreatedAt.Format(time.RFC3339Nano), y.in.ID,
					y.got.CreatedAt.Format(time.RFC3339Nano), y.got.ID, x.got.CreatedAt.Format(time.RFC3339Nano), x.got.ID)
			}
		}
	}
	listed := listAll(t, s, projA)
	require.Len(t, listed, writers*each)
	for _, c := range listed {
		want, ok := byID[c.ID]
		require.Truef(t, ok, "listed contact %q was never created", c.ID)
		wantTime(t, want.CreatedAt, c.CreatedAt, "listed CreatedAt of %q (as CreateContact returned it)", c.ID)
	}
}

// A client paging while others insert sees every contact that existed when
// it started, never one twice, and what it sees is a prefix of the final
// list: new contacts land after its cursor.
func testConcContactsPageWhileInserting(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	tr := newTracker(s, projA)
	for i := range 60 {
		tr.create(t, fmt.Sprintf("ct_pre_%02d", i), base.Add(time.Duration(i)*time.Second))
	}
	existing := sortedContacts(tr.created)

	const writers, each = 4, 30
	errs := make([]error, writers)
	var wg sync.WaitGroup
	defer wg.Wait() // also when the walk fails
	wg.Go(func() {
		race(writers, func(g int) {
			for i := range each {
				// Always earlier than the client's cursor.
				_, err := s.CreateContact(t.Context(), newContact(projA, fmt.Sprintf("ct_new_%d_%02d", g, i), base.Add(-time.Hour)))
				if err != nil {
					errs[g] = err
					return
				}
			}
		})
	})
	seen := walk(t, s, projA, 7, func(int, store.Contact) { time.Sleep(time.Millisecond) })
	wg.Wait()
	for g, err := range errs {
		require.NoErrorf(t, err, "CreateContact by writer %d", g)
	}
	require.GreaterOrEqual(t, len(seen), len(existing))
	wantContacts(t, existing, seen[:len(existing)], "the contacts that existed come first, all of them")
	final := listAll(t, s, projA)
	require.Len(t, final, len(existing)+writers*each)
	wantContacts(t, seen, final[:len(seen)], "what the paging client saw is a prefix of the final list")
}

// Concurrent batches and single creates all land, each batch atomically,
// and the list has no duplicates.
func testConcContactsBulkAndSingle(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	const workers = 6
	errs := make([]error, workers)
	race(workers, func(g int) {
		if g%2 == 0 {
			var batch []store.Contact
			for i := range 100 {
				batch = append(batch, newContact(projA, fmt.Sprintf("ct_b%d_%03d", g, i), base))
			}
			errs[g] = s.CreateContacts(t.Context(), projA, batch)
			return
		}
		for i := range 20 {
			if _, err := s.CreateContact(t.Context(), newContact(projA, fmt.Sprintf("ct_s%d_%02d", g, i), base)); err != nil {
				errs[g] = err
				return
			}
		}
	})
	for g, err := range errs {
		require.NoErrorf(t, err, "worker %d", g)
	}
	all := listAll(t, s, projA)
	require.Len(t, all, 3*100+3*20)
	wantContacts(t, all, walk(t, s, projA, 9, nil), "walk with limit 9")
}

// Concurrent touches leave LastUsedAt at the latest time given.
func testConcAPIKeysTouch(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := mustAPIKey(t, s, projA, "key_touch", base)
	errs := make([]error, 50)
	race(len(errs), func(i int) {
		at := base.Add(time.Duration((i*37)%50) * time.Second)
		errs[i] = s.TouchAPIKey(t.Context(), projA, k.ID, at)
	})
	for i, err := range errs {
		require.NoErrorf(t, err, "TouchAPIKey in goroutine %d", i)
	}
	wantTime(t, base.Add(49*time.Second), mustGetAPIKey(t, s, projA, k.ID).LastUsedAt, "LastUsedAt after concurrent touches")
}

// Concurrent revocations all succeed and leave one of the times given.
func testConcAPIKeysRevoke(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	k := mustAPIKey(t, s, projA, "key_revoke", base)
	errs := make([]error, 20)
	race(len(errs), func(i int) {
		errs[i] = s.RevokeAPIKey(t.Context(), projA, k.ID, base.Add(time.Duration(i+1)*time.Second))
	})
	for i, err := range errs {
		require.NoErrorf(t, err, "RevokeAPIKey in goroutine %d", i)
	}
	got := mustGetAPIKey(t, s, projA, k.ID)
	require.True(t, got.Revoked())
	d := got.RevokedAt.Sub(store.Truncate(base))
	require.Truef(t, d >= time.Second && d <= 20*time.Second && d%time.Second == 0,
		"RevokedAt = %s, want one of the times given", got.RevokedAt.Format(time.RFC3339Nano))
}

// Concurrent failures are each counted once: the counts returned are 1..n.
func testConcThrottleAddFailure(t *testing.T, s store.Store) {
	const n = 50
	counts := make([]int, n)
	errs := make([]error, n)
	race(n, func(i int) {
		counts[i], _, errs[i] = s.AddFailure(t.Context(), "login:race", base.Add(time.Duration(i)*time.Millisecond), time.Hour)
	})
	seen := make([]bool, n+1)
	for i := range n {
		require.NoErrorf(t, errs[i], "AddFailure in goroutine %d", i)
		c := counts[i]
		require.Truef(t, c >= 1 && c <= n && !seen[c], "AddFailure counts = %v, want each of 1..%d exactly once", counts, n)
		seen[c] = true
	}
	got, _ := failures(t, s, "login:race", base.Add(time.Second), time.Hour)
	require.Equal(t, n, got)
}

// Batches racing with one id in common: exactly one is inserted, whole; the
// others insert nothing.
func testConcContactsOverlappingBatches(t *testing.T, s store.Store) {
	mustProject(t, s, projA)
	const workers = 8
	errs := make([]error, workers)
	race(workers, func(g int) {
		batch := []store.Contact{newContact(projA, "ct_shared", base)}
		for i := range 30 {
			batch = append(batch, newContact(projA, fmt.Sprintf("ct_w%d_%02d", g, i), base.Add(time.Duration(i)*time.Second)))
		}
		errs[g] = s.CreateContacts(t.Context(), projA, batch)
	})
	winner := -1
	for g, err := range errs {
		if err == nil {
			require.Equalf(t, -1, winner, "batches %d and %d both succeeded with id ct_shared in common", winner, g)
			winner = g
			continue
		}
		require.ErrorIsf(t, err, store.ErrConflict, "CreateContacts by worker %d (id ct_shared taken)", g)
	}
	require.GreaterOrEqual(t, winner, 0, "no batch succeeded")
	all := listAll(t, s, projA)
	require.Len(t, all, 31, "contacts after racing batches: one whole batch")
	prefix := fmt.Sprintf("ct_w%d_", winner)
	for _, c := range all {
		require.Truef(t, c.ID == "ct_shared" || strings.HasPrefix(c.ID, prefix), "contact %q of a failed batch was inserted (winner: worker %d)", c.ID, winner)
	}
}

// Many replays at once after the window: none succeeds, the family ends up
// revoked, at one of the times presented.
func testConcRefreshReplay(t *testing.T, s store.Store) {
	f := mustFamily(t, s, projA)
	first := rotateParams(base.Add(time.Minute))
	rotate(t, s, f, 0, first)
	late := first.Now.Add(time.Minute)
	rs := raceRotate(t.Context(), 20, func(int) store.RefreshStore { return s }, f, 0, func(i int) store.RotateParams {
		return rotateParams(late.Add(time.Duration(i) * time.Second))
	})
	for i, r := range rs {
		wantErrAny(t, r.err, []error{store.ErrReplayed, store.ErrRevoked}, "RotateRefresh(gen 0) after the window in goroutine %d", i)
	}
	got := mustGetFamily(t, s, projA, f.ID)
	d := got.RevokedAt.Sub(store.Truncate(late))
	require.Truef(t, d >= 0 && d < 20*time.Second && d%time.Second == 0,
		"RevokedAt = %s, want one of the times presented", got.RevokedAt.Format(time.RFC3339Nano))
	_, err := s.RotateRefresh(t.Context(), projA, f.ID, 1, rotateParams(late.Add(time.Minute)))
	require.ErrorIsf(t, err, store.ErrRevoked, "RotateRefresh(gen 1) after concurrent replays")
}
