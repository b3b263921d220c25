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
	"unicode/utf8"
)

// MaxBodyBytes is the largest request body accepted (64 KiB).
const MaxBodyBytes = 64 << 10

// maxDepth bounds the nesting of a request body.
const maxDepth = 32

// DecodeJSON reads r's body into dst, a pointer to a struct, as the wire
// contract says:
//
//   - Content-Type must be application/json (parameters such as charset are
//     fine), else 415 unsupported_media_type;
//   - at most MaxBodyBytes, else 413 request_too_large;
//   - the body must be valid UTF-8 and exactly one JSON object, with no
//     member name given twice at any depth (names equal but for case count
//     as the same name, since encoding/json matches fields that way), no
//     trailing data, and the right type for each known field, else 400
//     invalid_request.
//
// Unknown fields are ignored. Checking required fields is the caller's job.
func DecodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return New(CodeUnsupportedMediaType, "The request body must be application/json.")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return New(CodeRequestTooLarge, fmt.Sprintf("The request body exceeds %d bytes.", MaxBodyBytes))
		}
		return New(CodeInvalidRequest, "The request body could not be read.").WithCause(err)
	}
	if !utf8.Valid(body) {
		return New(CodeInvalidRequest, "The request body is not valid UTF-8.")
	}
	if err := checkObject(body); err != nil {
		return New(CodeInvalidRequest, err.Error())
	}
	if err := json.Unmarshal(body, dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return New(CodeInvalidRequest, fmt.Sprintf("The field %q has the wrong type.", typeErr.Field))
		}
		return New(CodeInvalidRequest, "The request body is not valid JSON.")
	}
	return nil
}

// checkObject verifies that body is one JSON object with no duplicate
// member names at any depth and nothing after it.
func checkObject(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return errors.New("The request body is not valid JSON.")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("The request body must be a JSON object.")
	}
	if err := checkMembers(dec, 1); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("The request body has data after the JSON object.")
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
			return errors.New("The request body is not valid JSON.")
		}
		if d, ok := tok.(json.Delim); ok && d == '}' {
			return nil
		}
		name, ok := tok.(string)
		if !ok {
			return errors.New("The request body is not valid JSON.")
		}
		// encoding/json matches member names to fields case-insensitively,
		// so names equal but for case would be a second value for one field.
		key := strings.ToLower(name)
		if _, dup := seen[key]; dup {
			return fmt.Errorf("The member %q is given more than once.", name)
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
		return errors.New("The request body is not valid JSON.")
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if depth >= maxDepth {
		return errors.New("The request body is nested too deeply.")
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
			return errors.New("The request body is not valid JSON.")
		}
		return nil
	}
	return errors.New("The request body is not valid JSON.")
}
