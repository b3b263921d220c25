package fixturehash_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/internal/fixturehash"
)

// Of's hash verifies its password and no other, and is made once.
func TestOf(t *testing.T) {
	h := fixturehash.Of("correct horse battery")
	assert.Equal(t, h, fixturehash.Of("correct horse battery"), "a second call returns the hash made by the first")
	assert.NotEqual(t, h, fixturehash.Of("another password"))

	hasher := identity.NewHasher(nil)
	ok, rehash, err := hasher.Verify(context.Background(), h, "correct horse battery")
	require.NoError(t, err)
	assert.True(t, ok, "the hash verifies its password")
	assert.False(t, rehash, "the hash has the default parameters")
	ok, _, err = hasher.Verify(context.Background(), h, "correct horse batterz")
	require.NoError(t, err)
	assert.False(t, ok, "the hash refuses another password")
}
