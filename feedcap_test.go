package latchkey_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/revocations"
)

// TestFeed_LongPollsCappedPerKey: at most MaxWaitsPerKey long polls of the
// revocation feed are held at once per API key; one beyond is answered at
// once, with the empty page and a Retry-After, while another key's long
// poll is still held, and so is the first key's once one of its own ends.
func TestFeed_LongPollsCappedPerKey(t *testing.T) {
	const maxWaits = 2
	lk, h := newPathLatchkey(t, openStore(t), &latchkey.Options{Revocations: &revocations.Options{MaxWaitsPerKey: maxWaits}})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	_, keyA, err := lk.APIKeys().Create(context.Background(), "default", "a")
	require.NoError(t, err)
	_, keyB, err := lk.APIKeys().Create(context.Background(), "default", "b")
	require.NoError(t, err)
	poll := func(ctx context.Context, key string, wait int) (*http.Response, string, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/identity/revocations?wait="+strconv.Itoa(wait), nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := srv.Client().Do(req)
		if err != nil {
			return nil, "", err
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b), nil
	}

	// maxWaits long polls of key A, held until the test ends them.
	held, endHeld := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range maxWaits {
		wg.Go(func() { _, _, _ = poll(held, keyA, 60) })
	}
	// One more of key A is answered at once, once those are held; until
	// then it may be held itself, so each try gives up after a while.
	var capped *http.Response
	var body string
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		res, b, err := poll(ctx, keyA, 60)
		if err != nil {
			return false
		}
		capped, body = res, b
		return true
	}, time.Minute, 10*time.Millisecond)
	require.Equal(t, http.StatusOK, capped.StatusCode, body)
	assert.Contains(t, body, `"data":[]`)
	assert.Equal(t, "1", capped.Header.Get("Retry-After"))

	// Key B's long poll is held (it ends at its wait, without Retry-After).
	res, body, err := poll(context.Background(), keyB, 1)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Empty(t, res.Header.Get("Retry-After"), "held, not capped")

	// Once key A's long polls end, its next one is held again.
	endHeld()
	wg.Wait()
	require.Eventually(t, func() bool {
		res, _, err := poll(context.Background(), keyA, 1)
		return err == nil && res.StatusCode == http.StatusOK && res.Header.Get("Retry-After") == ""
	}, time.Minute, 10*time.Millisecond)
}
