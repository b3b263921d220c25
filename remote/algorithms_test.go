package remote

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

// sign makes a token with the claims of a genuine one, the header alg and
// kid given, signed by key with alg's method: what an attacker who knows
// the public keys can make.
func sign(t *testing.T, alg, kid string, claims map[string]any, key any) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.GetSigningMethod(alg), jwt.MapClaims(claims))
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

// TestVerify_algorithms: the verifier takes each key's algorithm from the
// JWK that publishes it: tokens of EdDSA, ES256 and RS256 keys of one
// project verify, each under its own key; a token whose header names
// another algorithm than its key's is refused, whatever it is signed with
// (RFC 8725 3.1).
func TestVerify_algorithms(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	_, feedKey := h.apiKey("feed")
	h.user("ann@example.com")
	edLogin, _ := h.login("ann@example.com")
	edKey, err := h.st.ActiveSigningKey(ctx, store.DefaultProject)
	require.NoError(t, err)
	require.Equal(t, keys.EdDSA, edKey.Algorithm)
	ecKey, err := h.lk.Keyring().RotateTo(ctx, store.DefaultProject, keys.ES256)
	require.NoError(t, err)
	ecLogin, _ := h.login("ann@example.com")
	_, ecAPIKey := h.apiKey("ec")
	rsKey, err := h.lk.Keyring().RotateTo(ctx, store.DefaultProject, keys.RS256)
	require.NoError(t, err)
	rsLogin, _ := h.login("ann@example.com")
	_, rsAPIKey := h.apiKey("rs")

	v := h.verifier(feedKey, &Options{KeyRefetchInterval: 50 * time.Millisecond})
	for name, tok := range map[string]string{
		"EdDSA login": edLogin, "ES256 login": ecLogin, "ES256 API key": ecAPIKey,
		"RS256 login": rsLogin, "RS256 API key": rsAPIKey, "EdDSA API key": feedKey,
	} {
		_, err := v.Verify(ctx, tok)
		require.NoError(t, err, name)
	}

	attackerEC, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	attackerRSA, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	_, attackerEd, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	rsPub, err := keys.ParsePublicKey(keys.RS256, rsKey.PublicKey)
	require.NoError(t, err)
	pkix, err := x509.MarshalPKIXPublicKey(rsPub.Key)
	require.NoError(t, err)
	rsPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix})
	claims := claimsOf(t, edLogin)

	for name, tok := range map[string]string{
		"HS256 with the Ed25519 key's bytes":  sign(t, "HS256", edKey.ID, claims, []byte(edKey.PublicKey)),
		"HS256 with the RSA key's PEM":        sign(t, "HS256", rsKey.ID, claims, rsPEM),
		"HS256 with the RSA key's PKCS #1":    sign(t, "HS256", rsKey.ID, claims, []byte(rsKey.PublicKey)),
		"HS256 with the P-256 point":          sign(t, "HS256", ecKey.ID, claims, []byte(ecKey.PublicKey)),
		"ES256 header on the EdDSA kid":       sign(t, "ES256", edKey.ID, claims, attackerEC),
		"RS256 header on the EdDSA kid":       sign(t, "RS256", edKey.ID, claims, attackerRSA),
		"EdDSA header on the ES256 kid":       sign(t, "EdDSA", ecKey.ID, claims, attackerEd),
		"RS256 header on the ES256 kid":       sign(t, "RS256", ecKey.ID, claims, attackerRSA),
		"ES256 header on the RS256 kid":       sign(t, "ES256", rsKey.ID, claims, attackerEC),
		"EdDSA header on the RS256 kid":       sign(t, "EdDSA", rsKey.ID, claims, attackerEd),
		"PS256 on the RS256 kid":              sign(t, "PS256", rsKey.ID, claims, attackerRSA),
		"RS256 on the RS256 kid, another key": sign(t, "RS256", rsKey.ID, claims, attackerRSA),
	} {
		for range 2 {
			c, err := v.Verify(ctx, tok)
			require.Error(t, err, name)
			assert.Nil(t, c, name)
			assert.ErrorIs(t, err, keys.ErrInvalidToken, name)
			assert.ErrorIs(t, err, keys.ErrTokenMalformed, name)
		}
	}
}
