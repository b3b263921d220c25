package mysql_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/mysql"
	"github.com/latchkey-dev/latchkey/store/mysql/mytest"
)

// TestWatch_OtherInstanceRevocation checks that a revocation committed
// through one Store wakes a watcher of another Store on the same database,
// and that the feed read after the wake-up holds it. It measures and logs
// the delay from the commit to the wake-up (not asserted tightly: the
// machine is shared; the bound is the contract's generous multiple).
func TestWatch_OtherInstanceRevocation(t *testing.T) {
	url := mytest.NewDatabase(t)
	a, b := openStore(t, url), openStore(t, url)
	ctx := t.Context()
	mustProject(t, a, "p")
	const n = 20
	for i := range n {
		require.NoError(t, a.CreateAPIKey(ctx, store.APIKey{ID: fmt.Sprintf("key_%d", i), ProjectID: "p", Name: "k", CreatedAt: t0}))
	}
	var delays []time.Duration
	for i := range n {
		ch := b.WatchRevocations(ctx)
		select {
		case <-ch:
			t.Fatalf("round %d: woken before any revocation", i)
		case <-time.After(10 * time.Millisecond):
		}
		require.NoError(t, a.RevokeAPIKey(ctx, "p", fmt.Sprintf("key_%d", i), time.Now()))
		committed := time.Now()
		select {
		case <-ch:
			delays = append(delays, time.Since(committed))
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: no wake-up 5 s after the revocation committed", i)
		}
		page, err := b.ListRevocations(ctx, "p", paginate.Request{Limit: 100})
		require.NoError(t, err)
		require.Len(t, page.Items, i+1, "the feed after the wake-up")
	}
	sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
	t.Logf("commit to wake-up on another Store, %d revocations: median %v, max %v (poll interval %v, store.MaxWatchDelay %v)",
		n, delays[n/2].Round(time.Millisecond), delays[n-1].Round(time.Millisecond), mysql.DefaultWatchInterval, store.MaxWatchDelay)
}

// TestWatch_ContextAndClose checks that a waiter's channel closes when its
// context ends or the store closes, without a revocation.
func TestWatch_ContextAndClose(t *testing.T) {
	st := openStore(t, mytest.NewDatabase(t))
	ctx, cancel := context.WithCancel(t.Context())
	ch := st.WatchRevocations(ctx)
	cancel()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("channel not closed after its context ended")
	}
	ch = st.WatchRevocations(t.Context())
	require.NoError(t, st.Close())
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("channel not closed by Close")
	}
	select {
	case <-st.WatchRevocations(t.Context()):
	case <-time.After(5 * time.Second):
		t.Fatal("a channel of a closed store is not closed")
	}
}
