package console

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

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

func TestSessionStore(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	st := newSessionStore(time.Minute, time.Hour, 2)
	id, s := st.create("acme", "usr_1", "a@x", now)
	assert.Len(t, id, 43)
	assert.Len(t, s.formToken, 43)
	assert.NotEqual(t, id, s.formToken)

	_, ok := st.get(id, "other", now)
	assert.False(t, ok, "another project")
	_, ok = st.get(id, "acme", now.Add(59*time.Second))
	assert.True(t, ok)
	_, ok = st.get(id, "acme", now.Add(2*time.Minute))
	assert.False(t, ok, "idle")
	assert.Equal(t, 0, st.len(), "an expired session is forgotten")

	// Full: expired sessions go first, then the least recently used.
	a, _ := st.create("acme", "usr_a", "a@x", now)
	b, _ := st.create("acme", "usr_b", "b@x", now.Add(time.Second))
	_, ok = st.get(a, "acme", now.Add(2*time.Second)) // a is now the most recent
	assert.True(t, ok)
	c, _ := st.create("acme", "usr_c", "c@x", now.Add(3*time.Second))
	assert.Equal(t, 2, st.len())
	_, ok = st.get(b, "acme", now.Add(4*time.Second))
	assert.False(t, ok, "b was the least recently used")
	for _, id := range []string{a, c} {
		_, ok = st.get(id, "acme", now.Add(4*time.Second))
		assert.True(t, ok)
	}

	st.setFlash(a, flash{Kind: "success", Message: "done"})
	assert.Equal(t, "done", st.takeFlash(a).Message)
	assert.Empty(t, st.takeFlash(a).Kind, "once")
	st.delete(a)
	_, ok = st.get(a, "acme", now.Add(5*time.Second))
	assert.False(t, ok)
}
