package testutil_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latchkey-dev/latchkey/internal/testutil"
)

func TestBuffer_ConcurrentWrites(t *testing.T) {
	var b testutil.Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				fmt.Fprintf(&b, "%d\n", i)
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := strings.Count(b.String(), "\n"); got != 800 {
		t.Fatalf("got %d lines, want 800", got)
	}
}

func TestClock_Advance(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := testutil.NewClock(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("Now = %v, want %v", got, t0)
	}
	c.Advance(90 * time.Second)
	if got, want := c.Now(), t0.Add(90*time.Second); !got.Equal(want) {
		t.Fatalf("after Advance, Now = %v, want %v", got, want)
	}
}
