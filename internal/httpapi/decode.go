package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/latchkey-dev/latchkey/problem"
)

// MaxBodyBytes is the largest request body accepted (64 KiB).
const MaxBodyBytes = 64 << 10

// maxDepth bounds the nesting of a request body.
const maxDepth = 32

// DecodeJSON reads r's body into dst, a pointer to a struct, as the wire
// contract says:
//
//   - Content-Type must be application/json, with no parameter but an
//     optional charset of utf-8 (in any case), else 415
//     unsupported_media_type;
//   - at most MaxBodyBytes, else 413 request_too_large;
//   - the body must be valid UTF-8 and exactly one JSON object, with no
//     two members of one object, at any depth, that encoding/json could
//     map to one struct field (names equal after its Unicode case folding:
//     "password", "PASSWORD" and "paſſword" with U+017F are one name), no
//     trailing data, and the right type for each known field, else 400
//     invalid_request.
//
// Unknown fields are ignored. Checking required fields is the caller's job.
// The error's detail never quotes a member's value.
func DecodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	if !hasMediaType(r.Header.Get("Content-Type"), "application/json") {
		return problem.New(problem.CodeUnsupportedMediaType, "The request body must be application/json in UTF-8.")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return problem.New(problem.CodeRequestTooLarge, fmt.Sprintf("The request body exceeds %d bytes.", MaxBodyBytes))
		}
		return problem.New(problem.CodeInvalidRequest, "The request body could not be read.").WithCause(err)
	}
	if !utf8.Valid(body) {
		return problem.New(problem.CodeInvalidRequest, "The request body is not valid UTF-8.")
	}
	if err := checkObject(body); err != nil {
		return problem.New(problem.CodeInvalidRequest, err.Error())
	}
	if err := json.Unmarshal(body, dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return problem.New(problem.CodeInvalidRequest, fmt.Sprintf("The field %q has the wrong type.", typeErr.Field))
		}
		return problem.New(problem.CodeInvalidRequest, "The request body is not valid JSON.")
	}
	return nil
}

// hasMediaType reports whether the Content-Type header value v is the media
// type mediaType (lower case), alone or with a charset parameter of utf-8
// in any case. Any other parameter or charset, or a malformed value, is
// refused.
func hasMediaType(v, mediaType string) bool {
	mt, params, err := mime.ParseMediaType(v)
	if err != nil || mt != mediaType {
		return false
	}
	for name, value := range params {
		if name != "charset" || !strings.EqualFold(value, "utf-8") {
			return false
		}
	}
	return true
}

// Errors of checkObject, whose text is the problem's detail: a sentence
// shown to clients, hence capitalized and ending with a period.
var (
	//lint:ignore ST1005 the text is a client-facing sentence (the problem's detail)
	errNotJSON = errors.New("The request body is not valid JSON.")
	//lint:ignore ST1005 the text is a client-facing sentence (the problem's detail)
	errNotObject = errors.New("The request body must be a JSON object.")
	//lint:ignore ST1005 the text is a client-facing sentence (the problem's detail)
	errTrailingData = errors.New("The request body has data after the JSON object.")
	//lint:ignore ST1005 the text is a client-facing sentence (the problem's detail)
	errTooDeep = errors.New("The request body is nested too deeply.")
)

// duplicateMemberError is checkObject's error for an object giving one
// member twice: two names that encoding/json would map to one field.
type duplicateMemberError struct {
	// name is the second of the two names, as the body spells it.
	name string
}

func (e *duplicateMemberError) Error() string {
	return fmt.Sprintf("The member %q is given more than once.", e.name)
}

// checkObject verifies that body is one JSON object with no member given
// twice in any object at any depth and nothing after it.
func checkObject(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return errNotJSON
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errNotObject
	}
	if err := checkMembers(dec, 1); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errTrailingData
	}
	return nil
}

// checkMembers reads the members of an object whose '{' was just read, up to
// and including its '}'.
func checkMembers(dec *json.Decoder, depth int) error {
	seen := make(map[string]struct{})
	for {
		tok, err := dec.Token()
		if err != nil {
			return errNotJSON
		}
		if d, ok := tok.(json.Delim); ok && d == '}' {
			return nil
		}
		name, ok := tok.(string)
		if !ok {
			return errNotJSON
		}
		key := foldName(name)
		if _, dup := seen[key]; dup {
			return &duplicateMemberError{name: name}
		}
		seen[key] = struct{}{}
		if err := checkValue(dec, depth); err != nil {
			return err
		}
	}
}

// checkValue reads one value, checking nested objects and arrays.
func checkValue(dec *json.Decoder, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return errNotJSON
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if depth >= maxDepth {
		return errTooDeep
	}
	switch d {
	case '{':
		return checkMembers(dec, depth+1)
	case '[':
		for dec.More() {
			if err := checkValue(dec, depth+1); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return errNotJSON
		}
		return nil
	}
	return errNotJSON
}

// foldName returns the key by which encoding/json matches the member name
// name to a struct field when no field has exactly that name: a field
// receives a member only if their keys are equal, so two members with one
// key could reach the same field. Every rune is replaced by the smallest
// rune of its simple case-folding orbit (unicode.SimpleFold), which is the
// folding encoding/json applies: "k", "K" and the Kelvin sign U+212A fold
// to "K", "s" and U+017F to "S". Two names have equal keys exactly when
// bytes.EqualFold reports them equal.
func foldName(name string) string {
	ascii := true
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToUpper(name)
	}
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range name {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

// foldRune returns the smallest rune of r's simple case-folding orbit.
func foldRune(r rune) rune {
	for {
		next := unicode.SimpleFold(r)
		if next <= r {
			return next
		}
		r = next
	}
}
