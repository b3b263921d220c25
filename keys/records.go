package keys

import (
	"context"
	"sync"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

// recordKey names a signing key or an API key of a project.
type recordKey struct{ project, id string }

// signingRecord is what the verifier needs of a signing key's record.
type signingRecord struct {
	tag     uint64 // change version read before the record was
	kid     string
	alg     string
	raw     []byte     // the public key as stored
	parsed  *PublicKey // raw parsed, once the record is kept; else nil
	retired bool
}

// apiKeyRecord is what the verifier needs of an API key's record.
type apiKeyRecord struct {
	tag       uint64 // change version read before the record was
	revoked   bool
	revokesAt time.Time // the scheduled revocation (a roll's overlap), or zero
	expiresAt time.Time // the key's expiry, or zero (the token's exp says it too)
	lastUsed  time.Time
}

// sessionRecord is what the verifier needs of a session's record.
type sessionRecord struct {
	tag    uint64 // change version read before the record was
	family store.RefreshFamily
}

// signingRecordOf is the record of k, read at change version tag.
func signingRecordOf(k store.SigningKey, tag uint64) signingRecord {
	return signingRecord{tag: tag, kid: k.ID, alg: k.Algorithm, raw: k.PublicKey, retired: k.Retired()}
}

// apiKeyRecordOf is the record of k, read at change version tag.
func apiKeyRecordOf(k store.APIKey, tag uint64) apiKeyRecord {
	return apiKeyRecord{tag: tag, revoked: k.Revoked(), revokesAt: k.RevokesAt, expiresAt: k.ExpiresAt, lastUsed: k.LastUsedAt}
}

// The refusals of a token whose record does not exist (never created, of
// another project, or pruned).
func unknownKid() error     { return wrongProject("unknown kid") }
func unknownAPIKey() error  { return revoked("unknown API key") }
func unknownSession() error { return revoked("unknown session") }

// recordCache is a bounded map of store records, each tagged with the
// store's change version read before the record was (see
// store.ChangeVersioner). A record is used only while the store still
// reports its tag, so it is never staler than a read would be. When full,
// the map is emptied: the records are refilled by one read each. It is safe
// for concurrent use.
type recordCache[V any] struct {
	mu  sync.RWMutex
	max int
	m   map[recordKey]V
}

func newRecordCache[V any](max int) *recordCache[V] {
	return &recordCache[V]{max: max, m: make(map[recordKey]V)}
}

func (c *recordCache[V]) get(k recordKey) (V, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *recordCache[V]) put(k recordKey, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok && len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = v
}

// requestVersion holds the store's change version for one request, read at
// most once, before the first store read that needs it.
type requestVersion struct {
	ver  uint64
	ok   bool // a version was read
	done bool // a read was attempted
}

// version returns the store's change version for this request, and false
// when records must not be kept (the store offers no change signal, or
// reading it failed).
func (v *Verifier) version(ctx context.Context, rv *requestVersion) (uint64, bool) {
	if v.versioner == nil {
		return 0, false
	}
	if !rv.done {
		rv.done = true
		ver, err := v.versioner.ChangeVersion(ctx)
		rv.ver, rv.ok = ver, err == nil
	}
	return rv.ver, rv.ok
}
