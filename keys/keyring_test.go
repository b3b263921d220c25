package keys_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/tenant"
)

func TestNewKeyring_MasterKeySize(t *testing.T) {
	e := newEnv(t, nil)
	for _, n := range []int{0, 16, 31, 33} {
		_, err := keys.NewKeyring(e.st, make([]byte, n), nil)
		require.Error(t, err, "master key of %d bytes", n)
	}
	require.Panics(t, func() { _, _ = keys.NewKeyring(nil, e.master, nil) })
	require.Panics(t, func() { keys.NewVerifier(nil, nil) })
	require.Panics(t, func() { keys.NewAPIKeys(e.st, nil, nil) })
}

// dbBytes returns the raw bytes of the env's database files (main file and
// WAL), to show what reached the disk.
func (e *env) dbBytes() []byte {
	e.t.Helper()
	var all []byte
	matches, err := filepath.Glob(e.path + "*")
	require.NoError(e.t, err)
	require.NotEmpty(e.t, matches)
	for _, m := range matches {
		b, err := os.ReadFile(m)
		require.NoError(e.t, err)
		all = append(all, b...)
	}
	return all
}

// TestKeyring_PrivateKeysSealedAtRest: the store holds only the sealed key
// (nonce || XChaCha20-Poly1305 ciphertext under the documented derivation),
// and neither the seed nor the private key appears anywhere in the database
// files.
func TestKeyring_PrivateKeysSealedAtRest(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	rotated, err := e.kr.Rotate(ctx, "alpha")
	require.NoError(t, err)
	recs, err := e.st.ListSigningKeys(ctx, "alpha")
	require.NoError(t, err)
	require.Len(t, recs, 2)
	disk := e.dbBytes()
	for _, rec := range recs {
		require.Len(t, rec.PublicKey, 32)
		require.Len(t, rec.EncryptedPrivateKey, 24+32+16, "nonce || sealed seed || tag")
		priv := openSealed(t, e.master, rec) // documented format, opened independently
		require.False(t, bytes.Contains(disk, priv.Seed()), "seed of %s on disk", rec.ID)
		require.False(t, bytes.Contains(disk, priv), "private key of %s on disk", rec.ID)
		require.True(t, bytes.Contains(disk, rec.PublicKey), "the public key should be stored (sanity check of the scan)")
	}
	require.Equal(t, recs[1].ID, rotated.ID)
	require.Equal(t, rotated.EncryptedPrivateKey, recs[1].EncryptedPrivateKey)
}

// TestKeyring_WrongMasterKey: a Keyring with another master key cannot use
// the keys, and a sealed key copied to another kid does not open.
func TestKeyring_WrongMasterKey(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	other := make([]byte, keys.MasterKeySize)
	_, _ = rand.Read(other)
	kr2, err := keys.NewKeyring(e.st, other, nil)
	require.NoError(t, err)
	u := e.user("alpha")
	_, _, err = kr2.MintLoginToken(ctx, "alpha", u, e.session(u))
	require.Error(t, err)
	_, _, err = kr2.MintAPIKeyToken(ctx, "alpha", store.NewID(store.PrefixAPIKey))
	require.Error(t, err)

	// Copy alpha's sealed key onto a new, newer key record: same bytes,
	// other kid. The authenticated data binds it to its kid.
	active, err := e.st.ActiveSigningKey(ctx, "alpha")
	require.NoError(t, err)
	moved := active
	moved.ID = store.NewID(store.PrefixSigningKey)
	moved.CreatedAt = active.CreatedAt.Add(time.Second)
	require.NoError(t, e.st.CreateSigningKey(ctx, moved))
	kr3, err := keys.NewKeyring(e.st, e.master, nil) // empty private-key cache
	require.NoError(t, err)
	_, _, err = kr3.MintLoginToken(ctx, "alpha", u, e.session(u))
	require.Error(t, err)
}

func TestKeyring_MintArguments(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	sid := store.NewID(store.PrefixFamily)
	_, _, err := e.kr.MintLoginToken(ctx, "alpha", store.User{ID: "key_abc", ProjectID: "alpha"}, sid)
	require.ErrorIs(t, err, store.ErrInvalid)
	_, _, err = e.kr.MintLoginToken(ctx, "alpha", store.User{ID: "usr_abc", ProjectID: "beta"}, sid)
	require.ErrorIs(t, err, store.ErrInvalid)
	_, _, err = e.kr.MintLoginToken(ctx, "alpha", store.User{ID: "usr_abc", ProjectID: "alpha"}, "")
	require.ErrorIs(t, err, store.ErrInvalid, "a login token needs a session")
	_, _, err = e.kr.MintLoginToken(ctx, "alpha", store.User{ID: "usr_abc", ProjectID: "alpha"}, "key_abc")
	require.ErrorIs(t, err, store.ErrInvalid)
	_, _, err = e.kr.MintAPIKeyToken(ctx, "alpha", "usr_abc")
	require.ErrorIs(t, err, store.ErrInvalid)

	// A project without a signing key cannot mint.
	require.NoError(t, e.st.CreateProject(ctx, store.Project{ID: "bare", CreatedAt: t0}))
	_, _, err = e.kr.MintLoginToken(ctx, "bare", store.User{ID: "usr_abc", ProjectID: "bare"}, sid)
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = e.kr.Rotate(ctx, "nosuchproject")
	require.ErrorIs(t, err, store.ErrNotFound)
}

// TestKeyring_RotationByAnotherProcess: a Keyring signs with the key the
// store says is active, so a rotation made through another handle is used
// by the next mint.
func TestKeyring_RotationByAnotherProcess(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	first := e.loginToken("alpha") // warms the private-key cache
	kr2, err := keys.NewKeyring(e.openSecond(), e.master, &keys.KeyringOptions{Now: e.clock.Now})
	require.NoError(t, err)
	rotated, err := kr2.Rotate(ctx, "alpha")
	require.NoError(t, err)
	second := e.loginToken("alpha")
	require.NotEqual(t, decodeHeader(t, first)["kid"], decodeHeader(t, second)["kid"])
	require.Equal(t, rotated.ID, decodeHeader(t, second)["kid"])
	requireOK(t, e.whoami("alpha", first), "alpha", "user")
	requireOK(t, e.whoami("alpha", second), "alpha", "user")
}

// TestKeyring_RotateWithStoppedClock: Rotate makes the new key active even
// when the clock has not moved (or moved back) since the last rotation.
func TestKeyring_RotateWithStoppedClock(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	for range 5 {
		k, err := e.kr.Rotate(ctx, "alpha")
		require.NoError(t, err)
		active, err := e.st.ActiveSigningKey(ctx, "alpha")
		require.NoError(t, err)
		require.Equal(t, k.ID, active.ID)
		e.clock.Advance(-time.Second)
	}
}

// TestVerifier_LogsNoToken: authentication failures are logged, without the
// token or any recognisable part of it.
func TestVerifier_LogsNoToken(t *testing.T) {
	e := newEnv(t, nil, "alpha", "beta")
	var buf bytes.Buffer
	logged := keys.NewVerifier(e.st, &keys.VerifierOptions{
		Now:    e.clock.Now,
		Logger: slog.New(slog.NewTextHandler(&buf, nil)),
	})
	login := e.loginToken("alpha")
	_, key := e.apiKey("alpha")
	parts := strings.Split(login, ".")
	for _, tok := range []string{login, key, parts[0] + "." + parts[1] + ".AAAA", login + "x"} {
		_, err := logged.Verify(context.Background(), "beta", tok)
		require.ErrorIs(t, err, keys.ErrInvalidToken)
		require.NotContains(t, err.Error(), tok)
	}
	req := httptest.NewRequest(http.MethodGet, "/v1/whoami?access_token="+login, nil)
	req.Header.Set("Authorization", "Bearer "+login)
	req = req.WithContext(tenant.NewContext(req.Context(), "beta"))
	rec := httptest.NewRecorder()
	logged.Middleware(http.NotFoundHandler()).ServeHTTP(rec, req)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Contains(t, buf.String(), "authentication failed")
	for _, secret := range append(strings.Split(login, "."), strings.Split(key, ".")...) {
		require.NotContains(t, buf.String(), secret)
	}
}
