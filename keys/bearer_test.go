package keys

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBearerToken(t *testing.T) {
	const tok = "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2ln"
	for _, c := range []struct {
		name      string
		headers   []string
		token     string
		presented bool
		ok        bool
	}{
		{"none", nil, "", false, false},
		{"bearer", []string{"Bearer " + tok}, tok, true, true},
		{"lowercase scheme", []string{"bearer " + tok}, tok, true, true},
		{"uppercase scheme", []string{"BEARER " + tok}, tok, true, true},
		{"padding", []string{"Bearer abc=="}, "abc==", true, true},
		{"basic", []string{"Basic dXNlcjpwYXNz"}, "", false, false},
		{"scheme only", []string{"Bearer"}, "", true, false},
		{"empty token", []string{"Bearer "}, "", true, false},
		{"two spaces", []string{"Bearer  " + tok}, tok, true, true},
		{"spaces only", []string{"Bearer   "}, "", true, false},
		{"trailing space", []string{"Bearer " + tok + " "}, "", true, false},
		{"two tokens", []string{"Bearer " + tok + " " + tok}, "", true, false},
		{"tab", []string{"Bearer\t" + tok}, "", false, false},
		{"comma", []string{"Bearer a,b"}, "", true, false},
		{"inner padding", []string{"Bearer a=b"}, "", true, false},
		{"only padding", []string{"Bearer =="}, "", true, false},
		{"two headers", []string{"Bearer " + tok, "Bearer " + tok}, "", true, false},
		{"too large", []string{"Bearer " + strings.Repeat("a", MaxTokenBytes+1)}, "", true, false},
		{"largest", []string{"Bearer " + strings.Repeat("a", MaxTokenBytes)}, strings.Repeat("a", MaxTokenBytes), true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range c.headers {
				h.Add("Authorization", v)
			}
			got, presented, reason := BearerToken(h)
			require.Equal(t, c.presented, presented, "presented")
			if c.ok {
				require.Empty(t, reason)
				require.Equal(t, c.token, got)
			} else {
				require.NotEmpty(t, reason)
				require.Empty(t, got)
			}
		})
	}
}

func TestKind_String(t *testing.T) {
	require.Equal(t, "user", KindUser.String())
	require.Equal(t, "api_key", KindAPIKey.String())
	require.Equal(t, "unknown", Kind(0).String())
}
