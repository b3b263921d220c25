package keys_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

// plainStore hides every method but what a Verifier reads, so a store that
// implements store.ChangeVersioner looks as if it did not.
type plainStore struct{ keys.VerifierStore }

func withoutChangeVersion(s *countingStore) *plainStore { return &plainStore{s} }

// The env's store is the real SQLite store (counted), which implements
// store.ChangeVersioner: the env's Verifier keeps records.
var _ store.ChangeVersioner = (*countingStore)(nil)

// warmCached verifies the tokens, round after round, until a whole round
// is served without a store read, and fails if that takes more than a few
// rounds (the first use of an API key writes its last-used time, a commit,
// so the next round reads once more).
func (e *env) warmCached(tokens ...string) {
	e.t.Helper()
	for round := 0; ; round++ {
		sk, ak := e.st.getSigningKey.Load(), e.st.getAPIKey.Load()
		for _, tok := range tokens {
			_, err := e.v.Verify(context.Background(), "alpha", tok)
			require.NoError(e.t, err)
		}
		if e.st.getSigningKey.Load() == sk && e.st.getAPIKey.Load() == ak {
			return
		}
		require.Less(e.t, round, 3, "records still read from the store after %d rounds", round+1)
	}
}

// TestVerify_RecordCache_NoReadsWhenUnchanged: with a change signal and no
// commit, a known token costs no signing-key or API-key read at all.
func TestVerify_RecordCache_NoReadsWhenUnchanged(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	login := e.loginToken("alpha")
	_, key := e.apiKey("alpha")
	// A second token of a known user and session, minted without a write.
	u := e.user("alpha", "x")
	second, sid := e.loginTokenOf(u)
	again, _, err := e.kr.MintLoginToken(ctx, "alpha", u, sid)
	require.NoError(t, err)
	require.NotEqual(t, second, again)
	e.warmCached(login, key, second)
	sk, ak := e.st.getSigningKey.Load(), e.st.getAPIKey.Load()
	for range 20 {
		p, err := e.v.Verify(ctx, "alpha", login)
		require.NoError(t, err)
		require.Equal(t, keys.KindUser, p.Kind)
		p, err = e.v.Verify(ctx, "alpha", key)
		require.NoError(t, err)
		require.Equal(t, keys.KindAPIKey, p.Kind)
	}
	require.Zero(t, e.st.getSigningKey.Load()-sk, "signing-key reads with nothing committed")
	require.Zero(t, e.st.getAPIKey.Load()-ak, "API-key reads with nothing committed")

	// A new token signed by a known key, of a known session, needs no
	// read either: only its signature is checked.
	before, sessions := e.st.getSigningKey.Load(), e.st.getSession.Load()
	_, err = e.v.Verify(ctx, "alpha", again)
	require.NoError(t, err)
	require.Zero(t, e.st.getSigningKey.Load()-before)
	require.Zero(t, e.st.getSession.Load()-sessions)

	// Any commit, even to an unrelated row, makes the next request read.
	e.createProject("beta")
	_, err = e.v.Verify(ctx, "alpha", key)
	require.NoError(t, err)
	require.EqualValues(t, 1, e.st.getSigningKey.Load()-before)
	require.EqualValues(t, 1, e.st.getAPIKey.Load()-ak)
}

// TestVerify_RecordCache_RevokedBySecondHandle: a key whose record is kept
// is refused on the very next request after another handle (another
// process) revoked it.
func TestVerify_RecordCache_RevokedBySecondHandle(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	k, tok := e.apiKey("alpha")
	_, other := e.apiKey("alpha")
	e.warmCached(tok, other)
	ak := e.st.getAPIKey.Load()
	requireOK(t, e.whoami("alpha", tok), "alpha", "api_key")
	require.Equal(t, ak, e.st.getAPIKey.Load(), "the record was not served from the cache")

	second := e.openSecond()
	require.NoError(t, second.RevokeAPIKey(ctx, "alpha", k.ID, e.clock.Now()))
	e.requireRejected("alpha", tok, "revoked API key")
	e.requireRejected("alpha", tok, "revoked API key")
	requireOK(t, e.whoami("alpha", other), "alpha", "api_key")
}

// TestVerify_RecordCache_RetiredBySecondHandle: a signing key whose record
// is kept is refused on the very next request after another handle retired
// it, for login tokens and API keys alike.
func TestVerify_RecordCache_RetiredBySecondHandle(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	old, err := e.st.ActiveSigningKey(ctx, "alpha")
	require.NoError(t, err)
	login := e.loginToken("alpha")
	_, key := e.apiKey("alpha")
	e.warmCached(login, key)

	kr2, err := keys.NewKeyring(e.openSecond(), e.master, &keys.KeyringOptions{Now: e.clock.Now})
	require.NoError(t, err)
	_, err = kr2.Rotate(ctx, "alpha")
	require.NoError(t, err)
	newLogin := e.loginToken("alpha")
	e.warmCached(login, key, newLogin)
	sk := e.st.getSigningKey.Load()
	requireOK(t, e.whoami("alpha", login), "alpha", "user")
	require.Equal(t, sk, e.st.getSigningKey.Load(), "the record was not served from the cache")

	require.NoError(t, kr2.Retire(ctx, "alpha", old.ID))
	e.requireRejected("alpha", login, "retired signing key")
	e.requireRejected("alpha", key, "retired signing key")
	requireOK(t, e.whoami("alpha", newLogin), "alpha", "user")
}

// failingVersion is the real store with a change signal that fails.
type failingVersion struct{ *countingStore }

func (failingVersion) ChangeVersion(context.Context) (uint64, error) {
	return 0, errors.New("no version today")
}

// TestVerify_RecordCache_VersionErrorReadsStore: when the change signal
// fails, the Verifier reads the store as if there were none.
func TestVerify_RecordCache_VersionErrorReadsStore(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	st := failingVersion{e.st}
	v := keys.NewVerifier(st, &keys.VerifierOptions{Now: e.clock.Now, Logger: testLogger(t)})
	k, key := e.apiKey("alpha")
	for range 2 {
		_, err := v.Verify(ctx, "alpha", key)
		require.NoError(t, err)
	}
	sk, ak := e.st.getSigningKey.Load(), e.st.getAPIKey.Load()
	for range 3 {
		_, err := v.Verify(ctx, "alpha", key)
		require.NoError(t, err)
	}
	require.EqualValues(t, 3, e.st.getSigningKey.Load()-sk)
	require.EqualValues(t, 3, e.st.getAPIKey.Load()-ak)
	require.NoError(t, e.st.RevokeAPIKey(ctx, "alpha", k.ID, e.clock.Now()))
	_, err := v.Verify(ctx, "alpha", key)
	require.ErrorIs(t, err, keys.ErrInvalidToken)
}

// TestVerify_RecordCache_ClosedStore: a closed store is a store failure
// (500), never a success from kept records.
func TestVerify_RecordCache_ClosedStore(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	_, key := e.apiKey("alpha")
	e.warmCached(key)
	require.NoError(t, e.st.Store.Close())
	require.Equal(t, http.StatusInternalServerError, e.whoami("alpha", key).status)
}
