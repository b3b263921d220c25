package httpapi

import "net/http"

// Recorder passes a response through to the ResponseWriter it wraps and
// records its status and the number of body bytes written, for an access
// log line or a request's span. http.ResponseController reaches the
// wrapped writer through Unwrap (the revocation feed's long polls extend
// their write deadline that way).
type Recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

// NewRecorder returns a Recorder of the response written to w.
func NewRecorder(w http.ResponseWriter) *Recorder { return &Recorder{ResponseWriter: w} }

// WriteHeader records the first status written and passes code on.
func (r *Recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write passes b on, counting the bytes written; a write before any
// status is a 200, as net/http sends it.
func (r *Recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap returns the wrapped ResponseWriter.
func (r *Recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Status returns the status of the response: the first one written, or
// 200 when the handler wrote none (net/http then sends 200).
func (r *Recorder) Status() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

// Bytes returns the number of body bytes written.
func (r *Recorder) Bytes() int64 { return r.bytes }
