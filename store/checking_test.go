package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// unreachable is a backend every method of which panics: a call the
// checking layer refuses must not reach it.
type unreachable struct{ store.Store }

// writable is an unreachable backend with one optional capability.
type writable struct{ unreachable }

func (writable) CheckWritable(context.Context) error { return nil }

func TestCheck_refusesBeforeTheBackend(t *testing.T) {
	c := store.Check(unreachable{})
	ctx := t.Context()
	for name, call := range map[string]func() error{
		"GetUser bad id":        func() error { _, err := c.GetUser(ctx, "p", "a:b"); return err },
		"GetAPIKey bad project": func() error { _, err := c.GetAPIKey(ctx, "Not A Slug", "key_1"); return err },
		"ListContacts limit 0": func() error {
			_, err := c.ListContacts(ctx, "p", paginate.Request{})
			return err
		},
		"SetPasswordHash empty": func() error { return c.SetPasswordHash(ctx, "p", "usr_1", "") },
		"RevokeAPIKey zero at":  func() error { return c.RevokeAPIKey(ctx, "p", "key_1", time.Time{}) },
		"RotateRefresh negative gen": func() error {
			_, err := c.RotateRefresh(ctx, "p", "rf_1", -1, store.RotateParams{Now: time.Now(), TTL: time.Hour})
			return err
		},
		"CreateContacts other project": func() error {
			return c.CreateContacts(ctx, "p", []store.Contact{{ID: "ct_1", ProjectID: "q", Name: "n", CreatedAt: time.Now()}})
		},
		"PruneAudit zero": func() error { _, err := c.PruneAudit(ctx, time.Time{}); return err },
	} {
		err := call()
		var ae *store.ArgError
		require.ErrorAs(t, err, &ae, name)
		assert.ErrorIs(t, err, store.ErrInvalid, name)
	}
}

func TestCheck_unwrapAndAs(t *testing.T) {
	var backend store.Store = writable{}
	c := store.Check(backend)
	assert.Same(t, c, store.Check(c), "checked once")
	assert.Equal(t, backend, c.Unwrap())
	_, direct := any(c).(store.WritableChecker)
	assert.False(t, direct, "the layer has only the methods of Store")
	wc, ok := store.As[store.WritableChecker](c)
	require.True(t, ok, "a capability is found through Unwrap")
	assert.NoError(t, wc.CheckWritable(t.Context()))
	_, ok = store.As[store.ChangeVersioner](c)
	assert.False(t, ok)
	got, ok := store.As[*store.Checked](c)
	assert.True(t, ok)
	assert.Same(t, c, got)
}

// instant is a backend whose token record reads return at once, so that
// BenchmarkChecked measures the layer alone.
type instant struct{ unreachable }

func (instant) GetAPIKey(_ context.Context, projectID, id string) (store.APIKey, error) {
	return store.APIKey{ProjectID: projectID, ID: id}, nil
}

// BenchmarkChecked compares a token record read through the checking layer
// with the same read of a backend that checks its own arguments, as the
// backends did before the layer.
func BenchmarkChecked(b *testing.B) {
	ctx := context.Background()
	b.Run("layer", func(b *testing.B) {
		s := opaque(store.Check(instant{}))
		for b.Loop() {
			if _, err := s.GetAPIKey(ctx, store.DefaultProject, "key_01JD8V2M7Q4K3XH5N9R0T6B8CE"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("backend", func(b *testing.B) {
		s := opaque(selfChecking{})
		for b.Loop() {
			if _, err := s.GetAPIKey(ctx, store.DefaultProject, "key_01JD8V2M7Q4K3XH5N9R0T6B8CE"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// selfChecking is instant checking its own arguments.
type selfChecking struct{ instant }

func (s selfChecking) GetAPIKey(ctx context.Context, projectID, id string) (store.APIKey, error) {
	if err := store.CheckKey(projectID, "API key id", id); err != nil {
		return store.APIKey{}, err
	}
	return s.instant.GetAPIKey(ctx, projectID, id)
}

// opaque returns s as the interface value a caller holds, so that the
// compiler cannot see through it and call the store's method directly.
//
//go:noinline
func opaque(s store.Store) store.Store { return s }
