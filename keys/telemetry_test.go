package keys_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/internal/telemetry/telemetrytest"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

// TestVerifier_metrics checks that each verification is counted once, by
// cache hit or miss and by its result.
func TestVerifier_metrics(t *testing.T) {
	meters := telemetrytest.NewMeters(t)
	e := newEnv(t, &keys.VerifierOptions{MeterProvider: meters}, "alpha", "beta")
	ctx := context.Background()

	login := e.loginToken("alpha")
	requireOK(t, e.whoami("alpha", login), "alpha", "user") // miss, ok
	requireOK(t, e.whoami("alpha", login), "alpha", "user") // hit, ok
	requireInvalidToken(t, e.whoami("beta", login))         // miss: the cache is per project
	requireInvalidToken(t, e.whoami("alpha", "x.y.z"))      // miss, malformed
	k, key := e.apiKey("alpha")
	require.NoError(t, e.ak.Revoke(ctx, "alpha", k.ID))
	requireInvalidToken(t, e.whoami("alpha", key)) // miss, revoked
	e.clock.Advance(25 * time.Hour)
	requireInvalidToken(t, e.whoami("alpha", login)) // hit, expired

	want := map[string]float64{
		"cache=miss,result=ok":            1,
		"cache=hit,result=ok":             1,
		"cache=miss,result=wrong_project": 1,
		"cache=miss,result=malformed":     1,
		"cache=miss,result=revoked":       1,
		"cache=hit,result=expired":        1,
	}
	assert.Equal(t, want, meters.Values(t, "latchkey.verifications"))
	assert.Empty(t, meters.Values(t, "latchkey.revocations"), "the env's APIKeys report to the global provider")
}

// TestKeyring_metrics checks that revocations made by APIKeys and the
// Keyring are counted by kind.
func TestKeyring_metrics(t *testing.T) {
	meters := telemetrytest.NewMeters(t)
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	kr, err := keys.NewKeyring(e.st, e.master, &keys.KeyringOptions{Now: e.clock.Now, MeterProvider: meters})
	require.NoError(t, err)
	ak := keys.NewAPIKeys(e.st, kr, &keys.APIKeysOptions{Now: e.clock.Now, MeterProvider: meters})

	k, _, err := ak.Create(ctx, "alpha", "svc")
	require.NoError(t, err)
	require.NoError(t, ak.Revoke(ctx, "alpha", k.ID))
	old, err := e.st.ActiveSigningKey(ctx, "alpha")
	require.NoError(t, err)
	_, err = kr.Rotate(ctx, "alpha")
	require.NoError(t, err)
	require.NoError(t, kr.Retire(ctx, "alpha", old.ID))
	require.ErrorIs(t, kr.Retire(ctx, "alpha", "sk_nope"), store.ErrNotFound, "a failed retirement is not counted")

	assert.Equal(t, map[string]float64{"kind=api_key": 1, "kind=signing_key": 1}, meters.Values(t, "latchkey.revocations"))
}
