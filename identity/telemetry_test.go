package identity_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/internal/telemetry/telemetrytest"
	"github.com/latchkey-dev/latchkey/store"
)

// TestHandler_metrics checks that logins, refreshes, replays and ended
// sessions are each counted once, by result.
func TestHandler_metrics(t *testing.T) {
	meters := telemetrytest.NewMeters(t)
	e := newEnv(t, envConfig{
		opts:    identity.Options{MeterProvider: meters},
		limiter: memoryLimiter(identity.LimiterOptions{AccountLimit: 2, AddressLimit: 1000}),
	})
	e.createUser(t, "default", "ada@example.com", "correct horse", "")

	ok := e.login(t, "", "ada@example.com", "correct horse")
	require.Equal(t, http.StatusOK, ok.status)
	first := ok.tokens(t).RefreshToken
	require.Equal(t, http.StatusUnsupportedMediaType, e.do(t, "POST", "/v1/identity/login", "text/plain", []byte("x")).status, "not an attempt: not counted")
	for range 2 {
		require.Equal(t, http.StatusUnauthorized, e.login(t, "", "ada@example.com", "wrong").status)
	}
	require.Equal(t, http.StatusTooManyRequests, e.login(t, "", "ada@example.com", "wrong").status)

	r := e.refresh(t, "", first)
	require.Equal(t, http.StatusOK, r.status)
	second := r.tokens(t).RefreshToken
	require.Equal(t, http.StatusOK, e.refresh(t, "", first).status, "within the reuse window")
	require.Equal(t, http.StatusUnauthorized, e.refresh(t, "", "rt_forged").status)
	e.clock.Advance(time.Minute)
	require.Equal(t, http.StatusUnauthorized, e.refresh(t, "", first).status, "a replay ends the session")
	require.Equal(t, http.StatusUnauthorized, e.refresh(t, "", second).status, "its session ended")

	e.clock.Advance(16 * time.Minute) // past the throttle window
	ok = e.login(t, "", "ada@example.com", "correct horse")
	require.Equal(t, http.StatusOK, ok.status)
	require.Equal(t, http.StatusNoContent, e.logout(t, "", ok.tokens(t).RefreshToken).status)

	assert.Equal(t, map[string]float64{"result=success": 2, "result=failure": 2, "result=throttled": 1}, meters.Values(t, "latchkey.logins"))
	assert.Equal(t, map[string]float64{"result=success": 1, "result=reused": 1, "result=invalid": 3}, meters.Values(t, "latchkey.refreshes"))
	assert.Equal(t, map[string]float64{"": 1}, meters.Values(t, "latchkey.refresh_replays"))
	assert.Equal(t, map[string]float64{"kind=session": 2}, meters.Values(t, "latchkey.revocations"), "the replay and the logout")
}

// TestUsers_metrics checks that disabling a user counts one revocation.
func TestUsers_metrics(t *testing.T) {
	meters := telemetrytest.NewMeters(t)
	e := newEnv(t, envConfig{})
	us := identity.NewUsers(e.st, e.hasher, &identity.UsersOptions{Now: e.clock.Now, MeterProvider: meters})
	u := e.createUser(t, "default", "ada@example.com", "pw", "")
	_, err := us.Disable(context.Background(), "default", u.ID)
	require.NoError(t, err)
	_, err = us.Disable(context.Background(), "default", "usr_nope")
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Equal(t, map[string]float64{"kind=user": 1}, meters.Values(t, "latchkey.revocations"))
}

// TestHasher_queueWaitMetric checks that every hash records its wait for a
// slot, also one that waited behind a full hasher.
func TestHasher_queueWaitMetric(t *testing.T) {
	meters := telemetrytest.NewMeters(t)
	h := identity.NewHasher(&identity.HasherOptions{MaxConcurrent: 1, MeterProvider: meters})
	ctx := context.Background()
	_, err := h.Hash(ctx, "pw")
	require.NoError(t, err)

	release, err := h.HoldSlots(ctx)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := h.Hash(ctx, "pw")
		done <- err
	}()
	waitCtx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = h.Hash(waitCtx, "pw")
	require.ErrorIs(t, err, context.Canceled, "a cancelled request hashes nothing")
	release()
	require.NoError(t, <-done)

	// The first hash, the slot holder's, and the one that waited; the
	// cancelled one never queued.
	assert.Equal(t, map[string]float64{"": 3}, meters.Values(t, "latchkey.hash.queue_wait"))
}
