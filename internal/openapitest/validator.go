// Package openapitest checks HTTP exchanges against Latchkey's OpenAPI
// document (package openapi), for Latchkey's own tests only: no production
// code imports it.
//
// A [Validator] fails its test on any request or answer the document does
// not allow. Tests route their traffic through it with [Validator.Handler]
// (around the handler an httptest.ResponseRecorder drives) or
// [Validator.Transport] (under a real HTTP client), so every exchange of
// the end-to-end and handler tests is checked and the document cannot
// drift from the code. The checks, made with github.com/getkin/kin-openapi's
// openapi3filter and JSON Schema 2020-12 (OpenAPI 3.1), are:
//
//   - For a path and method of the document, the answer's status must be
//     one the operation lists, with that response's headers (the required
//     ones present, every value matching its schema), media type and body
//     schema; a HEAD answer is checked for its status, headers and media
//     type.
//   - A request the operation does not allow (a parameter, the body, or the
//     bearer token its security requirements name: a login token where only
//     an API key is accepted is not allowed) must be refused with a code
//     its fault calls for: invalid_token or forbidden for the token;
//     invalid_parameter or invalid_cursor for a parameter; invalid_request,
//     unsupported_media_type or request_too_large for the body; not_found
//     (an unknown project) or unavailable for any fault.
//   - For a path of the document and a method it does not list, the answer
//     must be 405 method_not_allowed with an Allow header naming exactly
//     the methods the document lists for the path (or 404 not_found, for an
//     unknown project).
//   - For any other path, the answer must be 404 not_found.
//   - CORS (the document's member "x-latchkey-cors"): a 204 answer to a
//     preflight on a path under its prefix must match its preflight
//     response component and allow exactly the path's methods; on those
//     paths an Access-Control-Allow-Origin must be the request's one Origin
//     (never "*") with Vary: Origin, elsewhere it may only be "*"; no
//     answer allows credentials.
//
// Error answers outside an operation are checked against the document's
// response components. The paths the document declares out of scope (its
// member "x-latchkey-out-of-scope": the console) and those of
// Options.Unchecked are not checked.
package openapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/latchkey-dev/latchkey/openapi"
	"github.com/latchkey-dev/latchkey/problem"
)

// OutOfScopeKey is the document's top-level member that lists the paths it
// does not describe; a path ending in "/" names its subtree.
const OutOfScopeKey = "x-latchkey-out-of-scope"

// SubjectPrefixKey is the member of a security scheme that names the prefix
// of the sub claim of the tokens it accepts ("usr_" for login tokens,
// "key_" for API keys).
const SubjectPrefixKey = "x-latchkey-subject-prefix"

// Options tune a Validator. The zero value checks every path as it is.
type Options struct {
	// ProjectPrefix is the path prefix under which a request names its
	// project, as tenant.ByPath takes it ("/p/"): a path
	// ProjectPrefix+NAME+REST is checked as REST, as the document's paths
	// are relative to a project's base_url. Paths without the prefix are
	// checked as they are. Empty means no prefix.
	ProjectPrefix string
	// Unchecked are paths (after the project prefix) that the test serves
	// and the document does not describe: test stubs, a host's own
	// endpoints. A path ending in "/" names its subtree. Their exchanges are
	// not checked.
	Unchecked []string
	// NoAuthentication says that the handler under test is mounted without
	// the bearer middleware (the routing table adds it): requests are not
	// checked against the operations' security requirements.
	NoAuthentication bool
	// RequestIDs says that the handler under test is Latchkey's Handler,
	// which sends X-Request-Id on every answer (the document lets handlers
	// mounted without it leave it out): every answer must carry it, and
	// every problem body must name it as request_id.
	RequestIDs bool
}

// Validator checks exchanges against the document. It is safe for
// concurrent use.
type Validator struct {
	t          testing.TB
	doc        *openapi3.T
	router     routers.Router
	opts       Options
	outOfScope []string
	// fallback are the components answering requests no operation serves:
	// "NotFound", "MethodNotAllowed", "Internal", "Unavailable", and the
	// CORS preflight's.
	fallback map[string]*openapi3.ResponseRef
	cors     corsSpec // the document's CORSKey member
}

// New returns a Validator of the embedded document (openapi.Document) that
// reports to t. It fails t at once if the document does not load or is not
// a valid OpenAPI document.
func New(t testing.TB, opts *Options) *Validator {
	t.Helper()
	v, err := newValidator(t, openapi.Document(), opts)
	if err != nil {
		t.Fatalf("openapitest: %v", err)
	}
	return v
}

// newValidator returns a Validator of doc.
func newValidator(t testing.TB, raw []byte, opts *Options) (*Validator, error) {
	ctx := context.Background()
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("loading the document: %w", err)
	}
	if err := doc.Validate(ctx); err != nil {
		return nil, fmt.Errorf("the document is not valid OpenAPI: %w", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		return nil, fmt.Errorf("the document is OpenAPI %s, not 3.1", doc.OpenAPI)
	}
	v := &Validator{t: t, doc: doc, fallback: map[string]*openapi3.ResponseRef{}}
	if opts != nil {
		v.opts = *opts
	}
	if err := json.Unmarshal(toJSON(doc.Extensions[OutOfScopeKey]), &v.outOfScope); err != nil {
		return nil, fmt.Errorf("%s: %w", OutOfScopeKey, err)
	}
	for _, name := range []string{"NotFound", "MethodNotAllowed", "Internal", "Unavailable"} {
		ref := doc.Components.Responses[name]
		if ref == nil || ref.Value == nil {
			return nil, fmt.Errorf("no response component %q", name)
		}
		v.fallback[name] = ref
	}
	if err := v.loadCORS(); err != nil {
		return nil, err
	}
	// Routes match on the path alone: the base_url a test reaches is not
	// the document's.
	routed := *doc
	routed.Servers = nil
	if v.router, err = gorillamux.NewRouter(&routed); err != nil {
		return nil, fmt.Errorf("routing the document: %w", err)
	}
	return v, nil
}

// toJSON returns v, a value decoded from JSON, as JSON; "null" if it
// cannot.
func toJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("null")
	}
	return b
}

// Exchange is one request and the answer it got.
type Exchange struct {
	// Request is the request as sent or received; its Body is not read.
	Request *http.Request
	// RequestBody is the body of Request.
	RequestBody []byte
	// Status, Header and Body are the response's.
	Status int
	Header http.Header
	Body   []byte
}

// Check returns nil if the document allows the exchange, and otherwise an
// error saying what it does not allow. The error never holds the bearer
// token, a password, or a token of either body.
func (v *Validator) Check(ctx context.Context, ex Exchange) error {
	path, ok := v.documentPath(ex.Request.URL.Path)
	if !ok {
		return nil
	}
	return redact(errors.Join(v.check(ctx, path, ex), v.checkRequestID(ex), v.checkCORS(path, ex)), secretsOf(ex))
}

// documentPath returns the path of the document a request path is checked
// as, and false if it is not checked.
func (v *Validator) documentPath(p string) (string, bool) {
	if pre := v.opts.ProjectPrefix; pre != "" {
		if rest, ok := strings.CutPrefix(p, pre); ok {
			_, tail, found := strings.Cut(rest, "/")
			p = ""
			if found {
				p = "/" + tail
			}
		}
	}
	for _, u := range slices.Concat(v.outOfScope, v.opts.Unchecked) {
		if p == u || strings.HasSuffix(u, "/") && strings.HasPrefix(p, u) {
			return "", false
		}
	}
	return p, true
}

func (v *Validator) check(ctx context.Context, path string, ex Exchange) error {
	req := ex.Request.Clone(ctx)
	req.URL = &url.URL{Path: path, RawQuery: ex.Request.URL.RawQuery}
	req.Body = io.NopCloser(bytes.NewReader(ex.RequestBody))
	req.ContentLength = int64(len(ex.RequestBody))

	if ex.Status == http.StatusNoContent && isPreflight(req) && v.corsPath(path) {
		return v.checkPreflight(ctx, path, req, ex)
	}
	route, params, err := v.router.FindRoute(req)
	switch {
	case errors.Is(err, routers.ErrPathNotFound):
		return v.checkResponse(ctx, v.fallbackRoute(req, "NotFound"), req, ex)
	case errors.Is(err, routers.ErrMethodNotAllowed):
		return v.checkMethodNotAllowed(ctx, path, req, ex)
	case err != nil:
		return fmt.Errorf("routing: %w", err)
	}

	digitErr := digitsOnly(route, req)
	clampDigits(route, req)
	reqErr := openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{
		Request:    req,
		PathParams: params,
		Route:      route,
		Options:    &openapi3filter.Options{MultiError: true, AuthenticationFunc: v.authenticate},
	})
	if digitErr != nil {
		var me openapi3.MultiError
		if reqErr != nil && !errors.As(reqErr, &me) {
			me = openapi3.MultiError{reqErr}
		}
		reqErr = append(me, digitErr)
	}
	req.Body = io.NopCloser(bytes.NewReader(ex.RequestBody))
	errs := []error{v.checkResponse(ctx, route, req, ex)}
	if reqErr != nil {
		errs = append(errs, checkRefusal(reqErr, ex))
	}
	return errors.Join(errs...)
}

// checkRequestID checks, when Options.RequestIDs asks for it, that the
// answer carries one X-Request-Id and that a problem body names it.
func (v *Validator) checkRequestID(ex Exchange) error {
	if !v.opts.RequestIDs {
		return nil
	}
	ids := ex.Header.Values("X-Request-Id")
	if len(ids) != 1 || ids[0] == "" {
		return fmt.Errorf("the answer has %d X-Request-Id headers, want one", len(ids))
	}
	mt, _, _ := mime.ParseMediaType(ex.Header.Get("Content-Type"))
	if mt != problem.ContentType || len(ex.Body) == 0 {
		return nil
	}
	var p struct {
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal(ex.Body, &p); err != nil || p.RequestID != ids[0] {
		return fmt.Errorf("the problem's request_id is %q, the X-Request-Id header %q", p.RequestID, ids[0])
	}
	return nil
}

// fallbackRoute is a route whose operation answers with the named response
// component or with the failures any request may meet.
func (v *Validator) fallbackRoute(req *http.Request, name string) *routers.Route {
	op := openapi3.NewOperation()
	op.Responses = openapi3.NewResponses(
		openapi3.WithStatus(404, v.fallback["NotFound"]),
		openapi3.WithStatus(500, v.fallback["Internal"]),
		openapi3.WithStatus(503, v.fallback["Unavailable"]),
	)
	if name == "MethodNotAllowed" {
		op.Responses.Set("405", v.fallback[name])
	}
	return &routers.Route{Spec: v.doc, Path: req.URL.Path, PathItem: &openapi3.PathItem{}, Method: req.Method, Operation: op}
}

// checkMethodNotAllowed checks the answer to a method the document does not
// list for path: 405 with Allow naming exactly the methods it lists (or
// 404 for an unknown project).
func (v *Validator) checkMethodNotAllowed(ctx context.Context, path string, req *http.Request, ex Exchange) error {
	err := v.checkResponse(ctx, v.fallbackRoute(req, "MethodNotAllowed"), req, ex)
	if ex.Status != http.StatusMethodNotAllowed {
		return err
	}
	var methods []string
	for m := range v.doc.Paths.Find(path).Operations() {
		methods = append(methods, strings.ToUpper(m))
	}
	slices.Sort(methods)
	if want, got := strings.Join(methods, ", "), ex.Header.Get("Allow"); got != want {
		err = errors.Join(err, fmt.Errorf("the Allow header is %q, the document lists %q", got, want))
	}
	return err
}

// checkResponse checks the answer against the route's operation.
func (v *Validator) checkResponse(ctx context.Context, route *routers.Route, req *http.Request, ex Exchange) error {
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, Route: route},
		Status:                 ex.Status,
		Header:                 ex.Header,
		Body:                   io.NopCloser(bytes.NewReader(ex.Body)),
		Options:                opts,
	}
	var errs []error
	if req.Method == http.MethodHead {
		// openapi3filter skips HEAD answers altogether: check the status
		// and headers as GET's, and the media type here; a HEAD answer
		// has no body to check.
		get := req.Clone(ctx)
		get.Method = http.MethodGet
		in.RequestValidationInput.Request = get
		opts.ExcludeResponseBody = true
		errs = append(errs, checkMediaType(route, ex))
	}
	if err := openapi3filter.ValidateResponse(ctx, in); err != nil {
		errs = append(errs, fmt.Errorf("the answer %d: %w", ex.Status, err))
	}
	return errors.Join(errs...)
}

// checkMediaType checks that a HEAD answer's Content-Type is one its
// response declares, if it declares any.
func checkMediaType(route *routers.Route, ex Exchange) error {
	ref := route.Operation.Responses.Status(ex.Status)
	if ref == nil || ref.Value == nil || len(ref.Value.Content) == 0 {
		return nil
	}
	if ref.Value.Content.Get(ex.Header.Get("Content-Type")) == nil {
		return fmt.Errorf("the answer %d has Content-Type %q, not one of the document's", ex.Status, ex.Header.Get("Content-Type"))
	}
	return nil
}

// checkRefusal checks the answer to a request the document does not allow:
// it must be refused with a code that reqErr's faults call for.
func checkRefusal(reqErr error, ex Exchange) error {
	allowed := map[string]bool{problem.CodeNotFound: true, problem.CodeUnavailable: true}
	var faults []error
	var me openapi3.MultiError
	if errors.As(reqErr, &me) {
		faults = me
	} else {
		faults = []error{reqErr}
	}
	for _, f := range faults {
		var sec *openapi3filter.SecurityRequirementsError
		var re *openapi3filter.RequestError
		switch {
		case errors.As(f, &sec):
			allowed[problem.CodeInvalidToken] = true
			allowed[problem.CodeForbidden] = true
		case errors.As(f, &re) && re.Parameter != nil:
			allowed[problem.CodeInvalidParameter] = true
			allowed[problem.CodeInvalidCursor] = true
		case errors.As(f, &re) && re.RequestBody != nil:
			allowed[problem.CodeInvalidRequest] = true
			allowed[problem.CodeUnsupportedMediaType] = true
			allowed[problem.CodeRequestTooLarge] = true
		default:
			return fmt.Errorf("the request is not one the document allows, for a reason this helper cannot classify: %w", f)
		}
	}
	code, status := answerCode(ex), ex.Status
	for c := range allowed {
		// A HEAD answer has no body: its status stands for its code.
		if c == code || code == "" && problem.New(c, "").Status == status {
			return nil
		}
	}
	want := slices.Sorted(func(yield func(string) bool) {
		for c := range allowed {
			if !yield(c) {
				return
			}
		}
	})
	return fmt.Errorf("the request is not one the document allows (%w), yet the answer is %d %q, not one of %v", reqErr, status, code, want)
}

// answerCode returns the code of a problem+json answer, or "".
func answerCode(ex Exchange) string {
	mt, _, _ := mime.ParseMediaType(ex.Header.Get("Content-Type"))
	if mt != problem.ContentType {
		return ""
	}
	var p struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(ex.Body, &p)
	return p.Code
}

// report fails the test when the exchange is not allowed.
func (v *Validator) report(ctx context.Context, ex Exchange) {
	if err := v.Check(ctx, ex); err != nil {
		v.t.Errorf("openapi: %s %s answered %d, which the document does not allow: %v",
			ex.Request.Method, ex.Request.URL.Path, ex.Status, err)
	}
}

// DigitsOnlyKey is the member of a query parameter whose integer values
// must be written in decimal digits only (no sign, no exponent): a JSON
// Schema integer allows "+5", which the API refuses.
const DigitsOnlyKey = "x-latchkey-digits-only"

// digitsOnly returns the fault of a request that writes a parameter marked
// DigitsOnlyKey with anything but digits, or nil.
func digitsOnly(route *routers.Route, req *http.Request) error {
	q := req.URL.Query()
	for _, ref := range route.Operation.Parameters {
		p := ref.Value
		if p == nil || p.In != openapi3.ParameterInQuery || p.Extensions[DigitsOnlyKey] != true {
			continue
		}
		for _, val := range q[p.Name] {
			if val == "" || strings.Trim(val, "0123456789") != "" {
				return &openapi3filter.RequestError{Parameter: p, Reason: "not written in decimal digits only"}
			}
		}
	}
	return nil
}

// clampDigits rewrites, in req's query, the values of the parameters marked
// DigitsOnlyKey that are written in more digits than an int64 holds, to
// the largest int64: a JSON Schema integer has no bound, but the library
// reads integers as int64, and the API takes any number of digits.
func clampDigits(route *routers.Route, req *http.Request) {
	q, err := url.ParseQuery(req.URL.RawQuery)
	if err != nil {
		return // left as it is, for the library to find the fault
	}
	changed := false
	for _, ref := range route.Operation.Parameters {
		p := ref.Value
		if p == nil || p.In != openapi3.ParameterInQuery || p.Extensions[DigitsOnlyKey] != true {
			continue
		}
		for i, val := range q[p.Name] {
			if len(val) > 18 && strings.Trim(val, "0123456789") == "" {
				q[p.Name][i] = "9223372036854775807"
				changed = true
			}
		}
	}
	if changed {
		req.URL.RawQuery = q.Encode()
	}
}
