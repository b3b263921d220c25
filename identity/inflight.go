package identity

import (
	"context"
	"errors"
	"sync"
)

// inFlight counts, per throttling key, the sign-in attempts an
// Authenticator let through whose outcome is not counted yet, and orders
// the checks made on each key.
//
// An attempt is admitted while it holds a hashing slot, and its failure is
// counted after its hash; with a slow store the count lands long after the
// slot is free. The Limiter therefore counts the attempts in flight as
// failures (InFlight). Checks on one key take turns (the key's gate), so
// that two attempts checked at once cannot both take the last place under
// the limit; the writes of outcomes do not wait for the gate.
//
// While an attempt's outcome is being written (it is landing), a check
// cannot tell whether the count it reads holds it. A check is therefore
// asked both ways (ask): an answer is kept when the two agree, and when
// they differ the check waits for the attempts landing to land and is
// asked again; so is one during which an attempt on its keys started
// landing or ended. An attempt is thus counted once, neither twice (refused
// one attempt early) nor never, and a slow store holds up only the checks
// whose answer depends on it: a refusal that holds either way comes at
// once.
type inFlight struct {
	mu   sync.Mutex
	keys map[string]*flight
}

// flight is the state of one key.
type flight struct {
	gate    chan struct{} // held by the check being made on the key
	pending int           // attempts admitted and not yet ended
	landing int           // of those, the ones whose outcome is being written
	landed  chan struct{} // closed when landing drops to zero; nil while zero
	changes uint64        // times an attempt started landing or ended
	refs    int           // pending, the attempts holding or awaiting gate, the prechecks
}

func newInFlight() *inFlight { return &inFlight{keys: make(map[string]*flight)} }

// snapshotLocked returns the attempts in flight on account and address,
// and the number of times one of them started landing or ended.
func (f *inFlight) snapshotLocked(account, address string) (InFlight, uint64) {
	var c InFlight
	var changes uint64
	if fl := f.keys[account]; fl != nil {
		c.Account, c.AccountLanding, changes = fl.pending, fl.landing, fl.changes
	}
	if fl := f.keys[address]; address != "" && fl != nil {
		c.Address, c.AddressLanding = fl.pending, fl.landing
		changes += fl.changes
	}
	return c, changes
}

// landedLocked returns the channel closed when the attempts landing on
// account (or, if none, on address) have landed, or nil when none is.
func (f *inFlight) landedLocked(account, address string) <-chan struct{} {
	for _, k := range keysOf(account, address) {
		if fl := f.keys[k]; fl != nil && fl.landing > 0 {
			return fl.landed
		}
	}
	return nil
}

// ask asks check about the attempts in flight on account and address, and
// when it passes calls pass (if not nil) with f.mu held. check is asked
// with the attempts landing counted as in flight, and, when that refuses
// and some are landing, with them counted as landed where the count
// allows (InFlight): a pass costs one check, and so does a refusal with
// none landing. sure reports that check's answer err holds: the two
// readings agree, and no attempt on the keys started landing or ended
// during the check. When the readings differ, landed is the channel to
// wait on before asking again. An error other than a *RateLimitedError is
// sure.
func (f *inFlight) ask(account, address string, check func(InFlight) error, pass func()) (sure bool, landed <-chan struct{}, err error) {
	f.mu.Lock()
	c, changes := f.snapshotLocked(account, address)
	f.mu.Unlock()
	strict := c
	strict.AccountLanding, strict.AddressLanding = 0, 0
	err = check(strict)
	split := false
	var rl *RateLimitedError
	if errors.As(err, &rl) && c.AccountLanding+c.AddressLanding > 0 {
		if lenient := check(c); lenient != nil {
			err = lenient
		} else {
			split = true
		}
	}
	if err != nil && !errors.As(err, &rl) {
		return true, nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, now := f.snapshotLocked(account, address); now != changes {
		return false, nil, err
	}
	if split {
		return false, f.landedLocked(account, address), err
	}
	if err == nil && pass != nil {
		pass()
	}
	return true, nil, err
}

// precheck returns check's answer about the attempts in flight on account
// and address when it is a sure refusal (ask), and nil otherwise: it
// refuses early, and leaves every doubt to admit. It holds a reference to
// the keys' flights meanwhile, so that their counts of changes cannot
// start again from zero under it.
func (f *inFlight) precheck(account, address string, check func(InFlight) error) error {
	keys := keysOf(account, address)
	defer f.unref(keys, f.ref(keys))
	if sure, _, err := f.ask(account, address, check, nil); sure {
		return err
	}
	return nil
}

// keysOf returns account and, unless it is "", address.
func keysOf(account, address string) []string {
	if address == "" {
		return []string{account}
	}
	return []string{account, address}
}

// turn takes the gates of account and address (address "" is none), calls
// fn, and gives them back. It returns fn's error, or ctx's error when ctx
// ends while waiting for the gates (fn is then not called).
func (f *inFlight) turn(ctx context.Context, account, address string, fn func(fls []*flight) error) error {
	keys := keysOf(account, address)
	fls := f.ref(keys)
	defer f.unref(keys, fls)
	held := 0
	defer func() {
		for _, fl := range fls[:held] {
			<-fl.gate
		}
	}()
	// Every attempt takes its account's gate, then its address's: the two
	// sets of keys are disjoint, so no two attempts wait for each other.
	for _, fl := range fls {
		select {
		case fl.gate <- struct{}{}:
			held++
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return fn(fls)
}

// admit asks check, in the turn of account and address, with the attempts
// in flight on them until its answer is sure (ask), and when check returns
// nil counts one more attempt in flight on each. It returns the admitted
// attempt, or check's error, or ctx's error.
func (f *inFlight) admit(ctx context.Context, account, address string, check func(InFlight) error) (*attempt, error) {
	var at *attempt
	err := f.turn(ctx, account, address, func(fls []*flight) error {
		pass := func() {
			for _, fl := range fls {
				fl.pending++
				fl.refs++
			}
			at = &attempt{f: f, account: account, address: address, fls: fls}
		}
		for {
			sure, landed, err := f.ask(account, address, check, pass)
			if sure {
				return err
			}
			if landed != nil {
				select {
				case <-landed:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
	})
	return at, err
}

// attempt is an admitted attempt, in flight until it ends.
type attempt struct {
	f                *inFlight
	account, address string
	fls              []*flight
	landing, done    bool
}

// settle counts the attempt's outcome with record (the Limiter's Failure
// or Success), then ends it: it is landing while record runs, and no
// longer in flight once its outcome is in the store. It returns record's
// error. at may be nil (an attempt refused before it was admitted): record
// is then just called.
func (at *attempt) settle(record func() error) error {
	if at == nil || at.done {
		return record()
	}
	at.f.mu.Lock()
	for _, fl := range at.fls {
		if fl.landing++; fl.landing == 1 {
			fl.landed = make(chan struct{})
		}
		fl.changes++
	}
	at.f.mu.Unlock()
	at.landing = true
	err := record()
	at.end()
	return err
}

// end ends the attempt, if it has not ended: it is no longer in flight.
// Alone, it ends an attempt whose outcome is not counted (a store or
// context error).
func (at *attempt) end() {
	if at == nil || at.done {
		return
	}
	at.done = true
	keys := keysOf(at.account, at.address)
	at.f.mu.Lock()
	for _, fl := range at.fls {
		fl.pending--
		fl.changes++
		if at.landing {
			if fl.landing--; fl.landing == 0 {
				close(fl.landed)
				fl.landed = nil
			}
		}
	}
	at.f.mu.Unlock()
	at.f.unref(keys, at.fls)
}

// ref returns the flights of keys, made if needed, with one more reference
// each.
func (f *inFlight) ref(keys []string) []*flight {
	f.mu.Lock()
	defer f.mu.Unlock()
	fls := make([]*flight, len(keys))
	for i, k := range keys {
		fl := f.keys[k]
		if fl == nil {
			fl = &flight{gate: make(chan struct{}, 1)}
			f.keys[k] = fl
		}
		fl.refs++
		fls[i] = fl
	}
	return fls
}

// unref drops one reference of each of keys' flights, forgetting those no
// attempt refers to any more: the table holds only keys in use.
func (f *inFlight) unref(keys []string, fls []*flight) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, fl := range fls {
		if fl.refs--; fl.refs == 0 {
			delete(f.keys, keys[i])
		}
	}
}
