package latchkey

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/requestid"
	"github.com/latchkey-dev/latchkey/revocations"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/tenant"
)

// Handler returns the handler of the whole API, for a host to mount at the
// root of its server (or under a prefix it strips). For each request it
// names the project with Options.Resolver, checks that the project exists,
// puts it in the request's context (tenant.NewContext) and serves the
// routing table of routes.go (listed in the package documentation, which a
// test checks against the table): the /v1 API, the public documents and
// the console's pages.
//
// A project the resolver cannot name (tenant.ErrUnknownProject) or that
// does not exist is 404 not_found; another path is 404 not_found and
// another method 405 method_not_allowed with Allow, all as problem+json
// (under /console/, as the console's HTML pages).
//
// Every response carries an X-Request-Id header: the request's own when it
// is a short token of safe characters (requestid.Valid), else a new random
// one, or the id an outer requestid.Middleware put in the request's context.
// Handlers find it with requestid.FromContext, and every problem+json body
// carries it as request_id.
//
// With Options.CORSOrigins, the /v1 paths of the table (corsPrefix) answer
// browser pages of the listed origins: see [Latchkey.withCORS].
//
// Each request is traced as a server span of Options.TracerProvider, a
// child of the trace context Options.Propagator reads from its headers,
// named by its method and route ("GET /v1/contacts"), with the attributes
// http.request.method, http.route, http.response.status_code and
// latchkey.project: never a token, an email, a password or a query.
func (l *Latchkey) Handler() http.Handler {
	return l.withCORS(l.entry(true, func(w http.ResponseWriter, r *http.Request, span trace.Span) {
		if p := r.URL.Path; path.Clean(p) != p && path.Clean(p)+"/" != p {
			// The mux would redirect to the cleaned path, which may lack
			// the prefix of the base_url; no client of this API sends
			// such paths.
			problem.NotFound().ServeHTTP(w, r)
			return
		}
		h, pattern := l.mux.Handler(r)
		if pattern == "" {
			if methods, ok := l.preflight(r); ok {
				if span.IsRecording() {
					nameSpan(span, r.Method, r.Method+" "+r.URL.Path)
				}
				httpapi.AnswerPreflight(w, methods)
				return
			}
			l.noRoute(w, r)
			return
		}
		if span.IsRecording() {
			nameSpan(span, r.Method, pattern)
		}
		h.ServeHTTP(w, r)
	}))
}

// withCORS returns h, the handler of the routing table, with the CORS
// headers of Options.CORSOrigins (none without them): every answer of a
// path of the table under corsPrefix carries Vary: Origin, and, to a
// request from a listed origin, Access-Control-Allow-Origin with that
// origin (never *) and Access-Control-Expose-Headers, whatever answers it
// (the endpoint, the verifier's 401, a 404 for an unknown project, a 405, a
// 5xx). The preflights of such requests are answered by the table's
// handler (preflight). Requests from other origins, and other paths,
// reach h untouched.
func (l *Latchkey) withCORS(h http.Handler) http.Handler {
	if l.cors == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := l.corsMethods(r.URL.Path); ok {
			w.Header().Add("Vary", "Origin")
			if origin, ok := l.cors.Origin(r); ok {
				httpapi.AllowOrigin(w.Header(), origin)
			}
		}
		h.ServeHTTP(w, r)
	})
}

// corsMethods returns the methods the routing table serves at path when
// path is one browser pages of the listed origins may call (under
// corsPrefix), and false otherwise.
func (l *Latchkey) corsMethods(path string) (string, bool) {
	if !strings.HasPrefix(path, corsPrefix) {
		return "", false
	}
	methods, ok := l.allow[path]
	return methods, ok
}

// preflight returns the methods to answer r with when r is a CORS preflight
// (OPTIONS with Access-Control-Request-Method) from a listed origin to a
// path of corsMethods; false for any other request, which the table
// answers as usual (an OPTIONS from another origin: 405).
func (l *Latchkey) preflight(r *http.Request) (string, bool) {
	if l.cors == nil || !httpapi.IsPreflight(r) {
		return "", false
	}
	if _, ok := l.cors.Origin(r); !ok {
		return "", false
	}
	return l.corsMethods(r.URL.Path)
}

// Protect returns next behind Latchkey's bearer-token check, for a host's
// own routes: the request's project is named by Options.Resolver and must
// exist, and the request must bear a token of that project that the
// Verifier accepts. next finds the project with tenant.FromContext and the
// token's principal with keys.PrincipalFromContext. Refusals are answered
// as the API answers them (401 invalid_token with WWW-Authenticate, 404
// for an unknown project, as problem+json), and every response carries an
// X-Request-Id as under [Latchkey.Handler]. A host's handler answers its own
// errors the same way with package problem.
func (l *Latchkey) Protect(next http.Handler) http.Handler {
	guarded := l.verifier.Middleware(next)
	return l.entry(false, func(w http.ResponseWriter, r *http.Request, _ trace.Span) {
		guarded.ServeHTTP(w, r)
	})
}

// listAuth returns next, the list of contacts' handler, behind the bearer
// check of its checked list (internal/checkedlist): the token's records
// are checked with the page when the store reads them together, else
// before next runs.
func (l *Latchkey) listAuth(next http.Handler) http.Handler {
	return l.contactList.Middleware(next)
}

// entry returns the handler every request to Latchkey enters by: it starts
// the request's span (reporting its status when the span records), gives
// the request its id and project (begin), and calls serve with the request
// carrying them and the span; a request whose project cannot be named is
// answered without calling serve. When bounded, the request's context
// carries the deadline of its store work (storeDeadline) from the start,
// so that the project's lookup is within it too.
func (l *Latchkey) entry(bounded bool, serve func(w http.ResponseWriter, r *http.Request, span trace.Span)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, span := l.startSpan(r)
		defer span.End()
		if bounded && l.storeTimeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeoutCause(ctx, l.storeTimeout+longPoll(r), errStoreTimeout)
			defer cancel()
		}
		if span.IsRecording() {
			// An outer recorder (an access log's) already sees this
			// response: read the status from it rather than wrap again.
			rec, ok := w.(*httpapi.Recorder)
			if !ok {
				rec = httpapi.NewRecorder(w)
				w = rec
			}
			defer reportStatus(span, rec)
		}
		ctx, ok := l.begin(ctx, w, r)
		if !ok {
			return
		}
		serve(w, r.WithContext(ctx), span)
	})
}

// errStoreTimeout is the cause of a request's context whose store work
// passed Options.StoreTimeout: it matches store.ErrUnavailable, so that
// problem.Write answers 503 unavailable (problem.StoreTimedOut) whatever
// error the interrupted store call returned.
var errStoreTimeout = fmt.Errorf("latchkey: the request's store work took longer than its StoreTimeout: %w", store.ErrUnavailable)

// longPoll returns how long r, a long poll of the revocation feed, may be
// held waiting for an item (its wait parameter), which is not store work;
// zero for any other request.
func longPoll(r *http.Request) time.Duration {
	if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, PathRevocations) {
		return 0
	}
	return revocations.RequestedWait(r.URL.RawQuery)
}

// begin starts serving r: it gives r its request id (requestid.Of), sets it
// on the response, and returns ctx (r's context, with its span) with the id
// and the request's project (tenant.NewContext). When the project cannot be
// named or does not exist, it answers the request and returns false.
func (l *Latchkey) begin(ctx context.Context, w http.ResponseWriter, r *http.Request) (context.Context, bool) {
	ctx = requestid.Start(ctx, w, r)
	project, err := l.project(ctx, r)
	if err != nil {
		problem.Write(w, r.WithContext(ctx), l.logger, err)
		return nil, false
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(attribute.String(attrProject, project))
	}
	return tenant.NewContext(ctx, project), true
}

// project returns the request's project: named by the resolver, and
// existing. Otherwise it returns the answer (a 404 *problem.Error) or the
// store's error.
func (l *Latchkey) project(ctx context.Context, r *http.Request) (string, error) {
	project, err := l.resolver(r)
	switch {
	case errors.Is(err, tenant.ErrUnknownProject):
		return "", errNoSuchProject()
	case err != nil:
		return "", fmt.Errorf("latchkey: resolving the project: %w", err)
	}
	if err := l.projectExists(ctx, project); err != nil {
		return "", err
	}
	return project, nil
}

// errNoSuchProject is the answer for a project that does not exist.
func errNoSuchProject() error { return problem.New(problem.CodeNotFound, "No such project.") }

// projectExists returns nil if project exists, the 404 answer if it does
// not, or the store's error. Only positive answers are cached (projects are
// never deleted), so a project created by another process is served from
// its first request.
func (l *Latchkey) projectExists(ctx context.Context, project string) error {
	if _, ok := l.projects.Load(project); ok {
		return nil
	}
	if !store.ValidProjectID(project) {
		return errNoSuchProject()
	}
	_, err := l.st.GetProject(ctx, project)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errNoSuchProject()
	case err != nil:
		return fmt.Errorf("latchkey: looking up project: %w", err)
	}
	l.projects.Store(project, struct{}{})
	return nil
}
