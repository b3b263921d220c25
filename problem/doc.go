// Package problem writes Latchkey's error answers: RFC 9457
// application/problem+json bodies with the stable error codes of the wire
// contract. Latchkey's own handlers answer through it, and a host's routes
// behind Latchkey's middleware can answer errors the same way.
//
// An [Error] carries what the client is told (a code, whose HTTP status it
// fixes, a client-safe detail and extra headers) and, apart, what only the
// log sees (its cause). [Write] alone decides the answer to any error: an
// error matching store.ErrUnavailable becomes 503 unavailable with
// Retry-After, an *Error is written as it says, and anything else becomes a
// generic 500 internal whose cause is logged and never shown. Every body
// carries the request's id (package requestid) as request_id when the
// request has one.
//
//	func hello(w http.ResponseWriter, r *http.Request) {
//		if r.URL.Query().Get("name") == "" {
//			problem.Write(w, r, nil, problem.New(problem.CodeInvalidParameter, "The name parameter is required."))
//			return
//		}
//		...
//	}
package problem
