package keys

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func key(i int) [32]byte { return sha256.Sum256([]byte(fmt.Sprint(i))) }

func TestVerifyCache_BoundedLRU(t *testing.T) {
	c := newVerifyCache(3)
	for i := range 3 {
		c.add(key(i), "p", &Claims{KeyID: fmt.Sprint(i)})
	}
	_, ok := c.get(key(0), "p") // 0 becomes most recently used; 1 is the oldest
	require.True(t, ok)
	c.add(key(3), "p", &Claims{KeyID: "3"})
	require.Equal(t, 3, c.len())
	_, ok = c.get(key(1), "p")
	require.False(t, ok, "the least recently used entry must be evicted")
	for _, i := range []int{0, 2, 3} {
		v, ok := c.get(key(i), "p")
		require.True(t, ok, "entry %d", i)
		require.Equal(t, fmt.Sprint(i), v.KeyID)
	}
	c.remove(key(2))
	_, ok = c.get(key(2), "p")
	require.False(t, ok)
	require.Equal(t, 2, c.len())
}

// An entry verified for one project is not a hit for another.
func TestVerifyCache_PerProject(t *testing.T) {
	c := newVerifyCache(3)
	c.add(key(1), "alpha", &Claims{KeyID: "1"})
	_, ok := c.get(key(1), "beta")
	require.False(t, ok)
	_, ok = c.get(key(1), "alpha")
	require.True(t, ok)
}

func TestVerifyCache_Disabled(t *testing.T) {
	c := newVerifyCache(-1)
	require.Nil(t, c)
	c.add(key(1), "p", &Claims{})
	_, ok := c.get(key(1), "p")
	require.False(t, ok)
	require.Equal(t, 0, c.len())
}

func TestVerifyCache_Concurrent(t *testing.T) {
	c := newVerifyCache(100)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				k := key(g*1000 + i)
				c.add(k, "p", &Claims{})
				c.get(k, "p")
				if i%3 == 0 {
					c.remove(k)
				}
			}
		}()
	}
	wg.Wait()
	require.LessOrEqual(t, c.len(), 100)
}

// TestTokenKey: a token's cache key is its SHA-256, taken without copying
// the token.
func TestTokenKey(t *testing.T) {
	long := strings.Repeat("eyJhbGciOiJFZERTQSJ9.", 20)
	for _, tok := range []string{"", "a", long} {
		require.Equal(t, sha256.Sum256([]byte(tok)), TokenKey(tok), "%q", tok)
	}
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = TokenKey(long) }))
}
