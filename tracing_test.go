package latchkey_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
	"github.com/latchkey-dev/latchkey/store/sqlite/sqlitetest"
)

// serverSpans returns the request spans among spans, leaving out the
// store's.
func serverSpans(spans []sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.SpanKind() == trace.SpanKindServer {
			out = append(out, s)
		}
	}
	return out
}

// attrs returns a span's attributes by key.
func attrs(s sdktrace.ReadOnlySpan) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

// TestHandler_spans checks the span of each request: named by method and
// route, a child of the caller's trace, with the status and project and
// nothing secret.
func TestHandler_spans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	lk := newLatchkey(t, openStore(t), &latchkey.Options{TracerProvider: tp, Propagator: propagation.TraceContext{}})
	_, token, err := lk.APIKeys().Create(context.Background(), "default", "svc")
	require.NoError(t, err)
	h := lk.Handler()

	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	send := func(method, target, auth string) {
		req := httptest.NewRequest(method, target, nil)
		req.Header.Set("traceparent", parent)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	send("GET", "/v1/contacts?limit=2", token)
	send("GET", "/v1/contacts", "garbage.token.here")
	send("DELETE", "/v1/contacts", "")
	send("GET", "/nowhere", "")

	spans := serverSpans(rec.Ended())
	require.Len(t, spans, 4)
	type want struct {
		name   string
		route  string
		status int64
	}
	for i, w := range []want{
		{"GET /v1/contacts", "/v1/contacts", 200},
		{"GET /v1/contacts", "/v1/contacts", 401},
		{"DELETE", "", 405},
		{"GET", "", 404},
	} {
		s := spans[i]
		a := attrs(s)
		assert.Equal(t, w.name, s.Name(), "span %d", i)
		assert.Equal(t, trace.SpanKindServer, s.SpanKind())
		assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", s.SpanContext().TraceID().String(), "joins the caller's trace")
		assert.Equal(t, "00f067aa0ba902b7", s.Parent().SpanID().String())
		assert.Equal(t, w.status, a["http.response.status_code"].AsInt64(), "span %d", i)
		assert.Equal(t, "default", a["latchkey.project"].AsString())
		assert.Equal(t, w.route, a["http.route"].AsString())
		assert.NotEqual(t, codes.Error, s.Status().Code, "a 4xx is the client's failure")
		for _, kv := range s.Attributes() {
			assert.NotContains(t, kv.Value.String(), token)
			assert.NotContains(t, kv.Value.String(), "garbage")
			assert.NotContains(t, kv.Value.String(), "limit=")
		}
	}
}

// TestHandler_spanUnderRecorder: under an outer httpapi.Recorder (the
// example server's access log), the span reads the status from it and
// both see the answer's status.
func TestHandler_spanUnderRecorder(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	lk := newLatchkey(t, openStore(t), &latchkey.Options{TracerProvider: tp})
	outer := httpapi.NewRecorder(httptest.NewRecorder())
	lk.Handler().ServeHTTP(outer, httptest.NewRequest("GET", "/v1/contacts", nil))
	assert.Equal(t, http.StatusUnauthorized, outer.Status())
	assert.NotZero(t, outer.Bytes())
	spans := serverSpans(rec.Ended())
	require.Len(t, spans, 1)
	assert.Equal(t, int64(http.StatusUnauthorized), attrs(spans[0])["http.response.status_code"].AsInt64())
}

// TestProtect_span checks that a host's route behind Protect is traced too.
func TestProtect_span(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	lk := newLatchkey(t, openStore(t), &latchkey.Options{TracerProvider: tp})
	var inner trace.SpanContext
	h := lk.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner = trace.SpanContextFromContext(r.Context())
		w.WriteHeader(http.StatusInternalServerError)
	}))
	_, token, err := lk.APIKeys().Create(context.Background(), "default", "svc")
	require.NoError(t, err)
	req := httptest.NewRequest("GET", "/hello", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	h.ServeHTTP(httptest.NewRecorder(), req)

	spans := serverSpans(rec.Ended())
	require.Len(t, spans, 1)
	assert.Equal(t, spans[0].SpanContext(), inner, "the host's handler runs in the request's span")
	assert.Equal(t, int64(500), attrs(spans[0])["http.response.status_code"].AsInt64())
	assert.Equal(t, codes.Error, spans[0].Status().Code, "a 5xx marks the span failed")
}

// TestHandler_storeSpans checks that the store calls of a traced request
// are spans of its trace, and that calls outside requests are not traced.
func TestHandler_storeSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	st := openStore(t)
	lk := newLatchkey(t, st, &latchkey.Options{TracerProvider: tp})
	assert.Same(t, st, lk.Store().(*store.Checked).Unwrap(), "Store returns the host's own store, checked")
	_, token, err := lk.APIKeys().Create(context.Background(), "default", "svc")
	require.NoError(t, err)
	require.Empty(t, rec.Ended(), "no request, no span")

	req := httptest.NewRequest("GET", "/v1/contacts?limit=2", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	lk.Handler().ServeHTTP(httptest.NewRecorder(), req)

	spans := rec.Ended()
	require.NotEmpty(t, spans)
	root := spans[len(spans)-1]
	require.Equal(t, "GET /v1/contacts", root.Name())
	var names []string
	for _, s := range spans[:len(spans)-1] {
		names = append(names, s.Name())
		assert.Equal(t, root.SpanContext().SpanID(), s.Parent().SpanID(), "%s is a child of the request's span", s.Name())
		assert.Equal(t, trace.SpanKindClient, s.SpanKind())
		if s.Name() == "store.ListContacts" {
			assert.Equal(t, "default", attrs(s)["latchkey.project"].AsString())
		}
	}
	assert.Contains(t, names, "store.ListContacts")
	assert.Contains(t, names, "store.GetAPIKey")
}

// TestContacts_oneStoreReadOnSQLite: on a SQLite file, an authenticated
// list whose token the verifier knows makes one store read, traced as such:
// the page with the change version (ListContactsVersioned), with the
// records the verifier keeps at that version. (The change signal itself is
// not traced; the keys package counts it.)
func TestContacts_oneStoreReadOnSQLite(t *testing.T) {
	st, err := sqlite.Open(context.Background(), sqlitetest.Path(t), &sqlite.Options{Logger: testLogger(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	lk := newLatchkey(t, st, &latchkey.Options{TracerProvider: tp})
	_, token, err := lk.APIKeys().Create(context.Background(), "default", "svc")
	require.NoError(t, err)
	get := func() []string {
		t.Helper()
		before := len(rec.Ended())
		req := httptest.NewRequest("GET", "/v1/contacts?limit=5", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		lk.Handler().ServeHTTP(w, req)
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		var names []string
		for _, s := range rec.Ended()[before:] {
			if s.SpanKind() == trace.SpanKindClient {
				names = append(names, s.Name())
			}
		}
		return names
	}
	for range 3 { // the first use reads the records, and may touch the key
		get()
	}
	assert.Equal(t, []string{"store.ListContactsVersioned"}, get())
}
