package keys

import (
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/tenant"
)

// BasicChallenge is the WWW-Authenticate challenge of a refused request that
// presented HTTP Basic client credentials (RFC 6749 5.2 asks for the scheme
// the client used).
const BasicChallenge = `Basic realm="latchkey", charset="UTF-8"`

// APIKeyClient is [Verifier.APIKeyOnly] that also takes the API key as the
// client credentials of HTTP Basic authentication, as RFC 6749 2.3.1 sends
// them (client_secret_basic, the default of RFC 7662 introspection
// clients): "Authorization: Basic base64(id:secret)", where id is the API
// key's id ("key_...") and secret its token, each form-urlencoded before
// base64.
//
// A request with Basic credentials is answered as under APIKeyOnly, with
// [BasicChallenge] as the WWW-Authenticate of its 401 answers: 401
// invalid_token for malformed credentials (not base64, no ":", an empty id
// or secret, a bad escape), for a secret Verify refuses, and for a secret
// whose subject is not the id given (a mismatch of id and token: another
// key's id, or a key's id with a login token); 403 forbidden for a valid
// login token given with its own subject, the user's id, as the id, as a
// bearer login token is. Any other request (Bearer, or no credentials) is
// APIKeyOnly's.
func (v *Verifier) APIKeyClient(next http.Handler) http.Handler {
	bearer := v.APIKeyOnly(next)
	gate := v.apiKeyGate(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, isBasic, reason := basicCredentials(r.Header)
		if !isBasic {
			bearer.ServeHTTP(w, r)
			return
		}
		ctx := r.Context()
		project, ok := tenant.FromContext(ctx)
		if !ok {
			problem.Write(w, r, v.logger, errors.New("keys: APIKeyClient: no project in the request context (mount it below the tenant resolver)"))
			return
		}
		if reason != "" {
			v.unauthorizedBasic(w, r, project, reason)
			return
		}
		p, err := v.Verify(ctx, project, secret)
		switch {
		case errors.Is(err, ErrInvalidToken):
			v.unauthorizedBasic(w, r, project, ReasonOf(err))
			return
		case err != nil:
			problem.Write(w, r, v.logger, err)
			return
		case p.Subject != id:
			v.unauthorizedBasic(w, r, project, "client id is not the token's subject")
			return
		}
		// A login token given with its own subject goes on to the gate,
		// which answers 403 as it does for a bearer login token.
		gate.ServeHTTP(w, r.WithContext(contextWithAuth(ctx, &requestAuth{principal: p})))
	})
}

// unauthorizedBasic logs a failed Basic authentication and answers 401
// invalid_token with [BasicChallenge].
func (v *Verifier) unauthorizedBasic(w http.ResponseWriter, r *http.Request, project, reason string) {
	v.logAuthFailure(r, project, reason)
	problem.Write(w, r, v.logger, problem.New(problem.CodeInvalidToken,
		"The client credentials are malformed, or name an API key that is expired, revoked, not valid for this project or not the one given.").
		WithHeader("WWW-Authenticate", BasicChallenge))
}

// basicCredentials reads the client credentials of an "Authorization:
// Basic" header (RFC 7617, with RFC 6749 2.3.1's form-urlencoding of each
// part). isBasic reports whether the request's one Authorization header is
// of the Basic scheme (any case); reason is empty when id and secret were
// read and otherwise says, for the log, what was wrong. Neither part is
// ever put in reason.
func basicCredentials(h http.Header) (id, secret string, isBasic bool, reason string) {
	vals := h.Values("Authorization")
	if len(vals) != 1 {
		return "", "", false, ""
	}
	scheme, enc, _ := strings.Cut(vals[0], " ")
	if !strings.EqualFold(scheme, "Basic") {
		return "", "", false, ""
	}
	enc = strings.TrimLeft(enc, " ") // auth-scheme 1*SP token68 (RFC 9110 11.4)
	// base64 of the secret, the id and its escapes: a generous bound.
	if enc == "" || len(enc) > 4*MaxTokenBytes {
		return "", "", true, "malformed basic credentials"
	}
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		if raw, err = base64.RawStdEncoding.DecodeString(enc); err != nil {
			return "", "", true, "malformed basic credentials"
		}
	}
	if !utf8.Valid(raw) {
		return "", "", true, "malformed basic credentials"
	}
	rawID, rawSecret, ok := strings.Cut(string(raw), ":")
	if !ok {
		return "", "", true, "malformed basic credentials"
	}
	id, err1 := url.QueryUnescape(rawID)
	secret, err2 := url.QueryUnescape(rawSecret)
	if err1 != nil || err2 != nil || id == "" || secret == "" {
		return "", "", true, "malformed basic credentials"
	}
	if len(secret) > MaxTokenBytes {
		return "", "", true, "token too large"
	}
	return id, secret, true, ""
}
