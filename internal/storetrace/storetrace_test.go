package storetrace_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/latchkey-dev/latchkey/internal/storetrace"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
	"github.com/latchkey-dev/latchkey/store/sqlite"
)

func TestWrap(t *testing.T) {
	ctx := context.Background()
	raw, err := sqlite.Open(ctx, ":memory:", nil)
	require.NoError(t, err)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(ctx) })
	tracer := tp.Tracer("test")
	st := storetrace.Wrap(raw, tracer)
	t.Cleanup(func() { _ = st.Close() })

	_, rawCV := any(raw).(store.ChangeVersioner)
	_, cv := st.(store.ChangeVersioner)
	assert.Equal(t, rawCV, cv, "ChangeVersioner is kept")
	_, rawW := any(raw).(store.RevocationWatcher)
	_, w := st.(store.RevocationWatcher)
	assert.Equal(t, rawW, w, "RevocationWatcher is kept")

	// Outside a traced request: no span.
	require.NoError(t, st.CreateProject(ctx, store.Project{ID: "acme", CreatedAt: time.Now()}))
	assert.Empty(t, rec.Ended())

	// Within one: a span per call, with the project and the class of an
	// error, never its text.
	rctx, span := tracer.Start(ctx, "request")
	_, err = st.GetUserByEmail(rctx, "acme", "ada@example.com")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = st.ListContacts(rctx, "acme", paginate.Request{Limit: 10})
	require.NoError(t, err)
	span.End()

	spans := rec.Ended()
	require.Len(t, spans, 3)
	get, list := spans[0], spans[1]
	assert.Equal(t, "store.GetUserByEmail", get.Name())
	assert.Equal(t, span.SpanContext().SpanID(), get.Parent().SpanID())
	a := map[string]string{}
	for _, kv := range get.Attributes() {
		a[string(kv.Key)] = kv.Value.String()
	}
	assert.Equal(t, map[string]string{"latchkey.project": "acme", "latchkey.store.error": "not_found"}, a, "no email")
	assert.Empty(t, get.Events())
	assert.Equal(t, "store.ListContacts", list.Name())
}

// Each optional capability of the wrapped store is kept, and only those:
// SQLite and PostgreSQL offer different sets.
func TestWrap_KeepsCapabilities(t *testing.T) {
	ctx := context.Background()
	lite, err := sqlite.Open(ctx, ":memory:", nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = lite.Close() })
	pg, err := postgres.Open(ctx, pgtest.NewDatabase(t), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = pg.Close() })

	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(ctx) })
	for name, raw := range map[string]store.Store{"sqlite": lite, "postgres": pg} {
		st := storetrace.Wrap(raw, tp.Tracer("test"))
		_, rawCV := raw.(store.ChangeVersioner)
		_, cv := st.(store.ChangeVersioner)
		assert.Equal(t, rawCV, cv, "%s: ChangeVersioner", name)
		_, rawW := raw.(store.RevocationWatcher)
		_, w := st.(store.RevocationWatcher)
		assert.Equal(t, rawW, w, "%s: RevocationWatcher", name)
		_, rawVL := raw.(store.VersionedContactLister)
		vl, isVL := st.(store.VersionedContactLister)
		assert.Equal(t, rawVL, isVL, "%s: VersionedContactLister", name)
		_, rawCL := raw.(store.CheckedContactLister)
		cl, isCL := st.(store.CheckedContactLister)
		assert.Equal(t, rawCL, isCL, "%s: CheckedContactLister", name)
		// The combined reads are traced like any read.
		require.NoError(t, st.CreateProject(ctx, store.Project{ID: "acme", CreatedAt: time.Now()}))
		rctx, span := tp.Tracer("test").Start(ctx, "request")
		want := ""
		switch {
		case isVL:
			_, _, err = vl.ListContactsVersioned(rctx, "acme", paginate.Request{Limit: 5})
			want = "store.ListContactsVersioned"
		case isCL:
			_, _, err = cl.ListContactsChecked(rctx, "acme", store.TokenRecordIDs{SigningKeyID: "sk_x"}, paginate.Request{Limit: 5})
			want = "store.ListContactsChecked"
		}
		require.NoError(t, err)
		span.End()
		if want == "" {
			continue
		}
		var names []string
		for _, s := range rec.Ended() {
			names = append(names, s.Name())
		}
		assert.Contains(t, names, want, name)
	}
}
