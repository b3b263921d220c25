package keys

import (
	"crypto/sha256"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func key(i int) [32]byte { return sha256.Sum256([]byte(fmt.Sprint(i))) }

func TestVerifyCache_BoundedLRU(t *testing.T) {
	c := newVerifyCache(3)
	for i := range 3 {
		c.add(key(i), &verified{kid: fmt.Sprint(i)})
	}
	_, ok := c.get(key(0)) // 0 becomes most recently used; 1 is the oldest
	require.True(t, ok)
	c.add(key(3), &verified{kid: "3"})
	require.Equal(t, 3, c.len())
	_, ok = c.get(key(1))
	require.False(t, ok, "the least recently used entry must be evicted")
	for _, i := range []int{0, 2, 3} {
		v, ok := c.get(key(i))
		require.True(t, ok, "entry %d", i)
		require.Equal(t, fmt.Sprint(i), v.kid)
	}
	c.remove(key(2))
	_, ok = c.get(key(2))
	require.False(t, ok)
	require.Equal(t, 2, c.len())
}

func TestVerifyCache_Disabled(t *testing.T) {
	c := newVerifyCache(-1)
	require.Nil(t, c)
	c.add(key(1), &verified{})
	_, ok := c.get(key(1))
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
				c.add(k, &verified{})
				c.get(k)
				if i%3 == 0 {
					c.remove(k)
				}
			}
		}()
	}
	wg.Wait()
	require.LessOrEqual(t, c.len(), 100)
}
