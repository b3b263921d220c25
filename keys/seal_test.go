package keys

import (
	"bytes"
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSealer_RoundTrip(t *testing.T) {
	master := make([]byte, MasterKeySize)
	_, _ = rand.Read(master)
	s, err := newSealer(master)
	require.NoError(t, err)
	seed := bytes.Repeat([]byte{7}, 32)

	a := s.seal("proj", "sk_1", seed)
	b := s.seal("proj", "sk_1", seed)
	require.Len(t, a, 24+32+16, "nonce || ciphertext || tag")
	require.NotEqual(t, a[:24], b[:24], "nonces must be random")
	require.False(t, bytes.Contains(a, seed), "sealed bytes hold the seed in clear")

	got, err := s.open("proj", "sk_1", a)
	require.NoError(t, err)
	require.Equal(t, seed, got)

	for name, c := range map[string]struct {
		project, kid string
		sealed       []byte
	}{
		"other project": {"proj2", "sk_1", a},
		"other kid":     {"proj", "sk_2", a},
		"short":         {"proj", "sk_1", a[:30]},
		"flipped":       {"proj", "sk_1", append(append([]byte{}, a[:40]...), append([]byte{a[40] ^ 1}, a[41:]...)...)},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := s.open(c.project, c.kid, c.sealed)
			require.ErrorIs(t, err, errUnseal)
		})
	}

	other := make([]byte, MasterKeySize)
	_, _ = rand.Read(other)
	s2, err := newSealer(other)
	require.NoError(t, err)
	_, err = s2.open("proj", "sk_1", a)
	require.ErrorIs(t, err, errUnseal, "another master key must not open the key")
}

func TestNewSealer_MasterKeySize(t *testing.T) {
	for _, n := range []int{0, 16, 31, 33, 64} {
		_, err := newSealer(make([]byte, n))
		require.Error(t, err, "master key of %d bytes", n)
	}
}
