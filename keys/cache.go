package keys

import (
	"container/list"
	"sync"
)

// DefaultVerifyCacheSize is the default bound of the verification cache.
const DefaultVerifyCacheSize = 10000

// verified is what the verification cache keeps about a token whose
// signature and claims were checked: enough to re-check, per request, what
// can change (time, key retirement, API-key revocation) without decoding or
// verifying the token again. It is never modified once cached.
type verified struct {
	project string
	kid     string
	kind    Kind
	claims  *claims
}

type cacheItem struct {
	key [32]byte
	v   *verified
}

// verifyCache is a bounded LRU map from the SHA-256 of a token to what its
// verification established. Only tokens that passed signature and claim
// checks are added, so an attacker cannot fill it with forgeries. It is safe
// for concurrent use.
type verifyCache struct {
	mu  sync.Mutex
	max int
	m   map[[32]byte]*list.Element
	ll  *list.List // front is most recently used
}

// newVerifyCache returns a cache of at most max entries, or nil (no cache)
// when max < 1. A nil *verifyCache is valid and caches nothing.
func newVerifyCache(max int) *verifyCache {
	if max < 1 {
		return nil
	}
	return &verifyCache{max: max, m: make(map[[32]byte]*list.Element, min(max, 1024)), ll: list.New()}
}

func (c *verifyCache) get(key [32]byte) (*verified, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(e)
	return e.Value.(*cacheItem).v, true
}

func (c *verifyCache) add(key [32]byte, v *verified) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		e.Value.(*cacheItem).v = v
		c.ll.MoveToFront(e)
		return
	}
	if c.ll.Len() >= c.max {
		last := c.ll.Back()
		c.ll.Remove(last)
		delete(c.m, last.Value.(*cacheItem).key)
	}
	c.m[key] = c.ll.PushFront(&cacheItem{key: key, v: v})
}

func (c *verifyCache) remove(key [32]byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		c.ll.Remove(e)
		delete(c.m, key)
	}
}

func (c *verifyCache) len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}
