package openapitest

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/golang-jwt/jwt/v5"
)

// maxTokenBytes is the longest bearer token the document allows (8 KiB).
const maxTokenBytes = 8 << 10

// authenticate is the openapi3filter.AuthenticationFunc of a Validator: it
// says whether the request carries what the security scheme names, by its
// shape only (the server decides validity). A bearer scheme needs exactly
// one Authorization header, "Bearer" in any case, spaces and an RFC 6750
// b64token of at most 8 KiB; when the scheme names a subject prefix
// (SubjectPrefixKey), the token must be a JWT whose sub, read without
// verifying the signature, starts with it. A basic scheme needs "Basic"
// client credentials as RFC 6749 2.3.1 sends them (base64 of the
// form-urlencoded id, ":" and secret) whose secret is such a JWT and whose
// id is its sub. Its errors never quote the token.
func (v *Validator) authenticate(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if v.opts.NoAuthentication {
		return nil
	}
	scheme := in.SecurityScheme
	if scheme == nil || scheme.Type != "http" {
		return fmt.Errorf("security scheme %q: only http schemes are known to this helper", in.SecuritySchemeName)
	}
	vals := in.RequestValidationInput.Request.Header.Values("Authorization")
	if len(vals) != 1 {
		return fmt.Errorf("%s: %d Authorization headers, not one", in.SecuritySchemeName, len(vals))
	}
	name, cred, _ := strings.Cut(vals[0], " ")
	cred = strings.TrimLeft(cred, " ")
	var token, id string
	switch {
	case strings.EqualFold(scheme.Scheme, "bearer"):
		switch {
		case !strings.EqualFold(name, "Bearer"):
			return fmt.Errorf("%s: the Authorization scheme is not Bearer", in.SecuritySchemeName)
		case cred == "" || len(cred) > maxTokenBytes || !isB64Token(cred):
			return fmt.Errorf("%s: the bearer token is not a b64token of at most %d bytes", in.SecuritySchemeName, maxTokenBytes)
		}
		token = cred
	case strings.EqualFold(scheme.Scheme, "basic"):
		if !strings.EqualFold(name, "Basic") {
			return fmt.Errorf("%s: the Authorization scheme is not Basic", in.SecuritySchemeName)
		}
		var err error
		if id, token, err = basicCredentials(cred); err != nil {
			return fmt.Errorf("%s: %w", in.SecuritySchemeName, err)
		}
	default:
		return fmt.Errorf("security scheme %q: only http bearer and basic schemes are known to this helper", in.SecuritySchemeName)
	}
	prefix, _ := scheme.Extensions[SubjectPrefixKey].(string)
	if prefix == "" {
		return nil
	}
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, claims); err != nil {
		return fmt.Errorf("%s: the token is not a JWT", in.SecuritySchemeName)
	}
	sub, _ := claims.GetSubject()
	if !strings.HasPrefix(sub, prefix) {
		return errors.New(in.SecuritySchemeName + ": the token's sub does not start with " + prefix)
	}
	if id != "" && sub != id {
		return errors.New(in.SecuritySchemeName + ": the user name is not the token's sub")
	}
	return nil
}

// basicCredentials decodes the credentials of HTTP Basic client
// authentication as RFC 6749 2.3.1 sends them: base64 of id ":" secret,
// each form-urlencoded. Its errors never quote them.
func basicCredentials(cred string) (id, secret string, err error) {
	raw, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		// RFC 7617's token68 makes the padding optional.
		if raw, err = base64.RawStdEncoding.DecodeString(cred); err != nil {
			return "", "", errors.New("the Basic credentials are not base64")
		}
	}
	rawID, rawSecret, ok := strings.Cut(string(raw), ":")
	if !ok {
		return "", "", errors.New(`the Basic credentials have no ":"`)
	}
	id, err1 := url.QueryUnescape(rawID)
	secret, err2 := url.QueryUnescape(rawSecret)
	if err1 != nil || err2 != nil || id == "" || secret == "" {
		return "", "", errors.New("the Basic user name or password is empty or badly escaped")
	}
	return id, secret, nil
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
