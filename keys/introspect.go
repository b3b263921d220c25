package keys

import (
	"errors"
	"net/http"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/tenant"
)

// Introspection is the answer of the introspection endpoint (RFC 7662): for
// a token valid in the project right now, Active and its claims; for
// anything else exactly {"active": false}.
type Introspection struct {
	Active    bool   `json:"active"`
	Issuer    string `json:"iss,omitempty"`
	Subject   string `json:"sub,omitempty"`
	Audience  string `json:"aud,omitempty"`
	IssuedAt  int64  `json:"iat,omitempty"`
	ID        string `json:"jti,omitempty"`
	TokenType string `json:"token_type,omitempty"` // "user" or "api_key"
	ExpiresAt int64  `json:"exp,omitempty"`        // login tokens, API keys with an expiry
	SessionID string `json:"sid,omitempty"`        // login tokens with a session
	// Scope is an API key's scopes, separated by spaces (RFC 7662 2.2);
	// absent for a key without scopes, which may do everything.
	Scope string `json:"scope,omitempty"`
	// Tags are a login token's tags ([] when none); absent otherwise.
	Tags []string `json:"tags,omitzero"`
}

// IntrospectHandler returns the handler of POST
// {base_url}/v1/identity/introspect (RFC 7662). It reads the form parameter
// token (a body application/x-www-form-urlencoded, as [httpapi.DecodeForm]
// requires; a missing or repeated token is 400 invalid_request) and answers
// 200 with an [Introspection], Cache-Control: no-store: the token's claims
// when v accepts it for the request's project right now, by the rules of
// Verify, and {"active": false} for anything else (expired, revoked, a
// retired signing key, an ended session, another project's token, a refresh
// token, garbage). A store failure is an error, never an answer. The token
// is not counted as a use of its API key.
//
// The handler expects its caller to be authenticated already (the routing
// table puts it behind [Verifier.APIKeyClient]). iss is the token's own, or,
// for a token minted without one, issuer(project) when that is not "".
func (v *Verifier) IntrospectHandler(issuer func(projectID string) string) http.Handler {
	return httpapi.Handle(v.logger, func(w http.ResponseWriter, r *http.Request) error {
		project, ok := tenant.FromContext(r.Context())
		if !ok {
			return errors.New("keys: introspect: no project in the request context")
		}
		form, err := httpapi.DecodeForm(w, r)
		if err != nil {
			return err
		}
		tokens, ok := form["token"]
		if !ok || len(tokens) != 1 || tokens[0] == "" {
			return problem.New(problem.CodeInvalidRequest, `The form parameter "token" is required, once.`)
		}
		c, err := v.verify(r.Context(), project, tokens[0], false)
		switch {
		case errors.Is(err, ErrInvalidToken):
			return httpapi.WriteJSON(w, http.StatusOK, Introspection{Active: false})
		case err != nil:
			return err
		}
		ans := Introspection{
			Active:    true,
			Issuer:    c.Issuer,
			Subject:   c.Subject,
			Audience:  c.Audience,
			IssuedAt:  c.IssuedAt.Unix(),
			ID:        c.ID,
			TokenType: c.Kind().String(),
		}
		if ans.Issuer == "" {
			ans.Issuer = issuer(project)
		}
		if c.Kind() == KindAPIKey {
			ans.Scope = c.Scope()
			if !c.ExpiresAt.IsZero() {
				ans.ExpiresAt = c.ExpiresAt.Unix()
			}
		}
		if c.Kind() == KindUser {
			ans.ExpiresAt = c.ExpiresAt.Unix()
			ans.SessionID = c.SessionID
			ans.Tags = c.Tags
			if ans.Tags == nil {
				ans.Tags = []string{}
			}
		}
		return httpapi.WriteJSON(w, http.StatusOK, ans)
	})
}
