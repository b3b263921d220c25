package requestid

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValid(t *testing.T) {
	for id, want := range map[string]bool{
		"abc":                         true,
		"A-b_c.9":                     true,
		strings.Repeat("x", MaxLen):   true,
		"":                            false,
		strings.Repeat("x", MaxLen+1): false,
		"a b":                         false,
		"a\nb":                        false,
		"a\"b":                        false,
		"a/b":                         false,
		"é":                           false,
	} {
		assert.Equal(t, want, Valid(id), "Valid(%q)", id)
	}
}

func TestNew_IsValidAndFresh(t *testing.T) {
	a, b := New(), New()
	assert.True(t, Valid(a), a)
	assert.NotEqual(t, a, b)
}

// serve runs Middleware over a request with the given X-Request-Id values,
// and returns the response header and the id next saw in its context.
func serve(t *testing.T, header ...string) (string, string) {
	t.Helper()
	var seen string
	h := Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = FromContext(r.Context())
	}))
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	for _, v := range header {
		req.Header.Add(Header, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Header().Get(Header), seen
}

func TestMiddleware(t *testing.T) {
	got, seen := serve(t, "client-id_1.2")
	assert.Equal(t, "client-id_1.2", got, "a safe incoming id is kept")
	assert.Equal(t, got, seen)

	for name, header := range map[string][]string{
		"none":      nil,
		"empty":     {""},
		"too long":  {strings.Repeat("a", MaxLen+1)},
		"unsafe":    {"<script>"},
		"two":       {"a", "b"},
		"with json": {`x","y":"`},
	} {
		t.Run(name, func(t *testing.T) {
			got, seen := serve(t, header...)
			require.True(t, Valid(got), "a new valid id, got %q", got)
			assert.Equal(t, got, seen)
			for _, h := range header {
				assert.NotEqual(t, h, got)
			}
		})
	}
}

func TestMiddleware_KeepsAnOuterID(t *testing.T) {
	var seen string
	inner := Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = FromContext(r.Context())
	}))
	rec := httptest.NewRecorder()
	Middleware(inner).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, rec.Header().Get(Header), seen)
	assert.Len(t, rec.Header().Values(Header), 1)
}

func TestHeader_isCanonical(t *testing.T) {
	assert.Equal(t, http.CanonicalHeaderKey(Header), Header, "Start sets the header map's entry directly")
}
