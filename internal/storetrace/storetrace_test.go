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
	_, cv := store.As[store.ChangeVersioner](st)
	assert.Equal(t, rawCV, cv, "ChangeVersioner is found through the wrapper")
	_, rawW := any(raw).(store.RevocationWatcher)
	_, w := store.As[store.RevocationWatcher](st)
	assert.Equal(t, rawW, w, "RevocationWatcher is found through the wrapper")

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

// Each optional capability of the wrapped store is found through the
// wrapper with store.As, and only those: SQLite and PostgreSQL offer
// different sets. The wrapper itself declares none. A capability read made
// with the wrapper's Start and End is a span like any read.
func TestWrap_CapabilitiesByAs(t *testing.T) {
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
		_, own := any(st).(store.ChangeVersioner)
		assert.False(t, own, "%s: the wrapper declares no capability", name)
		found, ok := store.As[*storetrace.Store](st)
		require.True(t, ok)
		assert.Same(t, st, found)
		_, rawCV := raw.(store.ChangeVersioner)
		_, cv := store.As[store.ChangeVersioner](st)
		assert.Equal(t, rawCV, cv, "%s: ChangeVersioner", name)
		_, rawW := raw.(store.RevocationWatcher)
		_, w := store.As[store.RevocationWatcher](st)
		assert.Equal(t, rawW, w, "%s: RevocationWatcher", name)
		_, rawVL := raw.(store.VersionedContactLister)
		vl, isVL := store.As[store.VersionedContactLister](st)
		assert.Equal(t, rawVL, isVL, "%s: VersionedContactLister", name)
		_, rawCL := raw.(store.CheckedContactLister)
		cl, isCL := store.As[store.CheckedContactLister](st)
		assert.Equal(t, rawCL, isCL, "%s: CheckedContactLister", name)

		require.NoError(t, st.CreateProject(ctx, store.Project{ID: "acme", CreatedAt: time.Now()}))
		rctx, span := tp.Tracer("test").Start(ctx, "request")
		want := ""
		switch {
		case isVL:
			want = "store.ListContactsVersioned"
			cctx, cspan := st.Start(rctx, want, "acme")
			_, _, err = vl.ListContactsVersioned(cctx, "acme", paginate.Request{Limit: 5})
			storetrace.End(cspan, err)
		case isCL:
			want = "store.ListContactsChecked"
			cctx, cspan := st.Start(rctx, want, "acme")
			_, _, err = cl.ListContactsChecked(cctx, "acme", store.TokenRecordIDs{SigningKeyID: "sk_x"}, paginate.Request{Limit: 5})
			storetrace.End(cspan, err)
		}
		require.NoError(t, err)
		span.End()
		if want == "" {
			continue
		}
		var names []string
		for _, s := range rec.Ended() {
			if s.Name() == want {
				assert.Equal(t, "acme", attrs(s)["latchkey.project"])
			}
			names = append(names, s.Name())
		}
		assert.Contains(t, names, want, name)
	}

	// A store without the tracing layer starts no span.
	var none *storetrace.Store
	_, span := none.Start(ctx, "store.ListContactsChecked", "acme")
	assert.False(t, span.IsRecording())
	storetrace.End(span, nil)
}

// attrs returns the attributes of s as text.
func attrs(s sdktrace.ReadOnlySpan) map[string]string {
	a := map[string]string{}
	for _, kv := range s.Attributes() {
		a[string(kv.Key)] = kv.Value.String()
	}
	return a
}
