package keys

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/tenant"
)

// JWK is one public key of a JSON Web Key Set (RFC 7517), in the form of
// its algorithm: kty "OKP" with crv "Ed25519" and x (RFC 8037) for EdDSA,
// kty "EC" with crv "P-256", x and y for ES256, kty "RSA" with n and e for
// RS256 (RFC 7518 6).
type JWK struct {
	// Kty is "OKP", "EC" or "RSA".
	Kty string `json:"kty"`
	// Crv is "Ed25519" (OKP) or "P-256" (EC); absent for RSA.
	Crv string `json:"crv,omitempty"`
	// X is the Ed25519 public key (32 bytes) or the P-256 point's x
	// coordinate (32 bytes), base64url without padding.
	X string `json:"x,omitempty"`
	// Y is the P-256 point's y coordinate (32 bytes), base64url.
	Y string `json:"y,omitempty"`
	// N is the RSA modulus, base64url of its big-endian bytes.
	N string `json:"n,omitempty"`
	// E is the RSA public exponent, base64url of its big-endian bytes.
	E string `json:"e,omitempty"`
	// Kid is the key id, the kid of the tokens the key signs.
	Kid string `json:"kid"`
	// Use is always "sig".
	Use string `json:"use"`
	// Alg is the key's algorithm, "EdDSA", "ES256" or "RS256": the only
	// alg of the tokens it verifies.
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
			pub, err := ParsePublicKey(rec.Algorithm, rec.PublicKey)
			if err != nil {
				// A record no verifier could use: leave it out, and say so.
				k.logger.ErrorContext(r.Context(), "keys: jwks: unusable signing key", "project", project, "kid", rec.ID, "err", err)
				continue
			}
			set.Keys = append(set.Keys, pub.JWK(rec.ID))
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
