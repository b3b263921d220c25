package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCanonicalOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://app.example.com":      "https://app.example.com",
		"HTTPS://App.Example.COM":      "https://app.example.com",
		"https://app.example.com:443":  "https://app.example.com",
		"http://localhost:80":          "http://localhost",
		"http://localhost:3000":        "http://localhost:3000",
		"https://app.example.com:80":   "https://app.example.com:80",
		"http://[::1]:8080":            "http://[::1]:8080",
		"capacitor://localhost":        "capacitor://localhost",
		"chrome-extension://abcdefghi": "chrome-extension://abcdefghi",
	} {
		got, err := CanonicalOrigin(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{
		"", "*", "null", "app.example.com", "https://app.example.com/", "https://app.example.com/x",
		"https://app.example.com?", "https://app.example.com?a=b", "https://app.example.com#", "https://u:p@app.example.com",
		"https://", "https://:443", "https://app.example.com:", "mailto:a@example.com", "//app.example.com",
	} {
		_, err := CanonicalOrigin(in)
		assert.Error(t, err, "%q", in)
	}
}

func TestCORS_Origin(t *testing.T) {
	c, err := NewCORS([]string{"HTTPS://App.Example.com:443"})
	require.NoError(t, err)
	req := func(origins ...string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/v1/contacts", nil)
		for _, o := range origins {
			r.Header.Add("Origin", o)
		}
		return r
	}
	o, ok := c.Origin(req("https://app.example.com"))
	assert.True(t, ok)
	assert.Equal(t, "https://app.example.com", o)
	for _, origins := range [][]string{nil, {"https://App.example.com"}, {"https://app.example.com:443"},
		{"https://app.example.com", "https://app.example.com"}, {"https://evil.example.com"}} {
		_, ok := c.Origin(req(origins...))
		assert.False(t, ok, "%q", origins)
	}
	none, err := NewCORS(nil)
	require.NoError(t, err)
	assert.Nil(t, none)
	_, ok = none.Origin(req("https://app.example.com"))
	assert.False(t, ok, "a nil CORS allows none")
}
