package openapi_test

import (
	"crypto/tls"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/internal/openapitest"
	"github.com/latchkey-dev/latchkey/openapi"
	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/tenant"
)

// The embedded document loads as a valid OpenAPI 3.1 document.
func TestDocument_isValidOpenAPI31(t *testing.T) {
	openapitest.New(t, nil) // fails t otherwise
	var doc struct {
		OpenAPI string `json:"openapi"`
	}
	require.NoError(t, json.Unmarshal(openapi.Document(), &doc))
	assert.Equal(t, "3.1.0", doc.OpenAPI)
}

// errorCodes returns the error codes of the wire contract: the string
// constants named Code... of package problem, read from its source so that
// a code added there and not here fails this test.
func errorCodes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "problem", "*.go"))
	require.NoError(t, err)
	var codes []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !strings.HasPrefix(n.Name, "Code") || !ok || lit.Kind != token.STRING {
						continue
					}
					code, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					codes = append(codes, code)
				}
			}
		}
	}
	require.NotEmpty(t, codes)
	return codes
}

// valuesOf returns the values a schema member pins: its const, or its enum.
func valuesOf(m map[string]any) []any {
	if c, ok := m["const"]; ok {
		return []any{c}
	}
	vs, _ := m["enum"].([]any)
	return vs
}

// Every error code of the wire contract is in the document with its status:
// an ErrorCode entry whose description starts with the status, and a
// response component whose problem pins the code, its status, its type and
// the status text as title. The document names no other code.
func TestDocument_errorCodes(t *testing.T) {
	var doc struct {
		Components struct {
			Responses map[string]struct {
				Content map[string]struct {
					Schema struct {
						Properties map[string]map[string]any `json:"properties"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"responses"`
			Schemas struct {
				ErrorCode struct {
					OneOf []struct {
						Const       string `json:"const"`
						Description string `json:"description"`
					} `json:"oneOf"`
				} `json:"ErrorCode"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(openapi.Document(), &doc))

	listed := map[string]string{}
	for _, c := range doc.Components.Schemas.ErrorCode.OneOf {
		listed[c.Const] = c.Description
	}
	// The code each response component allows, with the status it pins.
	statusOf := map[string][]float64{}
	for name, r := range doc.Components.Responses {
		problem, ok := r.Content[problem.ContentType]
		if !ok {
			continue
		}
		props := problem.Schema.Properties
		statuses := valuesOf(props["status"])
		require.Len(t, statuses, 1, "response %s pins one status", name)
		status := statuses[0].(float64)
		for i, c := range valuesOf(props["code"]) {
			code := c.(string)
			statusOf[code] = append(statusOf[code], status)
			assert.Equal(t, "https://latchkey.dev/problems/"+code, valuesOf(props["type"])[i], "response %s: the type of %s", name, code)
		}
		assert.Equal(t, []any{http.StatusText(int(status))}, valuesOf(props["title"]), "response %s: the title", name)
	}

	codes := errorCodes(t)
	assert.Len(t, listed, len(codes), "ErrorCode lists exactly the codes of package problem")
	for _, code := range codes {
		status := problem.New(code, "").Status
		require.Equal(t, code, problem.New(code, "").Code, "%s is a code of package problem", code)
		desc, ok := listed[code]
		if assert.True(t, ok, "ErrorCode lacks %s", code) {
			assert.True(t, strings.HasPrefix(desc, strconv.Itoa(status)+":"), "ErrorCode's %s says its status %d first: %q", code, status, desc)
		}
		if assert.NotEmpty(t, statusOf[code], "no response component answers %s", code) {
			for _, s := range statusOf[code] {
				assert.EqualValues(t, status, s, "a response component gives %s another status", code)
			}
		}
	}
}

// serve asks h for the document of project (none when "") and checks the
// exchange against the document, as the routing table serves it (readable
// from any origin).
func serve(t *testing.T, h http.Handler, project, method, target string, configure ...func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for _, f := range configure {
		f(req)
	}
	if project != "" {
		req = req.WithContext(tenant.NewContext(req.Context(), project))
	}
	w := httptest.NewRecorder()
	openapitest.New(t, &openapitest.Options{ProjectPrefix: "/p/"}).Handler(httpapi.AllowAnyOrigin(h)).ServeHTTP(w, req)
	return w
}

// serversOf returns the server URLs of a served document.
func serversOf(t *testing.T, body []byte) []string {
	t.Helper()
	var doc struct {
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
	}
	require.NoError(t, json.Unmarshal(body, &doc), "the answer is JSON")
	var urls []string
	for _, s := range doc.Servers {
		urls = append(urls, s.URL)
	}
	return urls
}

func TestNewHandler_servers(t *testing.T) {
	issuer := func(p string) string {
		if p == "acme" {
			return "https://id.example.com/p/acme"
		}
		return ""
	}
	h := openapi.NewHandler(issuer, nil)
	w := serve(t, h, "acme", http.MethodGet, "http://ignored.example/openapi.json")
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Equal(t, []string{"https://id.example.com/p/acme"}, serversOf(t, w.Body.Bytes()), "the issuer")

	w = serve(t, h, "other", http.MethodGet, "/openapi.json")
	assert.Equal(t, []string{"http://example.com"}, serversOf(t, w.Body.Bytes()), "no issuer: the request's base_url")
	w = serve(t, h, "other", http.MethodGet, "/p/other/openapi.json?q=1", func(r *http.Request) {
		r.TLS = &tls.ConnectionState{}
		r.Host = "api.example.org:8443"
	})
	assert.Equal(t, []string{"https://api.example.org:8443/p/other"}, serversOf(t, w.Body.Bytes()))

	w = serve(t, openapi.NewHandler(nil, nil), "acme", http.MethodGet, "/openapi.json")
	assert.Equal(t, []string{"http://example.com"}, serversOf(t, w.Body.Bytes()), "a nil issuer")

	// A base_url that JSON must escape stays one string.
	w = serve(t, openapi.NewHandler(func(string) string { return `https://x.example/"q"` }, nil), "acme", http.MethodGet, "/openapi.json")
	assert.Equal(t, []string{`https://x.example/"q"`}, serversOf(t, w.Body.Bytes()))
}

// The document served is the embedded one but for its servers, byte for
// byte; HEAD gets the headers only; the cache lifetime is MaxAge.
func TestNewHandler_answer(t *testing.T) {
	h := openapi.NewHandler(nil, &openapi.Options{MaxAge: 90 * time.Second})
	w := serve(t, h, "acme", http.MethodGet, "/openapi.json")
	require.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "public, max-age=90", w.Header().Get("Cache-Control"))
	assert.Equal(t, "nosniff", w.Header().Get("X-Content-Type-Options"))
	assert.Equal(t, strconv.Itoa(w.Body.Len()), w.Header().Get("Content-Length"))

	doc := string(openapi.Document())
	got := w.Body.String()
	// The servers value of the file spans from its "[" to the "]" before
	// the next member.
	head, rest, ok := strings.Cut(doc, `"servers": [`)
	require.True(t, ok, "the embedded document's layout changed: update this test")
	_, tail, ok := strings.Cut(rest, "\n  ],\n")
	require.True(t, ok, "the embedded document's layout changed: update this test")
	want := head + `"servers": [{"url":"http://example.com"}],` + "\n" + tail
	assert.True(t, want == got, "the served document is the embedded one with servers replaced, byte for byte")

	w = serve(t, h, "acme", http.MethodHead, "/openapi.json")
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Empty(t, w.Body.String())
	assert.Equal(t, strconv.Itoa(len(got)), w.Header().Get("Content-Length"))

	w = serve(t, openapi.NewHandler(nil, nil), "acme", http.MethodGet, "/openapi.json")
	assert.Equal(t, "public, max-age=300", w.Header().Get("Cache-Control"), "DefaultMaxAge")
}

// Mounted below no tenant resolver, the handler answers 500 internal and
// says nothing of why.
func TestNewHandler_noProject(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(t.Output(), nil))
	w := serve(t, openapi.NewHandler(nil, &openapi.Options{Logger: logger}), "", http.MethodGet, "/openapi.json")
	require.Equal(t, http.StatusInternalServerError, w.Code)
	assert.Equal(t, problem.ContentType, w.Header().Get("Content-Type"))
	assert.NotContains(t, w.Body.String(), "context")
}

// Document returns a copy: changing it changes nothing served.
func TestDocument_isACopy(t *testing.T) {
	d := openapi.Document()
	for i := range d {
		d[i] = ' '
	}
	assert.True(t, json.Valid(openapi.Document()))
}
