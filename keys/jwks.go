package keys

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/tenant"
)

// JWK is one public key of a JSON Web Key Set, in the RFC 8037 form for
// Ed25519.
type JWK struct {
	// Kty is always "OKP".
	Kty string `json:"kty"`
	// Crv is always "Ed25519".
	Crv string `json:"crv"`
	// X is the 32-byte public key, base64url without padding.
	X string `json:"x"`
	// Kid is the key id, the kid of the tokens the key signs.
	Kid string `json:"kid"`
	// Use is always "sig".
	Use string `json:"use"`
	// Alg is always "EdDSA".
	Alg string `json:"alg"`
}

// JWKS is an RFC 7517 JSON Web Key Set.
type JWKS struct {
	// Keys are the project's unretired keys, newest (the active one) first.
	// Never nil.
	Keys []JWK `json:"keys"`
}

// JWKSHandler returns the handler of GET {base_url}/.well-known/jwks.json:
// the public keys of the request's project (from tenant.FromContext) that
// are not retired, as a [JWKS], so other services can verify the project's
// tokens. It needs no token. The response may be cached for
// KeyringOptions.JWKSMaxAge.
func (k *Keyring) JWKSHandler() http.Handler {
	return httpapi.Handle(k.logger, func(w http.ResponseWriter, r *http.Request) error {
		project, ok := tenant.FromContext(r.Context())
		if !ok {
			return errNoProject
		}
		recs, err := k.st.ListSigningKeys(r.Context(), project)
		if err != nil {
			return fmt.Errorf("keys: jwks: %w", err)
		}
		set := JWKS{Keys: []JWK{}}
		for _, rec := range slices.Backward(recs) {
			if rec.Retired() {
				continue
			}
			set.Keys = append(set.Keys, JWK{
				Kty: "OKP",
				Crv: "Ed25519",
				X:   base64.RawURLEncoding.EncodeToString(rec.PublicKey),
				Kid: rec.ID,
				Use: "sig",
				Alg: "EdDSA",
			})
		}
		body, err := json.Marshal(set)
		if err != nil {
			return err
		}
		k.writePublic(w, r, body)
		return nil
	})
}

// errNoProject is the error of a handler mounted without a project in the
// request context (below no tenant resolver).
var errNoProject = errors.New("keys: no project in the request context")
