// Package revocations serves a project's revocation feed: what stopped being
// valid (API keys revoked, signing keys retired, sessions ended, users
// disabled), oldest first, so that a team's other services can refuse those
// tokens without asking Latchkey about each one.
//
// The feed is a list endpoint with the list rules of every other (package
// paginate: limit, cursor, data, pagination), plus a long poll: with
// wait=N (1 to 60 seconds), a request whose page would be empty is held
// until the first new item or N seconds, then answered; at most
// Options.MaxWaitsPerKey such requests are held at once per API key, and
// one beyond is answered at once. Items are kept in
// the store, so a reader that reconnects with its last cursor misses
// nothing, whichever instance or process made the revocation.
//
// The old key of a roll is listed when its overlap ends, with that time as
// revoked_at, never before: a long poll wakes at that time.
package revocations

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/store"
)

// MaxWait is the longest long poll, in seconds.
const MaxWait = 60

// DefaultMaxWaitsPerKey is Options.MaxWaitsPerKey when it is zero.
const DefaultMaxWaitsPerKey = 32

// RetryAfterCapped is the Retry-After, in seconds, of the page answered at
// once to a long poll over Options.MaxWaitsPerKey: when the caller should
// ask again.
const RetryAfterCapped = 1

// DefaultPollInterval is how often a waiting request reads the feed again
// when the store offers no store.RevocationWatcher.
const DefaultPollInterval = 200 * time.Millisecond

// Options tunes a Feed. A nil *Options and every zero field mean the
// documented default.
type Options struct {
	// Logger receives the causes of 5xx answers. Nil means slog.Default().
	Logger *slog.Logger
	// PollInterval is how often a waiting request reads the feed again
	// when the store is not a store.RevocationWatcher. Zero means
	// DefaultPollInterval.
	PollInterval time.Duration
	// MaxWaitsPerKey bounds the long polls held at once per API key (the
	// principal of the request, package keys; per project for a request
	// without one): a long poll beyond it is answered at once with the
	// page it would start from (empty, at the end of the feed) and
	// Retry-After: RetryAfterCapped, rather than held. The requests held
	// are thus at most MaxWaitsPerKey times the project's API keys. Zero
	// means DefaultMaxWaitsPerKey.
	MaxWaitsPerKey int
}

// Feed is the handler of GET {base_url}/v1/identity/revocations for the
// project in the request's context (package tenant). It expects its caller
// to be authenticated already (the routing table puts it behind
// keys.Verifier.APIKeyOnly). It is safe for concurrent use.
type Feed struct {
	st      store.RevocationStore
	watcher store.RevocationWatcher // nil: poll
	poll    time.Duration
	logger  *slog.Logger
	serve   http.Handler

	maxWaits int
	waitsMu  sync.Mutex
	waits    map[string]int // long polls held, by project and API key

	stopOnce sync.Once
	stopped  chan struct{}
}

// NewFeed returns the feed of st. If st is a store.RevocationWatcher, or
// wraps one (store.As), a waiting request wakes when a revocation commits;
// otherwise it reads the feed again every PollInterval. It panics if st is
// nil.
func NewFeed(st store.RevocationStore, opts *Options) *Feed {
	if st == nil {
		panic("revocations: NewFeed with a nil store")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.MaxWaitsPerKey <= 0 {
		o.MaxWaitsPerKey = DefaultMaxWaitsPerKey
	}
	f := &Feed{st: st, poll: o.PollInterval, logger: o.Logger, stopped: make(chan struct{}),
		maxWaits: o.MaxWaitsPerKey, waits: make(map[string]int)}
	f.watcher, _ = store.As[store.RevocationWatcher](st)
	f.serve = httpapi.Handle(o.Logger, f.list)
	return f
}

// ServeHTTP answers one page of the feed.
func (f *Feed) ServeHTTP(w http.ResponseWriter, r *http.Request) { f.serve.ServeHTTP(w, r) }

// Stop makes every waiting request answer at once with what it has, and
// later ones not wait: call it when the server shuts down, so that long
// polls do not hold the shutdown.
func (f *Feed) Stop() { f.stopOnce.Do(func() { close(f.stopped) }) }

// item is a revocation as the feed shows it.
type item struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Subject   string `json:"subject"`
	RevokedAt string `json:"revoked_at"`
}

func viewOf(rv store.Revocation) item {
	return item{ID: rv.ID, Kind: string(rv.Kind), Subject: rv.Subject, RevokedAt: rv.RevokedAt.UTC().Format(paginate.TimeLayout)}
}

func cursorOf(rv store.Revocation) paginate.Cursor {
	return paginate.Cursor{ID: rv.ID, CreatedAt: rv.RevokedAt}
}

// list answers one page of the feed, held up to the request's wait while
// it is empty (read).
func (f *Feed) list(w http.ResponseWriter, r *http.Request) error {
	page, req, err := httpapi.ReadList(r, func(ctx context.Context, project string, req paginate.Request) (paginate.Page[store.Revocation], error) {
		wait, err := parseWait(r.URL.RawQuery)
		if err != nil {
			return paginate.Page[store.Revocation]{}, err
		}
		return f.read(ctx, w, project, req, wait)
	})
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, paginate.NewResponse(page, req, viewOf, cursorOf))
}

// read returns the page req asks for; if it is empty and wait is positive,
// it waits up to wait for an item and reads again.
func (f *Feed) read(ctx context.Context, w http.ResponseWriter, project string, req paginate.Request, wait time.Duration) (paginate.Page[store.Revocation], error) {
	if wait <= 0 {
		return f.st.ListRevocations(ctx, project, req)
	}
	release, ok := f.holdWait(ctx, project)
	if !ok {
		page, err := f.st.ListRevocations(ctx, project, req)
		if err == nil && len(page.Items) == 0 {
			w.Header().Set("Retry-After", strconv.Itoa(RetryAfterCapped))
		}
		return page, err
	}
	defer release()
	// The server's write timeout is meant for answers that do not wait;
	// a server whose writer cannot extend it keeps its own.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(wait + writeMargin))
	deadline := time.Now().Add(wait)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for {
		// Watch before reading, so that a revocation committed after the
		// read wakes the wait.
		woke := f.wake(wctx)
		page, err := f.st.ListRevocations(ctx, project, req)
		if err != nil || len(page.Items) > 0 || !time.Now().Before(deadline) {
			return page, err
		}
		// A scheduled revocation (a roll's overlap, a session's end)
		// commits nothing when it falls due, so no watcher wakes: wake
		// at its time, and the next read lists it.
		due, err := f.dueTimer(ctx, project, deadline)
		if err != nil {
			return page, err
		}
		select {
		case <-woke:
		case <-due:
		case <-timer.C:
			return f.st.ListRevocations(ctx, project, req)
		case <-f.stopped:
			return page, nil
		case <-ctx.Done():
			return page, ctx.Err()
		}
	}
}

// holdWait counts one more long poll held for the request's API key in
// project, and returns the function that counts it out; or false, when the
// key already holds MaxWaitsPerKey.
func (f *Feed) holdWait(ctx context.Context, project string) (release func(), ok bool) {
	key := project + "/"
	if p, ok := keys.PrincipalFromContext(ctx); ok {
		key += p.Subject
	}
	f.waitsMu.Lock()
	defer f.waitsMu.Unlock()
	if f.waits[key] >= f.maxWaits {
		return nil, false
	}
	f.waits[key]++
	return func() {
		f.waitsMu.Lock()
		defer f.waitsMu.Unlock()
		if f.waits[key]--; f.waits[key] == 0 {
			delete(f.waits, key)
		}
	}, true
}

// dueTimer returns a channel that receives when the project's next
// scheduled revocation falls due, if that is before deadline; otherwise a
// nil channel, which never receives.
func (f *Feed) dueTimer(ctx context.Context, project string, deadline time.Time) (<-chan time.Time, error) {
	next, err := f.st.NextScheduledRevocation(ctx, project)
	if err != nil || next.IsZero() || !next.Before(deadline) {
		return nil, err
	}
	// A millisecond past it, so that the clock the store lists by has
	// reached it.
	t := time.NewTimer(time.Until(next) + time.Millisecond)
	context.AfterFunc(ctx, func() { t.Stop() })
	return t.C, nil
}

// wake returns a channel closed when the feed may have a new item.
func (f *Feed) wake(ctx context.Context) <-chan struct{} {
	if f.watcher != nil {
		return f.watcher.WatchRevocations(ctx)
	}
	ch := make(chan struct{})
	t := time.AfterFunc(f.poll, func() { close(ch) })
	context.AfterFunc(ctx, func() { t.Stop() })
	return ch
}

// writeMargin is how long past its wait a long poll may take to write its
// answer.
const writeMargin = 10 * time.Second

// RequestedWait returns the wait a request with the query rawQuery asks the
// feed for: how long it may be held when its page is empty. It is zero
// when the request asks none, or asks it wrongly (the feed answers such a
// request 400 at once).
func RequestedWait(rawQuery string) time.Duration {
	wait, err := parseWait(rawQuery)
	if err != nil {
		return 0
	}
	return wait
}

// parseWait reads the wait parameter of rawQuery, as url.ParseQuery reads
// parameters: absent means no wait; otherwise it must be given once, as a
// decimal integer from 1 to MaxWait.
func parseWait(rawQuery string) (time.Duration, error) {
	var vals []string
	for pair := range strings.SplitSeq(rawQuery, "&") {
		k, v, _ := strings.Cut(pair, "=")
		if key, err := url.QueryUnescape(k); err != nil || key != "wait" {
			continue
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			return 0, errBadWait()
		}
		vals = append(vals, val)
	}
	switch len(vals) {
	case 0:
		return 0, nil
	case 1:
	default:
		return 0, errBadWait()
	}
	s := vals[0]
	if s == "" || len(s) > 9 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, errBadWait()
	}
	n, _ := strconv.Atoi(s)
	if n < 1 || n > MaxWait {
		return 0, errBadWait()
	}
	return time.Duration(n) * time.Second, nil
}

func errBadWait() error {
	return problem.Errorf(problem.CodeInvalidParameter,
		"The wait parameter must be given once, as an integer from 1 to %d (seconds).", MaxWait)
}
