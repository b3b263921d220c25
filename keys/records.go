package keys

import (
	"context"
	"crypto/ed25519"
	"reflect"
	"sync"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

// recordKey names a signing key or an API key of a project.
type recordKey struct{ project, id string }

// signingRecord is what the verifier needs of a signing key's record.
type signingRecord struct {
	tag     uint64 // change version read before the record was
	pub     ed25519.PublicKey
	retired bool
}

// apiKeyRecord is what the verifier needs of an API key's record.
type apiKeyRecord struct {
	tag      uint64 // change version read before the record was
	revoked  bool
	lastUsed time.Time
}

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

// requestVersions holds the change versions of one request, read at most
// once each, before the first store read that needs them.
type requestVersions struct {
	sign, api         uint64
	signOK, apiOK     bool // a version was read
	signDone, apiDone bool // a read was attempted
}

// signingVersion returns the signing store's change version for this
// request, and false when records must not be cached (the store offers no
// change signal, or reading it failed).
func (v *Verifier) signingVersion(ctx context.Context, rv *requestVersions) (uint64, bool) {
	if v.signVer == nil {
		return 0, false
	}
	if !rv.signDone {
		rv.signDone = true
		ver, err := v.signVer.ChangeVersion(ctx)
		rv.sign, rv.signOK = ver, err == nil
		if v.sameVer {
			rv.api, rv.apiOK, rv.apiDone = rv.sign, rv.signOK, true
		}
	}
	return rv.sign, rv.signOK
}

// apiKeyVersion is signingVersion for the API key store.
func (v *Verifier) apiKeyVersion(ctx context.Context, rv *requestVersions) (uint64, bool) {
	if v.apiVer == nil {
		return 0, false
	}
	if !rv.apiDone {
		rv.apiDone = true
		ver, err := v.apiVer.ChangeVersion(ctx)
		rv.api, rv.apiOK = ver, err == nil
		if v.sameVer {
			rv.sign, rv.signOK, rv.signDone = rv.api, rv.apiOK, true
		}
	}
	return rv.api, rv.apiOK
}

// changeVersioner returns st's change signal, if it offers one.
func changeVersioner(st any) store.ChangeVersioner {
	cv, _ := st.(store.ChangeVersioner)
	return cv
}

// sameStore reports whether a and b are the same store (one pointer), so
// that one change version serves both.
func sameStore(a, b store.ChangeVersioner) bool {
	if a == nil || b == nil {
		return false
	}
	ta := reflect.TypeOf(a)
	return ta.Kind() == reflect.Pointer && ta == reflect.TypeOf(b) && a == b
}
