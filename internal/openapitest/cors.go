package openapitest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
)

// CORSKey is the document's top-level member that says which paths answer
// browser pages of the deployment's allowed origins (CORS): its "paths" is
// the prefix of those paths ("/v1/"), and its "preflight" names the
// response component of their preflight answers.
const CORSKey = "x-latchkey-cors"

// corsSpec is the member CORSKey.
type corsSpec struct {
	Paths     string `json:"paths"`
	Preflight string `json:"preflight"`
}

// loadCORS reads the document's CORSKey member into v.
func (v *Validator) loadCORS() error {
	raw, ok := v.doc.Extensions[CORSKey]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(toJSON(raw), &v.cors); err != nil {
		return fmt.Errorf("%s: %w", CORSKey, err)
	}
	name := strings.TrimPrefix(v.cors.Preflight, "#/components/responses/")
	ref := v.doc.Components.Responses[name]
	if v.cors.Paths == "" || ref == nil || ref.Value == nil {
		return fmt.Errorf("%s: want paths and the preflight response component", CORSKey)
	}
	v.fallback[name] = ref
	v.cors.Preflight = name
	return nil
}

// corsPath reports whether the document says path answers browser pages
// of allowed origins.
func (v *Validator) corsPath(path string) bool {
	return v.cors.Paths != "" && strings.HasPrefix(path, v.cors.Paths) && v.doc.Paths.Find(path) != nil
}

// isPreflight reports whether req is a CORS preflight.
func isPreflight(req *http.Request) bool {
	return req.Method == http.MethodOptions && req.Header.Get("Origin") != "" &&
		req.Header.Get("Access-Control-Request-Method") != ""
}

// checkPreflight checks a 204 answer to a preflight of a CORS path: the
// document's preflight component, the request's origin allowed, and the
// path's methods (those the document lists) as the allowed methods.
func (v *Validator) checkPreflight(ctx context.Context, path string, req *http.Request, ex Exchange) error {
	op := openapi3.NewOperation()
	op.Responses = openapi3.NewResponses(openapi3.WithStatus(http.StatusNoContent, v.fallback[v.cors.Preflight]))
	route := &routers.Route{Spec: v.doc, Path: path, PathItem: &openapi3.PathItem{}, Method: req.Method, Operation: op}
	errs := []error{v.checkResponse(ctx, route, req, ex)}
	var methods []string
	for m := range v.doc.Paths.Find(path).Operations() {
		methods = append(methods, strings.ToUpper(m))
	}
	slices.Sort(methods)
	if want, got := strings.Join(methods, ", "), ex.Header.Get("Access-Control-Allow-Methods"); got != want {
		errs = append(errs, fmt.Errorf("the preflight allows the methods %q, the document lists %q", got, want))
	}
	return errors.Join(errs...)
}

// checkCORS checks the CORS headers of any answer: never
// Access-Control-Allow-Credentials; on a CORS path, an
// Access-Control-Allow-Origin only for a request with an Origin, equal to
// it, with Vary: Origin; elsewhere, none but "*" (the public documents).
func (v *Validator) checkCORS(path string, ex Exchange) error {
	var errs []error
	if _, ok := ex.Header["Access-Control-Allow-Credentials"]; ok {
		errs = append(errs, errors.New("the answer allows credentials (Access-Control-Allow-Credentials)"))
	}
	acao := ex.Header.Values("Access-Control-Allow-Origin")
	switch {
	case len(acao) == 0:
	case len(acao) > 1:
		errs = append(errs, fmt.Errorf("%d Access-Control-Allow-Origin headers", len(acao)))
	case v.corsPath(path):
		origins := ex.Request.Header.Values("Origin")
		if len(origins) != 1 || acao[0] != origins[0] {
			errs = append(errs, fmt.Errorf("Access-Control-Allow-Origin is %q for a request from %q: want the request's one origin", acao[0], origins))
		}
		if acao[0] == "*" {
			errs = append(errs, errors.New(`Access-Control-Allow-Origin "*" on an endpoint of the API`))
		}
		if !varyHas(ex.Header, "Origin") {
			errs = append(errs, errors.New("an answer that allows an origin has no Vary: Origin"))
		}
	case acao[0] != "*":
		errs = append(errs, fmt.Errorf("Access-Control-Allow-Origin is %q on a path outside %q", acao[0], v.cors.Paths))
	}
	return errors.Join(errs...)
}

// varyHas reports whether h's Vary names field.
func varyHas(h http.Header, field string) bool {
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), field) {
				return true
			}
		}
	}
	return false
}
