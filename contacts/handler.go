package contacts

import (
	"log/slog"
	"net/http"
	"strconv"
	"sync"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// Options configures the handler. A nil *Options and every zero field mean
// the documented default.
type Options struct {
	// Logger receives the causes of 500 answers. Nil means slog.Default().
	Logger *slog.Logger
}

// handler serves GET /v1/contacts.
type handler struct {
	contacts httpapi.ListFunc[store.Contact]
	logger   *slog.Logger
	bodies   sync.Pool // of *[]byte, response bodies for reuse
}

// NewHandler returns the handler of GET {base_url}/v1/contacts for the
// project in the request's context (package tenant), listing from st. The
// routing table mounts it (for GET and HEAD) behind the bearer middleware.
// It panics if st is nil.
func NewHandler(st store.ContactStore, opts *Options) http.Handler {
	if st == nil {
		panic("contacts: NewHandler with a nil store")
	}
	if opts == nil {
		opts = &Options{}
	}
	h := &handler{contacts: st.ListContacts, logger: opts.Logger}
	if h.logger == nil {
		h.logger = slog.Default()
	}
	return httpapi.Handle(h.logger, h.list)
}

// maxPooledBody is the largest buffer put back into the handler's pool; a
// larger one (a page of long names) is left to the garbage collector, so
// the pool does not keep rare large buffers alive.
const maxPooledBody = 64 << 10

// getBody returns an empty buffer for a response body.
func (h *handler) getBody() *[]byte {
	if b, ok := h.bodies.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, 4<<10)
	return &b
}

// putBody gives b back for reuse unless it grew over maxPooledBody.
func (h *handler) putBody(b *[]byte) {
	if cap(*b) <= maxPooledBody {
		h.bodies.Put(b)
	}
}

// list answers one page of the project's contacts.
func (h *handler) list(w http.ResponseWriter, r *http.Request) error {
	page, req, err := httpapi.ReadList(r, h.contacts)
	if err != nil {
		return err
	}
	resp := paginate.ResponseOf(page, req, cursorOf)
	// The body is encoded into a pooled buffer: Write does not keep it (as
	// io.Writer promises), so it is reused once written.
	buf := h.getBody()
	defer h.putBody(buf)
	body := appendResponse((*buf)[:0], resp)
	*buf = body
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
	return nil
}

// cursorOf is the position of c in the list.
func cursorOf(c store.Contact) paginate.Cursor {
	return paginate.Cursor{ID: c.ID, CreatedAt: c.CreatedAt}
}
