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
// the limit; the writes of failures do not wait for the gate, so a slow
// store never holds up the checks, which then refuse. A check during which
// an attempt on its keys settled (its failure landed in the store, which
// the check may have read) is made again, so that it does not count that
// attempt twice. One that landed just before the check and settles just
// after it is counted twice by it: the error is on the side of refusing.
type inFlight struct {
	mu   sync.Mutex
	keys map[string]*flight
}

// flight is the state of one key.
type flight struct {
	gate    chan struct{} // held by the check being made on the key
	pending int           // attempts admitted and not yet settled
	settled uint64        // attempts settled, ever
	refs    int           // pending plus the attempts holding or awaiting gate
}

func newInFlight() *inFlight { return &inFlight{keys: make(map[string]*flight)} }

// counts returns the attempts in flight on account and address.
func (f *inFlight) counts(account, address string) InFlight {
	c, _ := f.snapshot(account, address)
	return c
}

// snapshot returns the attempts in flight on account and address, and the
// number of attempts on them ever settled.
func (f *inFlight) snapshot(account, address string) (InFlight, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.snapshotLocked(account, address)
}

func (f *inFlight) snapshotLocked(account, address string) (InFlight, uint64) {
	var c InFlight
	var settled uint64
	if fl := f.keys[account]; fl != nil {
		c.Account, settled = fl.pending, fl.settled
	}
	if fl := f.keys[address]; address != "" && fl != nil {
		c.Address = fl.pending
		settled += fl.settled
	}
	return c, settled
}

// turn takes the gates of account and address (address "" is none), calls
// fn, and gives them back. It returns fn's error, or ctx's error when ctx
// ends while waiting for the gates (fn is then not called).
func (f *inFlight) turn(ctx context.Context, account, address string, fn func(fls []*flight) error) error {
	keys := []string{account}
	if address != "" {
		keys = append(keys, address)
	}
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
// in flight on them (again when one of them settled meanwhile), and when
// check returns nil counts one more attempt in flight on each. It returns
// the admitted attempt, or check's error, or ctx's error.
func (f *inFlight) admit(ctx context.Context, account, address string, check func(InFlight) error) (*attempt, error) {
	var at *attempt
	err := f.turn(ctx, account, address, func(fls []*flight) error {
		for {
			c, settled := f.snapshot(account, address)
			err := check(c)
			f.mu.Lock()
			if _, now := f.snapshotLocked(account, address); now != settled {
				f.mu.Unlock()
				var rl *RateLimitedError
				if err == nil || errors.As(err, &rl) {
					continue // an attempt landed during the check: ask again
				}
				return err
			}
			if err != nil {
				f.mu.Unlock()
				return err
			}
			for _, fl := range fls {
				fl.pending++
				fl.refs++
			}
			f.mu.Unlock()
			at = &attempt{f: f, account: account, address: address, fls: fls}
			return nil
		}
	})
	return at, err
}

// attempt is an admitted attempt, in flight until settled.
type attempt struct {
	f                *inFlight
	account, address string
	fls              []*flight
	done             bool
}

// settle counts the attempt's outcome with record (the Limiter's Failure
// or Success), then ends it: it is no longer in flight once its outcome is
// in the store. It returns record's error. at may be nil (an attempt
// refused before it was admitted): record is then just called.
func (at *attempt) settle(record func() error) error {
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
	keys := []string{at.account}
	if len(at.fls) > 1 {
		keys = append(keys, at.address)
	}
	at.f.mu.Lock()
	for _, fl := range at.fls {
		fl.pending--
		fl.settled++
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
