package failovertest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

// recoveryBound is how long after the new primary accepts writes each
// instance has to serve again (SPEC, "Failover and replicas").
const recoveryBound = 15 * time.Second

// recoveryDeadline is how long the test waits for the instances to serve
// again: well past recoveryBound, so that a slow recovery is measured and
// reported rather than cut short.
const recoveryDeadline = 60 * time.Second

// failoverGap is the time between the promotion and the old primary's
// stop, in either order.
const failoverGap = time.Second

// calmAfterFailover is how long each instance must answer without a 5xx
// after the failover before the load stops.
const calmAfterFailover = 3 * time.Second

// TestFailover_UnderLoad: two instances on the multi-host URL of a
// primary with a synchronous standby, under a bounded load, while the
// standby is promoted and the old primary stopped (as a crash, at once).
// It asserts that:
//
//   - no revoked API key, and no session ended by logout, is accepted by
//     a request made after the revocation was acknowledged;
//   - every refresh token acknowledged before the failover still
//     refreshes after it (each chain's token at the promotion is
//     refreshed on the new primary), and no other acknowledged write (a key, a
//     revocation, a logout) is undone: the count of lost acknowledged
//     writes is 0;
//   - each instance serves again (reads and writes) within 15 s of the
//     new primary accepting writes, without a restart;
//   - every 5xx answer, before, during or after, is 503 unavailable with
//     Retry-After: never a 500, never no answer.
//
// It runs twice, on a fresh pair each time: with the standby promoted
// first and the old primary stopped a second later (its writes hang
// meanwhile, their synchronous standby gone), and with the old primary
// stopped (fenced) first and the standby promoted a second later (no
// server takes writes meanwhile). It logs each instance's 5xx window and
// recovery time.
func TestFailover_UnderLoad(t *testing.T) {
	t.Run("PromoteThenStop", func(t *testing.T) { testUnderLoad(t, false) })
	t.Run("StopThenPromote", func(t *testing.T) { testUnderLoad(t, true) })
}

// testUnderLoad is TestFailover_UnderLoad, the old primary stopped before
// the promotion when fence is set, after it otherwise.
func testUnderLoad(t *testing.T, fence bool) {
	p := newPair(t)
	ctx := t.Context()
	db := p.createDatabase(t)
	url := p.multiHostURL(db)
	l := &load{ins: []*instance{startInstance(t, "a", url), startInstance(t, "b", url)}}
	l.failures = make([][]answer, len(l.ins))
	l.writes = make([][]answer, len(l.ins))
	a := l.ins[0]
	createContacts(t, a, 5)
	const chains = 4
	for i := range chains + 1 {
		_, err := a.lk.Users().Create(ctx, project, userEmail(i), userPassword(i), nil)
		require.NoError(t, err, "create a user")
	}
	for i := range 3 {
		_, tok, err := l.ins[i%2].lk.APIKeys().Create(ctx, project, "live")
		require.NoError(t, err, "create a key")
		l.liveKeys = append(l.liveKeys, tok)
	}
	for i := range chains {
		res := a.login(ctx, userEmail(i), userPassword(i))
		require.Equal(t, http.StatusOK, res.status, "login: %s", res)
		l.chains = append(l.chains, &chain{email: userEmail(i), password: userPassword(i), current: res.tokens(), ackStart: res.start, ackAt: res.end})
	}

	var wg sync.WaitGroup
	// Should the test end early (a failed promotion), the load stops
	// before the instances close.
	t.Cleanup(func() {
		l.stop.Store(true)
		wg.Wait()
	})
	for i, c := range l.chains {
		wg.Go(func() { l.runChain(ctx, i, c) })
	}
	for i := range 2 {
		wg.Go(func() { l.runReader(ctx, i) })
	}
	wg.Go(func() { l.runRevoker(ctx) })
	wg.Go(func() { l.runSessions(ctx, chains) })

	time.Sleep(3 * time.Second) // the load before the failover
	if l.count(&l.rotations) == 0 || l.count(&l.revocations) == 0 {
		l.stop.Store(true)
		wg.Wait()
		t.Fatalf("no load before the failover: %d rotations, %d revocations; problems: %v", l.rotations, l.revocations, l.problems)
	}

	var promoted, stopped time.Time
	if fence {
		p.stopPrimary(t)
		stopped = l.mark(&l.stopped)
		// No server takes writes for a moment: the old primary is down,
		// the standby still in recovery.
		time.Sleep(failoverGap)
		l.mark(&l.promoteStart)
		p.promote(t)
		promoted = l.mark(&l.promoted)
		t.Logf("failover: old primary stopped, standby promoted %s later (in %s)",
			promoted.Sub(stopped).Round(time.Millisecond), promoted.Sub(l.promoteStart).Round(time.Millisecond))
	} else {
		l.mark(&l.promoteStart)
		p.promote(t)
		promoted = l.mark(&l.promoted)
		// The old primary lives on a moment: its writes wait for a
		// synchronous standby that is gone.
		time.Sleep(failoverGap)
		p.stopPrimary(t)
		stopped = l.mark(&l.stopped)
		t.Logf("failover: standby promoted in %s, old primary stopped %s after the promotion",
			promoted.Sub(l.promoteStart).Round(time.Millisecond), stopped.Sub(promoted).Round(time.Millisecond))
	}
	done := promoted
	if stopped.After(done) {
		done = stopped
	}

	for !l.calm(done) && time.Since(promoted) < recoveryDeadline {
		time.Sleep(100 * time.Millisecond)
	}
	l.stop.Store(true)
	wg.Wait()
	l.verify(ctx)

	for i, in := range l.ins {
		l.report(t, i, in.name, promoted, done)
	}
	t.Logf("load: %d refresh rotations (%d chains refreshed across the failover), %d keys revoked, %d sessions logged out, %d logins",
		l.rotations, l.across(), l.revocations, len(l.ended), l.logins)
	t.Logf("lost acknowledged writes: %d", len(l.lost))
	for _, s := range l.lost {
		t.Errorf("lost acknowledged write: %s", s)
	}
	for _, s := range l.problems {
		t.Errorf("%s", s)
	}
	for i, c := range l.chains {
		assert.True(t, c.across, "chain %d: no token the old primary may have acknowledged was refreshed on the new one", i)
	}
	for _, in := range l.ins {
		assert.NoError(t, in.st.CheckWritable(ctx), "instance %s: CheckWritable after the failover", in.name)
	}
	checkFeedAfterFailover(t, l.ins[0], l.ins[1], l.liveKeys[0])
}

func userEmail(i int) string    { return fmt.Sprintf("user%d@example.com", i) }
func userPassword(i int) string { return fmt.Sprintf("pw-user-%d", i) }

// load is the bounded load of TestFailover_UnderLoad and what it saw.
type load struct {
	ins  []*instance
	stop atomic.Bool // set: each worker ends after its current request

	mu sync.Mutex
	// Times of the failover: pg_ctl promote started, the standby accepted
	// writes, the old primary was stopped.
	promoteStart, promoted, stopped time.Time
	failures                        [][]answer // per instance: every 5xx or missing answer
	writes                          [][]answer // per instance: every served refresh or login
	problems                        []string   // breaches of the contract
	lost                            []string   // acknowledged writes found undone
	liveKeys                        []string   // tokens of keys never revoked
	revoked                         []revokedKey
	ended                           []endedSession
	chains                          []*chain
	rotations, revocations, logins  int
}

// chain is a session refreshed over and over.
type chain struct {
	email, password string
	current         tokenSet  // its latest acknowledged tokens
	ackStart, ackAt time.Time // when the request that got current started, and when it was answered
	across          bool      // a token acknowledged by the old primary refreshed on the new one
}

type revokedKey struct {
	token string
	ackAt time.Time
}

type endedSession struct {
	tokens tokenSet
	ackAt  time.Time
}

// mark sets *at to now and returns it.
func (l *load) mark(at *time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	*at = time.Now()
	return *at
}

// count reads a counter of l.
func (l *load) count(n *int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return *n
}

func (l *load) problemf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.problems) < 50 {
		l.problems = append(l.problems, fmt.Sprintf(format, args...))
	}
}

func (l *load) lostf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lost = append(l.lost, fmt.Sprintf(format, args...))
}

// note records an answer of instance i to a request named what: a 5xx
// must be 503 unavailable with Retry-After, there must be an answer, and
// the only client error is 401 (which the callers judge): every request of
// the load is well formed and none is throttled. It returns the answer.
func (l *load) note(i int, what string, a answer) answer {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a.status >= 300 && a.status < 500 && a.status != http.StatusUnauthorized && len(l.problems) < 50 {
		l.problems = append(l.problems, fmt.Sprintf("%s on instance %s at %s: %s, unexpected", what, l.ins[i].name, l.phase(a.start), a))
	}
	if a.status == 0 || a.status >= 500 {
		l.failures[i] = append(l.failures[i], a)
		if !a.unavailable() && len(l.problems) < 50 {
			l.problems = append(l.problems, fmt.Sprintf("%s on instance %s at %s: %s (Retry-After %q), want 503 unavailable with Retry-After",
				what, l.ins[i].name, l.phase(a.start), a, a.retryAfter))
		}
	}
	return a
}

// served records a successful write (a refresh or a login) of instance i.
func (l *load) served(i int, a answer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes[i] = append(l.writes[i], a)
}

// phase describes t relative to the failover, for messages. l.mu is held.
func (l *load) phase(t time.Time) string {
	switch {
	case !l.promoted.IsZero():
		return fmt.Sprintf("promotion%+.3fs", t.Sub(l.promoted).Seconds())
	case !l.stopped.IsZero():
		return fmt.Sprintf("old primary's stop%+.3fs, before the promotion", t.Sub(l.stopped).Seconds())
	}
	return "before the failover"
}

// afterPromotion reports whether t is after the standby accepted writes.
// A write acknowledged for a request that started then was acknowledged by
// the new primary: the old one can no longer commit, its synchronous
// standby gone. One acknowledged for a request that started before may
// have been acknowledged by the old primary.
func (l *load) afterPromotion(t time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.promoted.IsZero() && t.After(l.promoted)
}

// calm reports whether every instance has served a write since the later
// of since and its last failure, and had no failure for calmAfterFailover.
func (l *load) calm(since time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.ins {
		from := since
		if f := l.failures[i]; len(f) > 0 && f[len(f)-1].end.After(from) {
			from = f[len(f)-1].end
		}
		if time.Since(from) < calmAfterFailover {
			return false
		}
		w := l.writes[i]
		if len(w) == 0 || !w[len(w)-1].start.After(from) {
			return false
		}
	}
	return true
}

// across counts the chains refreshed across the failover.
func (l *load) across() int {
	n := 0
	for _, c := range l.chains {
		if c.across {
			n++
		}
	}
	return n
}

// pause waits d, or less when the load stops.
func (l *load) pause(d time.Duration) {
	for end := time.Now().Add(d); !l.stop.Load() && time.Now().Before(end); {
		time.Sleep(min(d, 50*time.Millisecond))
	}
}

// runChain refreshes chain c again and again, on each instance in turn,
// and reads the contacts with its access token on the other. A 503 is
// retried with the same refresh token, as a client should.
func (l *load) runChain(ctx context.Context, idx int, c *chain) {
	for n := idx; !l.stop.Load(); n++ {
		i, o := n%2, (n+1)%2
		if c.current.RefreshToken == "" {
			// The session was lost: a new one, so that the load goes on.
			a := l.note(i, "login", l.ins[i].login(ctx, c.email, c.password))
			if a.status == http.StatusOK {
				l.served(i, a)
				c.current, c.ackStart, c.ackAt = a.tokens(), a.start, a.end
			}
			l.pause(50 * time.Millisecond)
			continue
		}
		a := l.note(i, "refresh", l.ins[i].refresh(ctx, c.current.RefreshToken))
		switch {
		case a.status == http.StatusOK:
			l.served(i, a)
			if !l.afterPromotion(c.ackStart) && l.afterPromotion(a.start) {
				c.across = true
			}
			c.current, c.ackStart, c.ackAt = a.tokens(), a.start, a.end
			l.mu.Lock()
			l.rotations++
			l.mu.Unlock()
		case a.status == http.StatusUnauthorized:
			l.lostf("chain %d: the refresh token acknowledged at %s was refused on instance %s: %s",
				idx, l.at(c.ackAt), l.ins[i].name, a)
			c.current = tokenSet{}
			continue
		default:
			// 503: the same token again, as a client should; anything
			// else was noted as a problem.
			l.pause(50 * time.Millisecond)
			continue
		}
		r := l.note(o, "contacts with a login token", l.ins[o].contacts(ctx, c.current.AccessToken))
		if r.status == http.StatusUnauthorized {
			l.lostf("chain %d: a login token of a live session refused on instance %s: %s", idx, l.ins[o].name, r)
		}
		l.pause(40 * time.Millisecond)
	}
}

// at describes an acknowledgement time for messages.
func (l *load) at(t time.Time) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.phase(t)
}

// runReader reads the contacts with live keys, revoked keys and login
// tokens of ended sessions, on random instances.
func (l *load) runReader(ctx context.Context, idx int) {
	for !l.stop.Load() {
		i := rand.IntN(len(l.ins))
		in := l.ins[i]
		l.mu.Lock()
		live := l.liveKeys[rand.IntN(len(l.liveKeys))]
		var rk *revokedKey
		if len(l.revoked) > 0 {
			rk = &l.revoked[rand.IntN(len(l.revoked))]
		}
		var es *endedSession
		if len(l.ended) > 0 {
			es = &l.ended[rand.IntN(len(l.ended))]
		}
		l.mu.Unlock()

		a := l.note(i, "contacts with an API key", in.contacts(ctx, live))
		if a.status == http.StatusUnauthorized {
			l.lostf("reader %d: a live API key refused on instance %s: %s", idx, in.name, a)
		}
		if rk != nil {
			a := l.note(i, "contacts with a revoked API key", in.contacts(ctx, rk.token))
			if a.status == http.StatusOK && a.start.After(rk.ackAt) {
				l.problemf("a revoked API key accepted on instance %s at %s, its revocation acknowledged at %s",
					in.name, l.at(a.start), l.at(rk.ackAt))
			}
		}
		if es != nil {
			a := l.note(i, "contacts with the login token of an ended session", in.contacts(ctx, es.tokens.AccessToken))
			if a.status == http.StatusOK && a.start.After(es.ackAt) {
				l.problemf("the login token of a session ended at %s accepted on instance %s at %s",
					l.at(es.ackAt), in.name, l.at(a.start))
			}
		}
		l.pause(20 * time.Millisecond)
	}
}

// runRevoker creates an API key through one instance about every second,
// uses it on both, and revokes it through the other, retrying until the
// revocation is acknowledged.
func (l *load) runRevoker(ctx context.Context) {
	for n := 0; !l.stop.Load(); n++ {
		start := time.Now()
		in, other := l.ins[n%2], l.ins[(n+1)%2]
		key, tok, err := in.lk.APIKeys().Create(ctx, project, "revoked-soon")
		if err != nil {
			if !errors.Is(err, store.ErrUnavailable) {
				l.problemf("create an API key on instance %s: %v, want success or store.ErrUnavailable", in.name, err)
			}
			l.pause(time.Second - time.Since(start))
			continue
		}
		for i, x := range l.ins {
			a := l.note(i, "contacts with a new API key", x.contacts(ctx, tok))
			if a.status == http.StatusUnauthorized {
				l.lostf("an API key acknowledged created was refused on instance %s: %s", x.name, a)
			}
		}
		for attempt := 0; ; attempt++ {
			err := other.lk.APIKeys().Revoke(ctx, project, key.ID)
			if err == nil {
				break
			}
			if !errors.Is(err, store.ErrUnavailable) || attempt > 600 {
				l.problemf("revoke an API key on instance %s: %v, want success or store.ErrUnavailable", other.name, err)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		l.mu.Lock()
		l.revoked = append(l.revoked, revokedKey{token: tok, ackAt: time.Now()})
		l.revocations++
		l.mu.Unlock()
		l.pause(time.Second - time.Since(start))
	}
}

// runSessions logs user u in on one instance, reads with the login token,
// and logs out on the other, retrying until the logout is acknowledged;
// then the session's tokens must be refused.
func (l *load) runSessions(ctx context.Context, u int) {
	for n := 0; !l.stop.Load(); n++ {
		start := time.Now()
		i, o := n%2, (n+1)%2
		a := l.note(i, "login", l.ins[i].login(ctx, userEmail(u), userPassword(u)))
		if a.status != http.StatusOK {
			if !a.unavailable() && a.status != 0 && a.status < 500 {
				l.problemf("login on instance %s: %s, want 200 or 503", l.ins[i].name, a)
			}
			l.pause(700*time.Millisecond - time.Since(start))
			continue
		}
		l.served(i, a)
		ts := a.tokens()
		l.mu.Lock()
		l.logins++
		l.mu.Unlock()
		l.note(o, "contacts with a login token", l.ins[o].contacts(ctx, ts.AccessToken))
		var ack time.Time
		for attempt := 0; attempt < 600; attempt++ {
			r := l.note(o, "logout", l.ins[o].logout(ctx, ts.RefreshToken))
			if r.status == http.StatusNoContent {
				ack = r.end
				break
			}
			if !r.unavailable() {
				if r.status != 0 && r.status < 500 {
					l.problemf("logout on instance %s: %s, want 204 or 503", l.ins[o].name, r)
				}
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if !ack.IsZero() {
			l.mu.Lock()
			l.ended = append(l.ended, endedSession{tokens: ts, ackAt: ack})
			l.mu.Unlock()
			r := l.note(i, "refresh of an ended session", l.ins[i].refresh(ctx, ts.RefreshToken))
			if r.status == http.StatusOK {
				l.problemf("the refresh token of a session ended at %s refreshed on instance %s", l.at(ack), l.ins[i].name)
			}
		}
		l.pause(700*time.Millisecond - time.Since(start))
	}
}

// verify checks, once the load has stopped, that every acknowledged write
// is still there on the new primary, through each instance.
func (l *load) verify(ctx context.Context) {
	for idx, c := range l.chains {
		in := l.ins[idx%2]
		a := untilServed(recoveryBound, func() answer { return in.refresh(ctx, c.current.RefreshToken) })
		if a.status != http.StatusOK {
			l.lostf("chain %d: the refresh token acknowledged at %s does not refresh after the failover: %s", idx, l.at(c.ackAt), a)
		}
	}
	for _, in := range l.ins {
		for _, tok := range l.liveKeys {
			if a := untilServed(recoveryBound, func() answer { return in.contacts(ctx, tok) }); a.status != http.StatusOK {
				l.lostf("a live API key refused on instance %s after the failover: %s", in.name, a)
			}
		}
		for _, rk := range l.revoked {
			a := untilServed(recoveryBound, func() answer { return in.contacts(ctx, rk.token) })
			if a.status != http.StatusUnauthorized {
				l.lostf("an API key revoked at %s answered %s on instance %s after the failover, want 401", l.at(rk.ackAt), a, in.name)
			}
		}
		for _, es := range l.ended {
			if a := untilServed(recoveryBound, func() answer { return in.contacts(ctx, es.tokens.AccessToken) }); a.status != http.StatusUnauthorized {
				l.lostf("the login token of a session ended at %s answered %s on instance %s after the failover, want 401", l.at(es.ackAt), a, in.name)
			}
			if a := untilServed(recoveryBound, func() answer { return in.refresh(ctx, es.tokens.RefreshToken) }); a.status != http.StatusUnauthorized {
				l.lostf("the refresh token of a session ended at %s answered %s on instance %s after the failover, want 401", l.at(es.ackAt), a, in.name)
			}
		}
	}
}

// report logs instance i's 5xx window and recovery time, and fails t when
// it served again later than recoveryBound after the promotion.
func (l *load) report(t *testing.T, i int, name string, promoted, done time.Time) {
	t.Helper()
	f := l.failures[i]
	var recovered time.Time
	if len(f) > 0 {
		first, last := f[0], f[len(f)-1]
		t.Logf("instance %s: %d answers 5xx or none, from promotion%+.3fs to promotion%+.3fs (window %s)",
			name, len(f), first.start.Sub(promoted).Seconds(), last.end.Sub(promoted).Seconds(),
			last.end.Sub(first.start).Round(time.Millisecond))
		recovered = last.end
	} else {
		t.Logf("instance %s: no 5xx answer", name)
	}
	// It serves again at its first write answered after its last failure
	// and after the failover was done (promoted and the old primary
	// stopped).
	from := done
	if recovered.After(from) {
		from = recovered
	}
	var served time.Time
	for _, w := range l.writes[i] {
		if w.start.After(from) {
			served = w.end
			break
		}
	}
	if served.IsZero() {
		t.Errorf("instance %s: served no write after the failover (waited %s)", name, recoveryDeadline)
		return
	}
	took := served.Sub(promoted)
	t.Logf("instance %s: serves writes again %s after the new primary accepted writes", name, took.Round(time.Millisecond))
	assert.LessOrEqual(t, took, recoveryBound, "instance %s: time to serve writes again after the new primary accepted them", name)
}
