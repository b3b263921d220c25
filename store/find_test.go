package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

// base is a store with one optional capability, ChangeVersion; its other
// methods are never called.
type base struct{ store.Store }

func (base) ChangeVersion(context.Context) (uint64, error) { return 7, nil }

// layer wraps a store, as a tracing or checking layer does.
type layer struct {
	store.Store
	inner store.Store
}

func (l layer) Unwrap() store.Store { return l.inner }

// checking wraps a store and implements the capability itself.
type checking struct{ layer }

func (checking) ChangeVersion(context.Context) (uint64, error) { return 8, nil }

func wrap(s store.Store) store.Store { return layer{inner: s} }

func TestAs(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		st   store.Store
		want uint64 // 0: not found
	}{
		"itself":          {base{}, 7},
		"one wrapper":     {wrap(base{}), 7},
		"three wrappers":  {wrap(wrap(wrap(base{}))), 7},
		"outermost first": {wrap(checking{layer{inner: base{}}}), 8},
		"none":            {wrap(wrap(layer{})), 0},
		"nil store":       {nil, 0},
	} {
		t.Run(name, func(t *testing.T) {
			cv, ok := store.As[store.ChangeVersioner](tc.st)
			require.Equal(t, tc.want != 0, ok)
			if !ok {
				assert.Nil(t, cv)
				return
			}
			v, err := cv.ChangeVersion(ctx)
			require.NoError(t, err)
			assert.Equal(t, tc.want, v)
		})
	}
	// A concrete type is found too.
	b, ok := store.As[base](wrap(wrap(base{})))
	require.True(t, ok)
	assert.Equal(t, base{}, b)
}
