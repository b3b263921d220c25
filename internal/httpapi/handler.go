package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/latchkey-dev/latchkey/problem"
)

// HandlerFunc is an HTTP handler that returns its error instead of writing
// it. It must not write a response when it returns a non-nil error.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Handle adapts fn to an http.Handler that writes fn's error with problem.Write
// on logger (nil means slog.Default()).
func Handle(logger *slog.Logger, fn HandlerFunc) http.Handler {
	if logger == nil {
		logger = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			problem.Write(w, r, logger, err)
		}
	})
}

// WriteJSON writes v as a JSON response with the given status. Responses are
// never cached, since they carry tokens or per-user data.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	body = append(body, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, err = w.Write(body)
	return err
}
