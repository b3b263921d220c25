package httpapi

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/problem"
)

type loginBody struct {
	Email    string   `json:"email"`
	Password string   `json:"password"`
	Tags     []string `json:"tags"`
}

func decode(t *testing.T, contentType, body string) (loginBody, error) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/v1/identity/login", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	var dst loginBody
	err := DecodeJSON(httptest.NewRecorder(), r, &dst)
	return dst, err
}

func TestDecodeJSON_Accepts(t *testing.T) {
	for _, tc := range []struct {
		name, contentType, body string
	}{
		{"plain", "application/json", `{"email":"a@b.c","password":"pw"}`},
		{"charset", "application/json; charset=utf-8", `{"email":"a@b.c","password":"pw"}`},
		{"charset upper case", "application/json; charset=UTF-8", `{"email":"a@b.c","password":"pw"}`},
		{"charset mixed case, quoted", `application/json;charset="Utf-8"`, `{"email":"a@b.c","password":"pw"}`},
		{"same name folded in different objects", "application/json", `{"email":"a@b.c","password":"pw","x":{"paſſword":1}}`},
		{"upper media type", "Application/JSON", `{"email":"a@b.c","password":"pw"}`},
		{"unknown fields ignored", "application/json", `{"email":"a@b.c","password":"pw","extra":{"x":[1,2]}}`},
		{"white space around", "application/json", " \n{\"email\":\"a@b.c\",\"password\":\"pw\"}\n "},
		{"escaped unicode", "application/json", `{"email":"a@b.c","password":"p\u00e9"}`},
		{"same name in different objects", "application/json", `{"email":"a@b.c","password":"pw","x":{"email":1},"y":[{"email":2}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decode(t, tc.contentType, tc.body)
			require.NoError(t, err)
			assert.Equal(t, "a@b.c", got.Email)
		})
	}
}

func TestDecodeJSON_Rejects(t *testing.T) {
	big := `{"email":"a@b.c","password":"` + strings.Repeat("x", MaxBodyBytes) + `"}`
	for _, tc := range []struct {
		name, contentType, body, code string
		status                        int
	}{
		{"no content type", "", `{}`, problem.CodeUnsupportedMediaType, 415},
		{"text/plain", "text/plain", `{}`, problem.CodeUnsupportedMediaType, 415},
		{"form", "application/x-www-form-urlencoded", `email=a`, problem.CodeUnsupportedMediaType, 415},
		{"json suffix type", "application/problem+json", `{}`, problem.CodeUnsupportedMediaType, 415},
		{"bad media type", "application/json;;", `{}`, problem.CodeUnsupportedMediaType, 415},
		{"charset latin1", "application/json; charset=latin1", `{}`, problem.CodeUnsupportedMediaType, 415},
		{"charset iso-8859-1", "application/json; charset=ISO-8859-1", `{}`, problem.CodeUnsupportedMediaType, 415},
		{"charset utf-16", "application/json; charset=utf-16", `{}`, problem.CodeUnsupportedMediaType, 415},
		{"charset utf8 without dash", "application/json; charset=utf8", `{}`, problem.CodeUnsupportedMediaType, 415},
		{"charset empty", `application/json; charset=""`, `{}`, problem.CodeUnsupportedMediaType, 415},
		{"charset twice, differing", "application/json; charset=utf-8; charset=latin1", `{}`, problem.CodeUnsupportedMediaType, 415},
		{"other parameter", "application/json; version=2", `{}`, problem.CodeUnsupportedMediaType, 415},
		{"too large", "application/json", big, problem.CodeRequestTooLarge, 413},
		{"empty", "application/json", ``, problem.CodeInvalidRequest, 400},
		{"malformed", "application/json", `{"email":`, problem.CodeInvalidRequest, 400},
		{"array", "application/json", `[{"email":"a"}]`, problem.CodeInvalidRequest, 400},
		{"string", "application/json", `"x"`, problem.CodeInvalidRequest, 400},
		{"null", "application/json", `null`, problem.CodeInvalidRequest, 400},
		{"number", "application/json", `42`, problem.CodeInvalidRequest, 400},
		{"wrong type", "application/json", `{"email":5,"password":"pw"}`, problem.CodeInvalidRequest, 400},
		{"wrong type nested", "application/json", `{"email":"a","password":"pw","tags":[1]}`, problem.CodeInvalidRequest, 400},
		{"object for string", "application/json", `{"email":{},"password":"pw"}`, problem.CodeInvalidRequest, 400},
		{"trailing object", "application/json", `{"email":"a","password":"pw"}{}`, problem.CodeInvalidRequest, 400},
		{"trailing garbage", "application/json", `{"email":"a","password":"pw"} x`, problem.CodeInvalidRequest, 400},
		{"duplicate member", "application/json", `{"email":"a","email":"b","password":"pw"}`, problem.CodeInvalidRequest, 400},
		{"duplicate by escape", "application/json", `{"email":"a","\u0065mail":"b","password":"pw"}`, problem.CodeInvalidRequest, 400},
		{"duplicate by case", "application/json", `{"email":"a","EMAIL":"b","password":"pw"}`, problem.CodeInvalidRequest, 400},
		{"duplicate by long s", "application/json", `{"email":"a","password":"pw","paſſword":"x"}`, problem.CodeInvalidRequest, 400},
		{"duplicate by escaped long s", "application/json", `{"email":"a","password":"pw","pa\u017f\u017fword":"x"}`, problem.CodeInvalidRequest, 400},
		{"duplicate by Kelvin sign", "application/json", `{"email":"a","password":"pw","key":1,"\u212aEY":2}`, problem.CodeInvalidRequest, 400},
		{"duplicate by final sigma", "application/json", `{"email":"a","password":"pw","σ":1,"ς":2}`, problem.CodeInvalidRequest, 400},
		{"duplicate by ypogegrammeni", "application/json", `{"email":"a","password":"pw","ι":1,"\u0345":2}`, problem.CodeInvalidRequest, 400},
		{"duplicate folded nested", "application/json", `{"email":"a","password":"pw","x":[{"ǆ":1,"ǅ":2}]}`, problem.CodeInvalidRequest, 400},
		{"duplicate nested", "application/json", `{"email":"a","password":"pw","x":{"k":1,"k":2}}`, problem.CodeInvalidRequest, 400},
		{"duplicate in array", "application/json", `{"email":"a","password":"pw","x":[{"k":1,"k":2}]}`, problem.CodeInvalidRequest, 400},
		{"invalid utf-8", "application/json", "{\"email\":\"a\xff\",\"password\":\"pw\"}", problem.CodeInvalidRequest, 400},
		{"invalid utf-8 in name", "application/json", "{\"e\xc3\":\"a\",\"password\":\"pw\"}", problem.CodeInvalidRequest, 400},
		{"too deep", "application/json", `{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, problem.CodeInvalidRequest, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decode(t, tc.contentType, tc.body)
			var e *problem.Error
			require.True(t, errors.As(err, &e), "DecodeJSON(%q) = %v, want *problem.Error", tc.name, err)
			assert.Equal(t, tc.code, e.Code)
			assert.Equal(t, tc.status, e.Status)
		})
	}
}

func TestDecodeJSON_DetailDoesNotEchoValues(t *testing.T) {
	_, err := decode(t, "application/json", `{"email":"a","password":5}`)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "5}")
	_, err = decode(t, "application/json", `{"email":"a","password":"hunter2","password":"hunter3"}`)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "hunter")
}
