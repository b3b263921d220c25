package store_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/latchkey-dev/latchkey/store"
)

// TestIsSentinel: every sentinel, wrapped as a backend wraps it, is one;
// nil and other errors are not.
func TestIsSentinel(t *testing.T) {
	for _, s := range []error{
		store.ErrNotFound, store.ErrConflict, store.ErrInvalid, store.ErrExpired,
		store.ErrRevoked, store.ErrReplayed, store.ErrDisabled, store.ErrUnavailable,
	} {
		assert.True(t, store.IsSentinel(fmt.Errorf("backend: op: %w", s)), "%v", s)
	}
	assert.False(t, store.IsSentinel(nil))
	assert.False(t, store.IsSentinel(errors.New("store: not found")), "an error with a sentinel's text is not it")
	assert.False(t, store.IsSentinel(fmt.Errorf("backend: op: %w", errors.ErrUnsupported)))
}
