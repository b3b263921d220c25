package latchkey_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/openapi"
	"github.com/latchkey-dev/latchkey/tenant"
)

// withoutServers returns the JSON document body decoded, less its servers,
// and the URLs of its servers.
func withoutServers(t *testing.T, body []byte) (map[string]any, []string) {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(body, &doc))
	var urls []string
	servers, _ := doc["servers"].([]any)
	for _, s := range servers {
		u, _ := s.(map[string]any)["url"].(string)
		urls = append(urls, u)
	}
	delete(doc, "servers")
	return doc, urls
}

// The OpenAPI document is served at {base_url}/openapi.json to anyone,
// readable from any origin, with the base_url it was asked at in servers
// when the deployment names no issuer.
func TestOpenAPIDocument_servedAtTheRequestsBaseURL(t *testing.T) {
	st := openStore(t)
	lk, h := newPathLatchkey(t, st, nil)
	_, err := lk.CreateProject(context.Background(), "acme")
	require.NoError(t, err)
	c := newClient(t, h)
	want, _ := withoutServers(t, openapi.Document())

	for path, base := range map[string]string{
		"/openapi.json":              "http://example.com",
		"/p/acme/openapi.json":       "http://example.com/p/acme",
		"/p/default/openapi.json":    "http://example.com/p/default",
		"/p/acme/openapi.json?x=y&z": "http://example.com/p/acme",
	} {
		st, hd, body := c.do(http.MethodGet, path, "", "")
		require.Equal(t, http.StatusOK, st, path)
		assert.Equal(t, "*", hd.Get("Access-Control-Allow-Origin"), path)
		assert.Equal(t, "public, max-age=300", hd.Get("Cache-Control"), path)
		assert.Equal(t, "application/json", hd.Get("Content-Type"), path)
		got, servers := withoutServers(t, []byte(body))
		assert.Equal(t, []string{base}, servers, path)
		assert.Equal(t, want, got, "%s: the embedded document but for its servers", path)

		st, hd, body = c.do(http.MethodHead, path, "", "")
		assert.Equal(t, http.StatusOK, st, path)
		assert.Empty(t, body, path)
		assert.Equal(t, "*", hd.Get("Access-Control-Allow-Origin"), path)
	}

	c.problem(http.MethodGet, "/p/nope/openapi.json", "", http.StatusNotFound, "not_found")
	hd := c.problem(http.MethodPost, "/p/acme/openapi.json", "", http.StatusMethodNotAllowed, "method_not_allowed")
	assert.Equal(t, "GET, HEAD, OPTIONS", hd.Get("Allow"))
}

// A configured issuer is the document's server, whatever address it was
// asked at; without one, a prefix the host strips stays in the base_url.
func TestOpenAPIDocument_servers(t *testing.T) {
	st := openStore(t)
	lk, h := newPathLatchkey(t, st, &latchkey.Options{Issuer: func(p string) string {
		if p == "acme" {
			return "https://id.example.com/p/acme"
		}
		return ""
	}})
	_, err := lk.CreateProject(context.Background(), "acme")
	require.NoError(t, err)
	c := newClient(t, h)
	_, _, body := c.do(http.MethodGet, "/p/acme/openapi.json", "", "")
	_, servers := withoutServers(t, []byte(body))
	assert.Equal(t, []string{"https://id.example.com/p/acme"}, servers)
	_, _, body = c.do(http.MethodGet, "/openapi.json", "", "")
	_, servers = withoutServers(t, []byte(body))
	assert.Equal(t, []string{"http://example.com"}, servers, "no issuer for default")

	// A host that mounts Latchkey under /api and strips it.
	mux := http.NewServeMux()
	mux.Handle("/api/", http.StripPrefix("/api", contract(t).Handler(tenant.ByPath("/p/", "default", lk.Handler()))))
	req := httptest.NewRequest(http.MethodGet, "/api/p/default/openapi.json", nil)
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, req)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	_, servers = withoutServers(t, w.Body.Bytes())
	assert.Equal(t, []string{"http://example.com/api/p/default"}, servers)
}
