package remote

import (
	"context"
	"time"

	"github.com/latchkey-dev/latchkey/keys"
)

// keySet is one reading of the project's key set. It is never modified once
// published.
type keySet struct {
	keys map[string]keys.PublicKey
}

// keyFunc returns the key function keys.Parse verifies with: the public key
// of kid from the key set, after the revoked signing keys are ruled out. A
// kid the set does not name makes the key set be read again (see
// refetchKeys) before the kid is refused as another project's.
func (v *Verifier) keyFunc(ctx context.Context) keys.KeyFunc {
	return func(kid string) (keys.PublicKey, error) {
		if v.revoked.signingKeyRetired(kid) {
			return keys.PublicKey{}, keys.Refuse(keys.ErrSigningKeyRetired, "retired signing key")
		}
		if pub, ok := v.keys.Load().keys[kid]; ok {
			return pub, nil
		}
		if err := v.refetchKeys(ctx); err != nil {
			v.logger.WarnContext(ctx, "remote: the key set could not be read again for an unknown kid", "err", err)
		}
		if v.revoked.signingKeyRetired(kid) {
			return keys.PublicKey{}, keys.Refuse(keys.ErrSigningKeyRetired, "retired signing key")
		}
		if pub, ok := v.keys.Load().keys[kid]; ok {
			return pub, nil
		}
		return keys.PublicKey{}, keys.Refuse(keys.ErrWrongProject, "unknown signing key")
	}
}

// refetchKeys reads the key set again because a token named a kid it does
// not hold (a key made by a rotation since the set was read, or a forged
// kid). Reads are single-flight and rate-limited: one runs at a time; a
// caller that finds a read started after it asked simply uses its result;
// and a read starts at least KeyRefetchInterval after the previous one
// started, the caller waiting out the rest of the interval (or until ctx
// ends). So tokens with made-up kids cost Latchkey at most one key-set read
// per interval, however many arrive, while a token of a new key waits at
// most one interval and is then accepted.
func (v *Verifier) refetchKeys(ctx context.Context) error {
	asked := v.keyReads.Load()
	select {
	case v.keyReadSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-v.keyReadSem }()
	if v.keyReads.Load() != asked {
		return nil // a read started after we asked has finished
	}
	if d := time.Until(v.lastKeyRead.Add(v.keyRefetchEvery)); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	v.lastKeyRead = time.Now()
	v.keyReads.Add(1)
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	m, err := v.fetchKeys(fctx)
	if err != nil {
		return err
	}
	v.keys.Store(&keySet{keys: m})
	return nil
}

// fetchTimeout bounds a read of the discovery document or the key set.
const fetchTimeout = 10 * time.Second
