package main

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/store"
)

// Health check timing.
const (
	// healthTTL is how long an answer of the store's check is reused: a
	// load balancer polling /healthz often costs the database at most one
	// check per healthTTL.
	healthTTL = time.Second
	// healthTimeout bounds one check of the store.
	healthTimeout = 2 * time.Second
)

// healthHandler answers GET /healthz with 200 {"status":"ok"} when the store
// can take a write now, else 503 {"status":"unavailable"} with Retry-After
// (as every 503 of the server), and nothing
// more: no token is needed and nothing about the store is revealed. A
// store that implements store.WritableChecker (PostgreSQL: a primary whose
// sessions are not read-only; SQLite: the write lock can be taken) is asked
// that; another is asked for the default project, a read. The answer is
// reused for at most healthTTL.
func healthHandler(inst *instance, logger *slog.Logger) http.Handler {
	check := func(ctx context.Context) error {
		_, err := inst.st.GetProject(ctx, store.DefaultProject)
		return err
	}
	if wc, ok := store.As[store.WritableChecker](inst.st); ok {
		check = wc.CheckWritable
	}
	h := &health{check: check, log: logger, now: time.Now}
	return httpapi.Handle(logger, func(w http.ResponseWriter, r *http.Request) error {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			problem.MethodNotAllowed(w, r, "GET, HEAD")
			return nil
		}
		w.Header().Set("Cache-Control", "no-store")
		if !h.ok(r.Context()) {
			// As every 503 of the server: when to try again.
			w.Header().Set("Retry-After", strconv.Itoa(problem.RetryAfterUnavailable))
			return httpapi.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
		}
		return httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

// health runs the store's check and keeps its answer for healthTTL. One
// check runs at a time; callers that arrive meanwhile wait for it and take
// its answer.
type health struct {
	check func(context.Context) error
	log   *slog.Logger
	now   func() time.Time

	mu     sync.Mutex
	at     time.Time // when the answer was made; zero: none yet
	answer bool
	failed bool // the last answer logged was a failure
}

// ok returns whether the store can take a write, checking it unless an
// answer younger than healthTTL is kept. The check does not end with the
// request that starts it (its answer serves the requests after it), and
// is bounded by healthTimeout.
func (h *health) ok(ctx context.Context) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.at.IsZero() && h.now().Sub(h.at) < healthTTL {
		return h.answer
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), healthTimeout)
	defer cancel()
	err := h.check(cctx)
	h.at, h.answer = h.now(), err == nil
	switch {
	case err != nil && !h.failed:
		h.failed = true
		h.log.WarnContext(ctx, "health check: the store cannot take writes; /healthz answers 503", "err", err)
	case err == nil && h.failed:
		h.failed = false
		h.log.InfoContext(ctx, "health check: the store takes writes again; /healthz answers 200")
	}
	return h.answer
}
