package remote

import (
	"sync"
	"time"

	"github.com/latchkey-dev/latchkey/keys"
)

// revokedSet is what the verifier has learned from the revocation feed. It
// is safe for concurrent use: Verify reads it, the feed loop writes it.
//
// API keys and signing keys are kept for ever, as the feed keeps them.
// Sessions and users are kept until no token they could refuse can still be
// accepted (see forgetAfter), then forgotten.
type revokedSet struct {
	mu          sync.RWMutex
	apiKeys     map[string]struct{}  // key_...: refuse its tokens
	signingKeys map[string]struct{}  // sk_...: refuse every token it signed
	sessions    map[string]time.Time // rf_... -> revoked_at: refuse login tokens of the session
	users       map[string]time.Time // usr_... -> latest revoked_at: refuse login tokens issued at or before it
}

func newRevokedSet() *revokedSet {
	return &revokedSet{
		apiKeys:     map[string]struct{}{},
		signingKeys: map[string]struct{}{},
		sessions:    map[string]time.Time{},
		users:       map[string]time.Time{},
	}
}

// item is one validated item of the feed.
type item struct {
	kind      string
	subject   string
	revokedAt time.Time
}

// The kinds of the feed's items.
const (
	kindAPIKey     = "api_key"
	kindSigningKey = "signing_key"
	kindSession    = "session"
	kindUser       = "user"
)

// add records items. Session and user items whose tokens have all expired
// by now (revoked before horizon) are not kept.
func (r *revokedSet) add(items []item, horizon time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, it := range items {
		switch it.kind {
		case kindAPIKey:
			r.apiKeys[it.subject] = struct{}{}
		case kindSigningKey:
			r.signingKeys[it.subject] = struct{}{}
		case kindSession:
			if it.revokedAt.Before(horizon) {
				continue
			}
			if at, ok := r.sessions[it.subject]; !ok || it.revokedAt.After(at) {
				r.sessions[it.subject] = it.revokedAt
			}
		case kindUser:
			if it.revokedAt.Before(horizon) {
				continue
			}
			// A user disabled, enabled and disabled again: the latest
			// disabling refuses every token the earlier ones did.
			if at, ok := r.users[it.subject]; !ok || it.revokedAt.After(at) {
				r.users[it.subject] = it.revokedAt
			}
		}
	}
}

// forget drops the session and user items revoked before horizon.
func (r *revokedSet) forget(horizon time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, at := range r.sessions {
		if at.Before(horizon) {
			delete(r.sessions, id)
		}
	}
	for id, at := range r.users {
		if at.Before(horizon) {
			delete(r.users, id)
		}
	}
}

// signingKeyRetired reports whether the feed retired kid.
func (r *revokedSet) signingKeyRetired(kid string) bool {
	r.mu.RLock()
	_, ok := r.signingKeys[kid]
	r.mu.RUnlock()
	return ok
}

// check refuses c if a revocation applies to it: its signing key retired,
// its API key revoked, its session ended, or its user disabled at or after
// its iat (give or take skew, the clock skew allowed between instances).
func (r *revokedSet) check(c *keys.Claims, skew time.Duration) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if _, ok := r.signingKeys[c.KeyID]; ok {
		return keys.Refuse(keys.ErrSigningKeyRetired, "retired signing key")
	}
	switch c.Kind() {
	case keys.KindAPIKey:
		if _, ok := r.apiKeys[c.Subject]; ok {
			return keys.Refuse(keys.ErrTokenRevoked, "revoked API key")
		}
	case keys.KindUser:
		if _, ok := r.sessions[c.SessionID]; ok { // keys.Parse refuses a login token without a sid
			return keys.Refuse(keys.ErrTokenRevoked, "ended session")
		}
		// iat is whole seconds, set by whichever instance minted the
		// token: a token minted just before the disable by an instance
		// whose clock runs ahead could carry a later iat. Allow for the
		// clock skew the verifier allows (its leeway), failing closed.
		if at, ok := r.users[c.Subject]; ok && !c.IssuedAt.After(at.Add(skew)) {
			return keys.Refuse(keys.ErrTokenRevoked, "disabled user")
		}
	}
	return nil
}

// sizes returns how many API keys, signing keys, sessions and users are
// kept.
func (r *revokedSet) sizes() (apiKeys, signingKeys, sessions, users int) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.apiKeys), len(r.signingKeys), len(r.sessions), len(r.users)
}
