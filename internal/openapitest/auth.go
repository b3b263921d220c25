package openapitest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/golang-jwt/jwt/v5"
)

// maxTokenBytes is the longest bearer token the document allows (8 KiB).
const maxTokenBytes = 8 << 10

// authenticate is the openapi3filter.AuthenticationFunc of a Validator: it
// says whether the request carries what the security scheme names, by its
// shape only (the server decides validity). A bearer scheme needs exactly
// one Authorization header, "Bearer" in any case, one space and an RFC 6750
// b64token of at most 8 KiB; when the scheme names a subject prefix
// (SubjectPrefixKey), the token must be a JWT whose sub, read without
// verifying the signature, starts with it. Its errors never quote the
// token.
func (v *Validator) authenticate(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if v.opts.NoAuthentication {
		return nil
	}
	scheme := in.SecurityScheme
	if scheme == nil || scheme.Type != "http" || !strings.EqualFold(scheme.Scheme, "bearer") {
		return fmt.Errorf("security scheme %q: only http bearer schemes are known to this helper", in.SecuritySchemeName)
	}
	vals := in.RequestValidationInput.Request.Header.Values("Authorization")
	if len(vals) != 1 {
		return fmt.Errorf("%s: %d Authorization headers, not one", in.SecuritySchemeName, len(vals))
	}
	name, token, _ := strings.Cut(vals[0], " ")
	switch {
	case !strings.EqualFold(name, "Bearer"):
		return fmt.Errorf("%s: the Authorization scheme is not Bearer", in.SecuritySchemeName)
	case token == "" || len(token) > maxTokenBytes || !isB64Token(token):
		return fmt.Errorf("%s: the bearer token is not a b64token of at most %d bytes", in.SecuritySchemeName, maxTokenBytes)
	}
	prefix, _ := scheme.Extensions[SubjectPrefixKey].(string)
	if prefix == "" {
		return nil
	}
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, claims); err != nil {
		return fmt.Errorf("%s: the bearer token is not a JWT", in.SecuritySchemeName)
	}
	if sub, _ := claims.GetSubject(); !strings.HasPrefix(sub, prefix) {
		return errors.New(in.SecuritySchemeName + ": the token's sub does not start with " + prefix)
	}
	return nil
}

// isB64Token reports whether s matches RFC 6750's
// b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	return strings.Trim(body, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/") == ""
}
