package keys

import (
	"crypto/sha256"
	"unsafe"

	lru "github.com/hashicorp/golang-lru/v2"
)

// DefaultVerifyCacheSize is the default bound of the verification cache.
const DefaultVerifyCacheSize = 10000

// verified is what the verification cache keeps about a token whose
// signature and claims were checked for a project: enough to re-check, per
// request, what can change (time, key retirement, API-key revocation, the
// session's end) without decoding or verifying the token again. It is never
// modified once cached.
type verified struct {
	project string
	claims  *Claims
}

// verifyCache is a bounded LRU map from the SHA-256 of a token to what its
// verification established. Only tokens that passed signature and claim
// checks are added, so an attacker cannot fill it with forgeries. It is safe
// for concurrent use. A nil *verifyCache is valid and caches nothing.
type verifyCache struct {
	lru *lru.Cache[[32]byte, verified]
}

// TokenKey returns the key a verification cache keeps token's result
// under: its SHA-256, so that the cache holds no token. The Verifier's cache
// and remote.Verifier's use it. Sum256 only reads its argument, so it reads
// the string's bytes in place: converting a token of a few hundred bytes to
// a []byte would copy it to the heap on every request.
func TokenKey(token string) [32]byte {
	return sha256.Sum256(unsafe.Slice(unsafe.StringData(token), len(token)))
}

// newVerifyCache returns a cache of at most max entries, or nil (no cache)
// when max < 1.
func newVerifyCache(max int) *verifyCache {
	if max < 1 {
		return nil
	}
	c, err := lru.New[[32]byte, verified](max)
	if err != nil {
		panic("keys: verification cache: " + err.Error()) // unreachable: max >= 1
	}
	return &verifyCache{lru: c}
}

// get returns the claims of the token whose SHA-256 is key, if it was
// verified for project.
func (c *verifyCache) get(key [32]byte, project string) (*Claims, bool) {
	if c == nil {
		return nil, false
	}
	v, ok := c.lru.Get(key)
	if !ok || v.project != project {
		return nil, false
	}
	return v.claims, true
}

// add keeps the claims of the token whose SHA-256 is key, verified for
// project.
func (c *verifyCache) add(key [32]byte, project string, claims *Claims) {
	if c != nil {
		c.lru.Add(key, verified{project: project, claims: claims})
	}
}

func (c *verifyCache) remove(key [32]byte) {
	if c != nil {
		c.lru.Remove(key)
	}
}

func (c *verifyCache) len() int {
	if c == nil {
		return 0
	}
	return c.lru.Len()
}
