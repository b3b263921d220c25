package latchkey_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/requestid"
)

// serveWithID sends a GET to h with the given X-Request-Id (none when "")
// and bearer token (none when ""), and returns the answer.
func serveWithID(h http.Handler, path, id, token string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if id != "" {
		req.Header.Set(requestid.Header, id)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// requestIDOf returns the request_id of a problem body.
func requestIDOf(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	require.Equal(t, problem.ContentType, rec.Header().Get("Content-Type"), rec.Body.String())
	var p problem.Body
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
	return p.RequestID
}

func TestHandler_requestID(t *testing.T) {
	lk := newLatchkey(t, openStore(t), nil)
	h := lk.Handler()

	rec := serveWithID(h, "/v1/contacts", "from-the-client", "")
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.Equal(t, "from-the-client", rec.Header().Get(requestid.Header))
	assert.Equal(t, "from-the-client", requestIDOf(t, rec))

	for _, id := range []string{"", "has space", "<b>"} {
		rec := serveWithID(h, "/nowhere", id, "")
		got := rec.Header().Get(requestid.Header)
		assert.True(t, requestid.Valid(got), "a new id for %q, got %q", id, got)
		assert.NotEqual(t, id, got)
		assert.Equal(t, got, requestIDOf(t, rec))
	}

	a := serveWithID(h, "/.well-known/jwks.json", "", "").Header().Get(requestid.Header)
	b := serveWithID(h, "/.well-known/jwks.json", "", "").Header().Get(requestid.Header)
	assert.NotEqual(t, a, b, "each request its own id")

	// An outer requestid.Middleware (a host's access log) names the id.
	var outer string
	logged := requestid.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		outer = requestid.FromContext(r.Context())
		h.ServeHTTP(w, r)
	}))
	rec = serveWithID(logged, "/v1/contacts", "", "")
	assert.Equal(t, []string{outer}, rec.Header().Values(requestid.Header))
	assert.Equal(t, outer, requestIDOf(t, rec))
}

// TestProtect_hostRouteAnswersAsLatchkey checks that a host's route behind
// Protect gets the request id, and answers its own errors with package
// problem in Latchkey's shape.
func TestProtect_hostRouteAnswersAsLatchkey(t *testing.T) {
	lk := newLatchkey(t, openStore(t), nil)
	_, token, err := lk.APIKeys().Create(context.Background(), "default", "host")
	require.NoError(t, err)
	var seen string
	h := lk.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = requestid.FromContext(r.Context())
		p, _ := keys.PrincipalFromContext(r.Context())
		problem.Write(w, r, nil, problem.Errorf(problem.CodeForbidden, "Not for %s.", p.Kind))
	}))

	rec := serveWithID(h, "/hello", "host-1", "")
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.Equal(t, "Bearer", rec.Header().Get("WWW-Authenticate"))
	assert.Equal(t, "host-1", requestIDOf(t, rec))
	assert.Empty(t, seen, "refused before the host's handler")

	rec = serveWithID(h, "/hello", "", token)
	assert.Equal(t, http.StatusForbidden, rec.Code)
	id := rec.Header().Get(requestid.Header)
	assert.True(t, requestid.Valid(id))
	assert.Equal(t, id, seen)
	assert.Equal(t, id, requestIDOf(t, rec))
}
