package openapitest

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeJWT returns a token of a JWT's shape with the given sub; its
// signature is not one (the validator reads only the shape and the sub).
func fakeJWT(sub string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"EdDSA","typ":"JWT","kid":"sk_x"}`)) + "." +
		enc([]byte(`{"sub":"`+sub+`","aud":"default","iat":1,"jti":"j"}`)) + "." + enc([]byte("not a signature"))
}

var (
	loginToken = fakeJWT("usr_0123456789abcdefghijklmnop")
	apiKey     = fakeJWT("key_0123456789abcdefghijklmnop")
)

// exchange builds an Exchange: method and target, the Authorization
// header's value (none when ""), the request's body and Content-Type, and
// the answer.
type exchange struct {
	method, target, auth string
	reqType, reqBody     string
	status               int
	header               map[string]string
	body                 string
}

func (e exchange) build() Exchange {
	req := httptest.NewRequest(e.method, e.target, strings.NewReader(e.reqBody))
	if e.auth != "" {
		req.Header.Set("Authorization", e.auth)
	}
	if e.reqType != "" {
		req.Header.Set("Content-Type", e.reqType)
	}
	h := http.Header{}
	for k, v := range e.header {
		h.Set(k, v)
	}
	return Exchange{Request: req, RequestBody: []byte(e.reqBody), Status: e.status, Header: h, Body: []byte(e.body)}
}

// Headers of the answers.
var (
	jsonOK = map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
)

func problemHeaders(extra ...string) map[string]string {
	h := map[string]string{"Content-Type": "application/problem+json", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
	for i := 0; i+1 < len(extra); i += 2 {
		h[extra[i]] = extra[i+1]
	}
	return h
}

func problemBody(code string, status int) string {
	return fmt.Sprintf(`{"type":"https://latchkey.dev/problems/%s","title":%q,"status":%d,"detail":"Something.","code":%q}`,
		code, http.StatusText(status), status, code)
}

const (
	emptyPage   = `{"data":[],"pagination":{"limit":25,"has_more":false,"next_cursor":""}}`
	contactPage = `{"data":[{"id":"ct_0a","name":"Ada","created_at":"2026-11-21T10:15:30.123456Z"}],` +
		`"pagination":{"limit":1,"has_more":true,"next_cursor":"ct_0a:2026-11-21T10:15:30.123456Z"}}`
)

// Check accepts what the document allows and refuses the rest, each case a
// drift the document must catch.
func TestCheck(t *testing.T) {
	v := New(t, &Options{ProjectPrefix: "/p/", Unchecked: []string{"/v1/stub", "/stubs/"}})
	bearer := func(tok string) string { return "Bearer " + tok }
	cases := []struct {
		name    string
		ex      exchange
		allowed bool
	}{
		{"a page", exchange{method: "GET", target: "/v1/contacts?limit=1", auth: bearer(apiKey), status: 200, header: jsonOK, body: contactPage}, true},
		{"a page under a project", exchange{method: "GET", target: "/p/acme/v1/contacts", auth: bearer(loginToken), status: 200, header: jsonOK, body: emptyPage}, true},
		{"an undocumented member", exchange{method: "GET", target: "/v1/contacts", auth: bearer(apiKey), status: 200, header: jsonOK,
			body: `{"data":[],"pagination":{"limit":25,"has_more":false,"next_cursor":""},"total":0}`}, false},
		{"has_more without a cursor", exchange{method: "GET", target: "/v1/contacts", auth: bearer(apiKey), status: 200, header: jsonOK,
			body: `{"data":[],"pagination":{"limit":25,"has_more":true,"next_cursor":""}}`}, false},
		{"a null cursor", exchange{method: "GET", target: "/v1/contacts", auth: bearer(apiKey), status: 200, header: jsonOK,
			body: `{"data":[],"pagination":{"limit":25,"has_more":false,"next_cursor":null}}`}, false},
		{"no Cache-Control", exchange{method: "GET", target: "/v1/contacts", auth: bearer(apiKey), status: 200,
			header: map[string]string{"Content-Type": "application/json", "X-Content-Type-Options": "nosniff"}, body: emptyPage}, false},
		{"another media type", exchange{method: "GET", target: "/v1/contacts", auth: bearer(apiKey), status: 200,
			header: map[string]string{"Content-Type": "text/plain", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}, body: emptyPage}, false},
		{"an undocumented status", exchange{method: "GET", target: "/v1/contacts", auth: bearer(apiKey), status: 418, header: problemHeaders(), body: problemBody("internal", 418)}, false},

		{"no token, 401", exchange{method: "GET", target: "/v1/contacts", status: 401,
			header: problemHeaders("WWW-Authenticate", "Bearer"), body: problemBody("invalid_token", 401)}, true},
		{"no token, 401 without a challenge", exchange{method: "GET", target: "/v1/contacts", status: 401,
			header: problemHeaders(), body: problemBody("invalid_token", 401)}, false},
		{"no token, 200", exchange{method: "GET", target: "/v1/contacts", status: 200, header: jsonOK, body: emptyPage}, false},
		{"a token after two spaces (RFC 6750: 1*SP)", exchange{method: "GET", target: "/v1/contacts", auth: "Bearer  " + apiKey, status: 200, header: jsonOK, body: emptyPage}, true},
		{"a token after a tab", exchange{method: "GET", target: "/v1/contacts", auth: "Bearer\t" + apiKey, status: 200, header: jsonOK, body: emptyPage}, false},
		{"a login token for the feed, 403", exchange{method: "GET", target: "/v1/identity/revocations", auth: bearer(loginToken), status: 403,
			header: problemHeaders(), body: problemBody("forbidden", 403)}, true},
		{"a login token for the feed, 200", exchange{method: "GET", target: "/v1/identity/revocations", auth: bearer(loginToken), status: 200, header: jsonOK, body: emptyPage}, false},
		{"a problem with the wrong status", exchange{method: "GET", target: "/v1/identity/revocations", auth: bearer(loginToken), status: 403,
			header: problemHeaders(), body: problemBody("forbidden", 401)}, false},

		{"limit=0, 400 invalid_parameter", exchange{method: "GET", target: "/v1/contacts?limit=0", auth: bearer(apiKey), status: 400,
			header: problemHeaders(), body: problemBody("invalid_parameter", 400)}, true},
		{"limit=0, 400 invalid_request", exchange{method: "GET", target: "/v1/contacts?limit=0", auth: bearer(apiKey), status: 400,
			header: problemHeaders(), body: problemBody("invalid_request", 400)}, false},
		{"limit=0, 200", exchange{method: "GET", target: "/v1/contacts?limit=0", auth: bearer(apiKey), status: 200, header: jsonOK, body: emptyPage}, false},
		{"limit=+5, 200", exchange{method: "GET", target: "/v1/contacts?limit=%2B5", auth: bearer(apiKey), status: 200, header: jsonOK, body: emptyPage}, false},
		{"limit=+5, 400", exchange{method: "GET", target: "/v1/contacts?limit=%2B5", auth: bearer(apiKey), status: 400,
			header: problemHeaders(), body: problemBody("invalid_parameter", 400)}, true},
		{"limit=1e1, 200", exchange{method: "GET", target: "/v1/contacts?limit=1e1", auth: bearer(apiKey), status: 200, header: jsonOK, body: emptyPage}, false},
		{"limit=1000, clamped", exchange{method: "GET", target: "/v1/contacts?limit=1000", auth: bearer(apiKey), status: 200, header: jsonOK, body: emptyPage}, true},
		{"limit of 30 digits, clamped", exchange{method: "GET", target: "/v1/contacts?limit=" + strings.Repeat("9", 30), auth: bearer(apiKey), status: 200, header: jsonOK, body: emptyPage}, true},
		{"wait=61, 200", exchange{method: "GET", target: "/v1/identity/revocations?wait=61", auth: bearer(apiKey), status: 200, header: jsonOK, body: emptyPage}, false},
		{"wait=060, 200", exchange{method: "GET", target: "/v1/identity/revocations?wait=060", auth: bearer(apiKey), status: 200, header: jsonOK, body: emptyPage}, true},
		{"a bad cursor, unknown project", exchange{method: "GET", target: "/p/nope/v1/contacts?cursor=x", auth: bearer(apiKey), status: 404,
			header: problemHeaders(), body: problemBody("not_found", 404)}, true},

		{"a login without password, 400", exchange{method: "POST", target: "/v1/identity/login", reqType: "application/json", reqBody: `{"email":"a@example.com"}`,
			status: 400, header: problemHeaders(), body: problemBody("invalid_request", 400)}, true},
		{"a login without password, 401", exchange{method: "POST", target: "/v1/identity/login", reqType: "application/json", reqBody: `{"email":"a@example.com"}`,
			status: 401, header: problemHeaders(), body: problemBody("invalid_credentials", 401)}, false},
		{"a login as text, 415", exchange{method: "POST", target: "/v1/identity/login", reqType: "text/plain", reqBody: `{"email":"a","password":"b"}`,
			status: 415, header: problemHeaders(), body: problemBody("unsupported_media_type", 415)}, true},
		{"throttled without Retry-After", exchange{method: "POST", target: "/v1/identity/login", reqType: "application/json", reqBody: `{"email":"a","password":"b"}`,
			status: 429, header: problemHeaders(), body: problemBody("rate_limited", 429)}, false},
		{"throttled", exchange{method: "POST", target: "/v1/identity/login", reqType: "application/json", reqBody: `{"email":"a","password":"b"}`,
			status: 429, header: problemHeaders("Retry-After", "900"), body: problemBody("rate_limited", 429)}, true},
		{"logout, 204", exchange{method: "POST", target: "/v1/identity/logout", reqType: "application/json", reqBody: `{"refresh_token":"rt_x"}`, status: 204}, true},
		{"logout, 401", exchange{method: "POST", target: "/v1/identity/logout", reqType: "application/json", reqBody: `{"refresh_token":"rt_x"}`,
			status: 401, header: problemHeaders(), body: problemBody("invalid_refresh_token", 401)}, false},
		{"introspection with no token parameter, 200", exchange{method: "POST", target: "/v1/identity/introspect", auth: bearer(apiKey),
			reqType: "application/x-www-form-urlencoded", reqBody: "x=1", status: 200, header: jsonOK, body: `{"active":false}`}, false},
		{"inactive with a claim", exchange{method: "POST", target: "/v1/identity/introspect", auth: bearer(apiKey),
			reqType: "application/x-www-form-urlencoded", reqBody: "token=abc", status: 200, header: jsonOK, body: `{"active":false,"sub":"usr_a"}`}, false},

		{"HEAD, headers only", exchange{method: "HEAD", target: "/v1/contacts", auth: bearer(apiKey), status: 200, header: jsonOK}, true},
		{"HEAD without Cache-Control", exchange{method: "HEAD", target: "/v1/contacts", auth: bearer(apiKey), status: 200,
			header: map[string]string{"X-Content-Type-Options": "nosniff"}}, false},
		{"HEAD 401 of another media type", exchange{method: "HEAD", target: "/v1/contacts", status: 401,
			header: map[string]string{"Content-Type": "text/plain", "WWW-Authenticate": "Bearer", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}}, false},
		{"HEAD without a token, 200", exchange{method: "HEAD", target: "/v1/contacts", status: 200, header: jsonOK}, false},

		{"an unknown path, 404", exchange{method: "GET", target: "/v1/nope", status: 404, header: problemHeaders(), body: problemBody("not_found", 404)}, true},
		{"an unknown path, 200", exchange{method: "GET", target: "/v1/nope", status: 200, header: jsonOK, body: `{}`}, false},
		{"an unknown path, plain 404", exchange{method: "GET", target: "/v1/nope", status: 404, header: map[string]string{"Content-Type": "text/plain"}, body: "404 page not found"}, false},
		{"a project alone", exchange{method: "GET", target: "/p/acme", status: 404, header: problemHeaders(), body: problemBody("not_found", 404)}, true},
		{"another method, 405", exchange{method: "DELETE", target: "/v1/contacts", status: 405,
			header: problemHeaders("Allow", "GET, HEAD"), body: problemBody("method_not_allowed", 405)}, true},
		{"another method, 405 with a wrong Allow", exchange{method: "DELETE", target: "/v1/contacts", status: 405,
			header: problemHeaders("Allow", "GET"), body: problemBody("method_not_allowed", 405)}, false},
		{"another method, 200", exchange{method: "PUT", target: "/v1/identity/login", status: 200, header: jsonOK, body: `{}`}, false},
		{"another method, unknown project", exchange{method: "DELETE", target: "/p/nope/v1/contacts", status: 404,
			header: problemHeaders(), body: problemBody("not_found", 404)}, true},

		{"the console, out of scope", exchange{method: "POST", target: "/p/acme/console/keys", status: 418}, true},
		{"the console redirect, out of scope", exchange{method: "GET", target: "/console", status: 301}, true},
		{"an unchecked path", exchange{method: "GET", target: "/v1/stub", status: 200}, true},
		{"an unchecked subtree", exchange{method: "GET", target: "/stubs/a/b", status: 200}, true},
		{"not the unchecked subtree", exchange{method: "GET", target: "/stubsx", status: 200}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Check(context.Background(), tc.ex.build())
			if tc.allowed {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

// Without authentication checks, a handler mounted below no middleware
// answers a request without a token.
func TestCheck_noAuthentication(t *testing.T) {
	ex := exchange{method: "GET", target: "/v1/contacts", status: 200, header: jsonOK, body: emptyPage}
	require.Error(t, New(t, nil).Check(context.Background(), ex.build()))
	require.NoError(t, New(t, &Options{NoAuthentication: true}).Check(context.Background(), ex.build()))
}

// The errors never hold the bearer token, a password or a token of either
// body.
func TestCheck_redactsSecrets(t *testing.T) {
	v := New(t, nil)
	secret := fakeJWT("usr_secret")
	ex := exchange{method: "POST", target: "/v1/identity/login", auth: "Bearer " + apiKey, reqType: "application/json",
		reqBody: `{"email":"a@example.com","password":"hunter2-password"}`, status: 200, header: jsonOK,
		body: `{"access_token":"` + secret + `","refresh_token":"rt_short","expires_in":1,"user":{}}`}
	err := v.Check(context.Background(), ex.build())
	require.Error(t, err)
	for _, s := range []string{secret, "rt_short", "hunter2-password", apiKey} {
		assert.NotContains(t, err.Error(), s)
	}
	assert.Contains(t, err.Error(), "[redacted]", "the message still says where")
}

// recordingTB is a testing.TB that keeps what Errorf reports instead of
// failing.
type recordingTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recordingTB) reported() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

// badServer answers every request 200 with a body the document does not
// allow for the contacts list.
var badServer = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write([]byte(`{"data":"nope"}`))
})

// goodServer answers an empty page.
var goodServer = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write([]byte(emptyPage))
})

func get(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+apiKey)
	res, err := c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

// Transport reports a bad exchange to its test and hands the answer on as
// it came; a good one is reported nowhere.
func TestTransport(t *testing.T) {
	for name, tc := range map[string]struct {
		h    http.Handler
		fail bool
	}{"bad": {badServer, true}, "good": {goodServer, false}} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(tc.h)
			t.Cleanup(srv.Close)
			rec := &recordingTB{TB: t}
			New(rec, nil).WrapClient(srv.Client())
			status, body := get(t, srv.Client(), srv.URL+"/v1/contacts")
			assert.Equal(t, http.StatusOK, status)
			if tc.fail {
				assert.Equal(t, `{"data":"nope"}`, body, "the caller reads the answer unchanged")
				require.Len(t, rec.reported(), 1)
				assert.Contains(t, rec.reported()[0], "GET /v1/contacts answered 200")
				assert.NotContains(t, rec.reported()[0], apiKey)
			} else {
				assert.Equal(t, emptyPage, body)
				assert.Empty(t, rec.reported())
			}
		})
	}
}

// Handler reports a bad exchange to its test; the client gets the answer
// as the handler wrote it, and the handler reads the request body as
// sent.
func TestHandler(t *testing.T) {
	rec := &recordingTB{TB: t}
	var gotBody string
	h := New(rec, nil).Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		badServer(w, r)
	}))
	req := httptest.NewRequest(http.MethodPost, "/v1/identity/refresh", strings.NewReader(`{"refresh_token":"rt_x"}`))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	assert.Equal(t, `{"refresh_token":"rt_x"}`, gotBody)
	assert.Equal(t, `{"data":"nope"}`, w.Body.String())
	require.Len(t, rec.reported(), 1)
	assert.Contains(t, rec.reported()[0], "POST /v1/identity/refresh answered 200")
	assert.NotContains(t, rec.reported()[0], "rt_x")

	// A handler that writes nothing answers 200 with no body, which no
	// operation of the document allows for the key set.
	rec = &recordingTB{TB: t}
	h = New(rec, nil).Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/.well-known/jwks.json", nil))
	assert.Len(t, rec.reported(), 1)

	// http.ResponseController reaches the writer below (long polls set
	// deadlines; a recorder has none to set, which it reports as
	// ErrNotSupported rather than failing to find the method).
	h = New(t, &Options{Unchecked: []string{"/"}}).Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.NoError(t, http.NewResponseController(w).Flush())
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
}

// Check with RequestIDs demands one X-Request-Id on every answer, named by
// every problem body; the document alone lets either be left out.
func TestCheck_requestIDs(t *testing.T) {
	strict := New(t, &Options{RequestIDs: true})
	lax := New(t, nil)
	withID := func(h map[string]string, id string) map[string]string {
		out := map[string]string{"X-Request-Id": id}
		for k, v := range h {
			out[k] = v
		}
		return out
	}
	const id = "req-1"
	problemWithID := `{"type":"https://latchkey.dev/problems/invalid_token","title":"Unauthorized","status":401,"detail":"Something.","code":"invalid_token","request_id":"req-1"}`
	cases := []struct {
		name          string
		ex            exchange
		strictAllowed bool
	}{
		{"a page with an id", exchange{method: "GET", target: "/v1/contacts", auth: "Bearer " + apiKey, status: 200, header: withID(jsonOK, id), body: emptyPage}, true},
		{"a page without an id", exchange{method: "GET", target: "/v1/contacts", auth: "Bearer " + apiKey, status: 200, header: jsonOK, body: emptyPage}, false},
		{"a problem naming its id", exchange{method: "GET", target: "/v1/contacts", status: 401,
			header: withID(problemHeaders("WWW-Authenticate", "Bearer"), id), body: problemWithID}, true},
		{"a problem naming another id", exchange{method: "GET", target: "/v1/contacts", status: 401,
			header: withID(problemHeaders("WWW-Authenticate", "Bearer"), "req-2"), body: problemWithID}, false},
		{"a problem naming none", exchange{method: "GET", target: "/v1/contacts", status: 401,
			header: withID(problemHeaders("WWW-Authenticate", "Bearer"), id), body: problemBody("invalid_token", 401)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := strict.Check(context.Background(), c.ex.build())
			if c.strictAllowed {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
			assert.NoError(t, lax.Check(context.Background(), c.ex.build()), "the document allows it")
		})
	}
	bad := exchange{method: "GET", target: "/v1/contacts", auth: "Bearer " + apiKey, status: 200, header: withID(jsonOK, "not safe!"), body: emptyPage}
	assert.Error(t, lax.Check(context.Background(), bad.build()), "the document's pattern refuses an unsafe id")
}
