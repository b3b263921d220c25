package storetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

// Public keys of each algorithm, made once per test binary: an RSA key
// takes a while to generate.
var (
	algKeysOnce sync.Once
	es256Pub    []byte // uncompressed P-256 point
	rs256Pub    []byte // PKCS #1 DER, 2048 bits
	rs1024Pub   []byte // PKCS #1 DER, 1024 bits: too short
	p384Pub     []byte // uncompressed P-384 point: another curve
)

func algKeys(t *testing.T) {
	t.Helper()
	algKeysOnce.Do(func() {
		ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		es256Pub, err = ec.PublicKey.Bytes()
		require.NoError(t, err)
		ec384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		require.NoError(t, err)
		p384Pub, err = ec384.PublicKey.Bytes()
		require.NoError(t, err)
		rk, err := rsa.GenerateKey(rand.Reader, 2048)
		require.NoError(t, err)
		rs256Pub = x509.MarshalPKCS1PublicKey(&rk.PublicKey)
		// GenerateKey refuses keys under 1024 bits, and a key of 1024 is
		// enough to be refused by the store.
		short, err := rsa.GenerateKey(rand.Reader, 1024)
		require.NoError(t, err)
		rs1024Pub = x509.MarshalPKCS1PublicKey(&short.PublicKey)
	})
	require.NotEmpty(t, rs256Pub, "the keys of each algorithm")
}

// A key of each algorithm is stored and comes back from GetSigningKey,
// ActiveSigningKey and ListSigningKeys with its algorithm and public key
// unchanged; keys of different algorithms live side by side in a project.
func testSigningKeyAlgorithms(t *testing.T, s store.Store) {
	algKeys(t)
	mustProject(t, s, projA)
	var want []store.SigningKey
	for i, c := range []struct {
		alg string
		pub []byte
	}{{store.AlgEdDSA, publicKey(7)}, {store.AlgES256, es256Pub}, {store.AlgRS256, rs256Pub}} {
		k := newSigningKey(projA, store.NewID(store.PrefixSigningKey), base.Add(time.Duration(i)*time.Second))
		k.Algorithm, k.PublicKey = c.alg, c.pub
		require.NoErrorf(t, s.CreateSigningKey(t.Context(), k), "CreateSigningKey of an %s key", c.alg)
		wantSigningKey(t, k, mustGetSigningKey(t, s, projA, k.ID), "GetSigningKey of an "+c.alg+" key")
		wantSigningKey(t, k, mustActive(t, s, projA), "ActiveSigningKey after creating an "+c.alg+" key")
		want = append(want, k)
	}
	ks, err := s.ListSigningKeys(t.Context(), projA)
	require.NoErrorf(t, err, "ListSigningKeys(%q)", projA)
	require.Len(t, ks, len(want))
	for i := range want {
		wantSigningKey(t, want[i], ks[i], "ListSigningKeys["+want[i].Algorithm+"]")
	}
}

// An unknown or empty algorithm, or a public key not of the algorithm's
// form (another algorithm's key, another curve, an RSA key under 2048
// bits), is ErrInvalid and stores nothing.
func testSigningKeyAlgorithmInvalid(t *testing.T, s store.Store) {
	algKeys(t)
	mustProject(t, s, projA)
	cases := []struct {
		name, alg string
		pub       []byte
	}{
		{"no algorithm", "", publicKey(1)},
		{"HS256", "HS256", publicKey(1)},
		{"none", "none", publicKey(1)},
		{"eddsa in lower case", "eddsa", publicKey(1)},
		{"ES256 with an Ed25519 key", store.AlgES256, publicKey(1)},
		{"ES256 with a P-384 point", store.AlgES256, p384Pub},
		{"ES256 with an RSA key", store.AlgES256, rs256Pub},
		{"ES256 with a point off the curve", store.AlgES256, append([]byte{4}, make([]byte, 64)...)},
		{"RS256 with an Ed25519 key", store.AlgRS256, publicKey(1)},
		{"RS256 with a P-256 point", store.AlgRS256, es256Pub},
		{"RS256 with 1024 bits", store.AlgRS256, rs1024Pub},
		{"EdDSA with a P-256 point", store.AlgEdDSA, es256Pub},
		{"EdDSA with an RSA key", store.AlgEdDSA, rs256Pub},
	}
	for _, c := range cases {
		k := newSigningKey(projA, "sk_alg", base)
		k.Algorithm, k.PublicKey = c.alg, c.pub
		require.ErrorIsf(t, s.CreateSigningKey(t.Context(), k), store.ErrInvalid, "CreateSigningKey: %s", c.name)
	}
	ks, err := s.ListSigningKeys(t.Context(), projA)
	require.NoErrorf(t, err, "ListSigningKeys(%q)", projA)
	require.Empty(t, ks, "ListSigningKeys after only rejected creates")
}
