package openapitest

import (
	"bytes"
	"io"
	"net/http"
)

// Handler returns next with every exchange checked: it reads the request's
// body first (next reads it as sent), records the answer while next writes
// it, and once next returns fails the test (t.Errorf) when the document
// does not allow the exchange. Use it around the handler that an
// httptest.ResponseRecorder drives, or that an httptest.Server serves to
// clients the test cannot wrap with Transport.
func (v *Validator) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var reqBody []byte
		if r.Body != nil {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				v.t.Errorf("openapi: reading the request body of %s %s: %v", r.Method, r.URL.Path, err)
				return
			}
			reqBody = b
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.header == nil { // nothing written: net/http answers 200
			rec.WriteHeader(http.StatusOK)
		}
		v.report(r.Context(), Exchange{
			Request: r, RequestBody: reqBody, Status: rec.status, Header: rec.header, Body: rec.body.Bytes(),
		})
	})
}

// recorder passes a response on to its ResponseWriter and keeps a copy:
// the status and headers as they were sent, and the body.
type recorder struct {
	http.ResponseWriter
	status int
	header http.Header // nil until the headers are sent
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(status int) {
	if r.header == nil {
		r.status = status
		r.header = r.ResponseWriter.Header().Clone()
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.header == nil {
		r.WriteHeader(http.StatusOK)
	}
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the ResponseWriter (deadlines,
// flushing).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Flush flushes the ResponseWriter if it can.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
