package openapitest

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The validator checks the CORS answers the document describes.
func TestCheck_cors(t *testing.T) {
	v := New(t, &Options{ProjectPrefix: "/p/"})
	bearer := func(tok string) string { return "Bearer " + tok }
	const origin = "https://app.example.com"
	preflight := func(path, reqOrigin string, status int, h map[string]string) Exchange {
		req := httptest.NewRequest(http.MethodOptions, path, nil)
		req.Header.Set("Origin", reqOrigin)
		req.Header.Set("Access-Control-Request-Method", "GET")
		hh := http.Header{}
		for k, val := range h {
			hh.Set(k, val)
		}
		return Exchange{Request: req, Status: status, Header: hh}
	}
	good := func() map[string]string {
		return map[string]string{
			"Access-Control-Allow-Origin":  origin,
			"Access-Control-Allow-Methods": "GET, HEAD",
			"Access-Control-Allow-Headers": "Authorization, Content-Type, X-Request-Id, traceparent, tracestate",
			"Access-Control-Max-Age":       "7200",
			"Vary":                         "Origin",
		}
	}
	with := func(k, val string) map[string]string {
		h := good()
		if val == "" {
			delete(h, k)
		} else {
			h[k] = val
		}
		return h
	}
	for _, c := range []struct {
		name    string
		ex      Exchange
		allowed bool
	}{
		{"a preflight", preflight("/v1/contacts", origin, 204, good()), true},
		{"a preflight of a project", preflight("/p/acme/v1/contacts", origin, 204, good()), true},
		{"another origin named", preflight("/v1/contacts", origin, 204, with("Access-Control-Allow-Origin", "https://other.example.com")), false},
		{"any origin", preflight("/v1/contacts", origin, 204, with("Access-Control-Allow-Origin", "*")), false},
		{"credentials", preflight("/v1/contacts", origin, 204, with("Access-Control-Allow-Credentials", "true")), false},
		{"no Vary", preflight("/v1/contacts", origin, 204, with("Vary", "")), false},
		{"wrong methods", preflight("/v1/contacts", origin, 204, with("Access-Control-Allow-Methods", "POST")), false},
		{"no max-age", preflight("/v1/contacts", origin, 204, with("Access-Control-Max-Age", "")), false},
		{"a preflight of the console", preflight("/console/", origin, 204, good()), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := v.Check(context.Background(), c.ex)
			if c.allowed {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}

	// An actual answer: the origin it names must be the request's, with
	// Vary: Origin; outside /v1 only "*".
	actual := func(path, reqOrigin string, h map[string]string) Exchange {
		ex := exchange{method: "GET", target: path, auth: bearer(apiKey), status: 200, header: jsonOK, body: emptyPage}.build()
		if reqOrigin != "" {
			ex.Request.Header.Set("Origin", reqOrigin)
		}
		for k, val := range h {
			ex.Header.Set(k, val)
		}
		return ex
	}
	assert.NoError(t, v.Check(context.Background(), actual("/v1/contacts", origin, map[string]string{"Access-Control-Allow-Origin": origin, "Vary": "Origin"})))
	assert.NoError(t, v.Check(context.Background(), actual("/v1/contacts", "https://evil.example.com", nil)))
	assert.Error(t, v.Check(context.Background(), actual("/v1/contacts", origin, map[string]string{"Access-Control-Allow-Origin": origin})), "no Vary")
	assert.Error(t, v.Check(context.Background(), actual("/v1/contacts", "", map[string]string{"Access-Control-Allow-Origin": origin, "Vary": "Origin"})), "no Origin asked")
	assert.Error(t, v.Check(context.Background(), actual("/v1/contacts", origin, map[string]string{"Access-Control-Allow-Origin": "*"})), "* on /v1")
	assert.Error(t, v.Check(context.Background(), actual("/v1/contacts", origin, map[string]string{
		"Access-Control-Allow-Origin": origin, "Vary": "Origin", "Access-Control-Allow-Credentials": "true"})), "credentials")
}

// Introspection's Basic client credentials: the key's id and token, each
// form-urlencoded; the user name must be the token's sub.
func TestCheck_basicClient(t *testing.T) {
	v := New(t, nil)
	ok := `{"active":false}`
	basic := func(id, secret string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
	}
	introspect := func(auth string, status int, body string, h map[string]string) Exchange {
		return exchange{method: "POST", target: "/v1/identity/introspect", auth: auth,
			reqType: "application/x-www-form-urlencoded", reqBody: "token=x", status: status, header: h, body: body}.build()
	}
	id := "key_0123456789abcdefghijklmnop"
	assert.NoError(t, v.Check(context.Background(), introspect(basic(id, apiKey), 200, ok, jsonOK)))
	assert.Error(t, v.Check(context.Background(), introspect(basic("key_other", apiKey), 200, ok, jsonOK)), "an id that is not the key's")
	assert.Error(t, v.Check(context.Background(), introspect("Basic "+strings.Repeat("!", 8), 200, ok, jsonOK)), "not base64")
	assert.Error(t, v.Check(context.Background(), introspect(basic("usr_0123456789abcdefghijklmnop", loginToken), 200, ok, jsonOK)), "a login token")
	refused := problemHeaders("WWW-Authenticate", `Basic realm="latchkey", charset="UTF-8"`)
	assert.NoError(t, v.Check(context.Background(), introspect(basic("key_other", apiKey), 401, problemBody("invalid_token", 401), refused)))
	assert.Error(t, v.Check(context.Background(), introspect(basic("key_other", apiKey), 401, problemBody("invalid_token", 401),
		problemHeaders("WWW-Authenticate", `Basic realm="elsewhere"`))), "another challenge")
}
