package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/problem"
)

func decodeForm(contentType, body string) (map[string][]string, error) {
	r := httptest.NewRequest(http.MethodPost, "/v1/keys/introspect?token=from-query", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return DecodeForm(httptest.NewRecorder(), r)
}

func TestDecodeForm_Accepts(t *testing.T) {
	for _, contentType := range []string{
		FormContentType,
		FormContentType + "; charset=utf-8",
		FormContentType + "; charset=UTF-8",
		"Application/X-WWW-Form-URLEncoded",
	} {
		t.Run(contentType, func(t *testing.T) {
			form, err := decodeForm(contentType, "token=a%2Bb&hint=x+y")
			require.NoError(t, err)
			assert.Equal(t, map[string][]string{"token": {"a+b"}, "hint": {"x y"}}, form, "the body only, never the query")
		})
	}
}

func TestDecodeForm_Rejects(t *testing.T) {
	for _, tc := range []struct {
		name, contentType, body, code string
	}{
		{"no content type", "", "token=a", problem.CodeUnsupportedMediaType},
		{"json", "application/json", `{"token":"a"}`, problem.CodeUnsupportedMediaType},
		{"charset latin1", FormContentType + "; charset=latin1", "token=a", problem.CodeUnsupportedMediaType},
		{"other parameter", FormContentType + "; x=y", "token=a", problem.CodeUnsupportedMediaType},
		{"too large", FormContentType, "token=" + strings.Repeat("a", MaxBodyBytes), problem.CodeRequestTooLarge},
		{"bad escape", FormContentType, "token=%zz", problem.CodeInvalidRequest},
		{"semicolon", FormContentType, "token=a;b", problem.CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeForm(tc.contentType, tc.body)
			var e *problem.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tc.code, e.Code)
			assert.NotContains(t, e.Detail, "token=", "the detail does not echo the body")
		})
	}
}
