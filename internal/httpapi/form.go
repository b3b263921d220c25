package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/latchkey-dev/latchkey/problem"
)

// FormContentType is the media type of form bodies.
const FormContentType = "application/x-www-form-urlencoded"

// DecodeForm reads r's body as an application/x-www-form-urlencoded form, as
// the wire contract says for the endpoints that take one (introspection):
//
//   - Content-Type must be application/x-www-form-urlencoded, with no
//     parameter but an optional charset of utf-8 (in any case), else 415
//     unsupported_media_type;
//   - at most MaxBodyBytes, else 413 request_too_large;
//   - the body must be valid form syntax, else 400 invalid_request.
//
// The query string is never read.
func DecodeForm(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	if !hasMediaType(r.Header.Get("Content-Type"), FormContentType) {
		return nil, problem.New(problem.CodeUnsupportedMediaType, "The request body must be "+FormContentType+" in UTF-8.")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, problem.New(problem.CodeRequestTooLarge, fmt.Sprintf("The request body exceeds %d bytes.", MaxBodyBytes))
		}
		return nil, problem.New(problem.CodeInvalidRequest, "The request body could not be read.").WithCause(err)
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, problem.New(problem.CodeInvalidRequest, "The request body is not a valid form.")
	}
	return form, nil
}
