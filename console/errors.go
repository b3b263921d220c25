package console

import (
	"errors"
	"net/http"

	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/tenant"
)

// errNoProject means the console was mounted without a handler that puts
// the project in the request's context.
var errNoProject = errors.New("console: no project in the request context (mount the console behind tenant.NewContext)")

// errorData is the error page's data.
type errorData struct {
	Status   int
	Message  string
	Link     string
	LinkText string
}

// errorPage renders a page explaining status, with a link back to the
// console.
func (h *Handler) errorPage(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	h.errorPageLink(w, r, status, title, message, "keys", "Back to the console")
}

// errorPageLink renders a page explaining status, with a link to the
// console's page link.
func (h *Handler) errorPageLink(w http.ResponseWriter, r *http.Request, status int, title, message, link, linkText string) {
	project, _ := tenant.FromContext(r.Context())
	h.render(w, r, status, pageError, view{
		Title:   title,
		Project: project,
		Data:    errorData{Status: status, Message: message, Link: link, LinkText: linkText},
	})
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.errorPage(w, r, http.StatusNotFound, "Page not found", "There is no such page in the console.")
}

// fail logs err and answers a generic 500 page, or 503 when the store is
// unavailable (store.ErrUnavailable) or did not answer within the
// request's deadline (problem.StoreTimedOut).
// A client that disconnected (problem.ClientGone) is logged at Debug level
// only: it is not a fault of the server.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if problem.ClientGone(r.Context(), err) {
		h.log.DebugContext(r.Context(), "console: client disconnected", "path", r.URL.Path, "err", err)
	} else {
		h.log.ErrorContext(r.Context(), "console: internal error", "path", r.URL.Path, "err", err)
	}
	if errors.Is(err, store.ErrUnavailable) || problem.StoreTimedOut(r.Context()) {
		w.Header().Set("Retry-After", "5")
		h.errorPage(w, r, http.StatusServiceUnavailable, "Temporarily unavailable",
			"The console cannot reach its database right now. Try again in a few seconds, and reload the page first to see whether your last change was made.")
		return
	}
	h.errorPage(w, r, http.StatusInternalServerError, "Something went wrong",
		"The console could not complete the request. Try again; if it keeps failing, the server's log says why.")
}

// badForm answers a form body that could not be read (too large or
// malformed).
func (h *Handler) badForm(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusBadRequest
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		status = http.StatusRequestEntityTooLarge
	}
	h.errorPage(w, r, status, "Unreadable form", "The console could not read the submitted form.")
}

// badFormToken answers a state-changing request without the session's form
// token: it was not sent by a console page of this session.
func (h *Handler) badFormToken(c *call) {
	h.log.InfoContext(c.r.Context(), "console: form token missing or wrong", "project", c.project, "path", c.r.URL.Path)
	h.errorPage(c.w, c.r, http.StatusForbidden, "Request refused",
		"This form was not sent from a console page of your current session, so nothing was changed. Go back to the console, reload the page and try again.")
}

// crossOriginDenied answers a request http.CrossOriginProtection refused.
func (h *Handler) crossOriginDenied(w http.ResponseWriter, r *http.Request) {
	h.log.InfoContext(r.Context(), "console: cross-origin request refused", "path", r.URL.Path)
	h.errorPage(w, r, http.StatusForbidden, "Request refused",
		"This request came from another site, so nothing was changed.")
}
