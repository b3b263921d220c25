package openapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/latchkey-dev/latchkey/openapi"
	"github.com/latchkey-dev/latchkey/tenant"
)

// BenchmarkNewHandler_serve measures one GET of the document.
func BenchmarkNewHandler_serve(b *testing.B) {
	h := openapi.NewHandler(nil, nil)
	req := httptest.NewRequest(http.MethodGet, "/openapi.json", nil)
	req = req.WithContext(tenant.NewContext(req.Context(), "acme"))
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}
