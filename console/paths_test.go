package console

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMountPrefix(t *testing.T) {
	for _, tc := range []struct {
		name, uri, path string
		want            string
		ok              bool
	}{
		{"root", "/console/keys", "/console/keys", "", true},
		{"example server", "/p/acme/console/keys?x=1", "/console/keys", "/p/acme", true},
		{"escaped", "/p/a%2Fb/console/keys", "/console/keys", "/p/a%2Fb", true},
		{"rewritten", "/elsewhere", "/console/keys", "", false},
		{"no request URI", "", "/console/keys", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/console/", nil)
			r.RequestURI = tc.uri
			r.URL.Path = tc.path
			got, ok := mountPrefix(r)
			assert.Equal(t, tc.ok, ok)
			if ok {
				assert.Equal(t, tc.want, got)
			}
		})
	}

	t.Run("http.StripPrefix", func(t *testing.T) {
		var got string
		h := http.StripPrefix("/admin", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, _ = mountPrefix(r)
		}))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/admin/console/keys", nil))
		assert.Equal(t, "/admin", got)
	})
}

func TestBasePath(t *testing.T) {
	for path, want := range map[string]string{
		"/console/":       "",
		"/console/keys":   "",
		"/console/a/b":    "../",
		"/console/a/b/c/": "../../../",
		"/console":        "console/",
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.URL.Path = path
		assert.Equal(t, want, basePath(r), path)
	}
}

func TestWaitText(t *testing.T) {
	for secs, want := range map[int64]string{
		1: "a second", 2: "2 seconds", 59: "59 seconds", 60: "a minute", 61: "2 minutes", 900: "15 minutes",
	} {
		assert.Equal(t, want, waitText(secs), secs)
	}
}
