package httpapi

import "net/http"

// AllowAnyOrigin returns next with the CORS header that lets a page of any
// origin read the response (Access-Control-Allow-Origin: *). It suits public
// documents only: the discovery document and the key set, which carry no
// secret and need no credentials.
func AllowAnyOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		next.ServeHTTP(w, r)
	})
}

// Preflight answers a CORS preflight (OPTIONS) for a public document that
// may be read with the given methods from any origin: 204 with
// Access-Control-Allow-Origin: *, the methods, any request headers, and a
// max-age of a day. An OPTIONS request that is not a preflight gets the same
// answer, with Allow.
func Preflight(methods string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Allow", methods)
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Methods", methods)
		if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
			h.Set("Access-Control-Allow-Headers", req)
		}
		h.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
	})
}
