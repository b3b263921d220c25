package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A Recorder passes the response through and reports the status net/http
// sends (the first one written, 200 when none was) and the body's size.
func TestRecorder(t *testing.T) {
	rec := httptest.NewRecorder()
	r := NewRecorder(rec)
	assert.Equal(t, http.StatusOK, r.Status(), "nothing written yet: net/http would send 200")
	r.WriteHeader(http.StatusTeapot)
	r.WriteHeader(http.StatusInternalServerError) // net/http ignores a second status
	_, _ = r.Write([]byte("hello"))
	_, _ = r.Write([]byte(", world"))
	assert.Equal(t, http.StatusTeapot, r.Status())
	assert.EqualValues(t, 12, r.Bytes())
	assert.Equal(t, "hello, world", rec.Body.String())
	assert.Same(t, rec, r.Unwrap())

	implicit := NewRecorder(httptest.NewRecorder())
	_, _ = implicit.Write([]byte("x"))
	assert.Equal(t, http.StatusOK, implicit.Status(), "a write before any status is a 200")
}
