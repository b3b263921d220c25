package checkedlist_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/latchkey-dev/latchkey/internal/checkedlist"
	"github.com/latchkey-dev/latchkey/internal/storetrace"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
)

// layer wraps a store as a checking layer would: it declares no
// capability, only Unwrap.
type layer struct{ store.Store }

func (l layer) Unwrap() store.Store { return l.Store }

// plain hides every capability of the store it holds, and is no wrapper.
type plain struct{ store.Store }

// The list combines its reads on a store whose capability is found
// through a chain of wrappers, when the verifier reads that store, and on
// no other.
func TestContacts_findsCapabilitiesThroughWrappers(t *testing.T) {
	ctx := context.Background()
	open := func() *sqlite.Store {
		st, err := sqlite.Open(ctx, ":memory:", nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	raw := open()
	wrapped := layer{storetrace.Wrap(layer{raw}, noop.NewTracerProvider().Tracer(""))}
	v := keys.NewVerifier(wrapped, nil)
	for name, tc := range map[string]struct {
		st   store.Store
		want bool
	}{
		"the verifier's store, wrapped":    {wrapped, true},
		"the same store, unwrapped":        {raw, true},
		"the same store, behind no Unwrap": {plain{raw}, false},
		"another store":                    {open(), false},
	} {
		t.Run(name, func(t *testing.T) {
			l := checkedlist.Contacts(v, tc.st)
			assert.Equal(t, tc.want, l.Combines())
			// Without a pending check, Read is the store's list.
			page, err := l.Read(ctx, "default", paginate.Request{Limit: 5})
			require.NoError(t, err)
			assert.Empty(t, page.Items)
		})
	}
}
