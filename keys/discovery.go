package keys

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/tenant"
)

// Endpoints are the paths, relative to a project's base_url, of what the
// discovery document names. The routing table that serves them supplies
// them, so each path is written once.
type Endpoints struct {
	// Discovery is the path of the discovery document itself.
	Discovery string
	// JWKS is the path of the public key set.
	JWKS string
	// Introspection is the path of the introspection endpoint.
	Introspection string
	// Revocations is the path of the revocation feed.
	Revocations string
}

// Discovery is the discovery document: the OpenID Provider Metadata members
// that off-the-shelf JWT validators read (issuer, jwks_uri), the RFC 8414
// introspection endpoint and the ways its clients authenticate
// (IntrospectionAuthMethods), and Latchkey's revocation feed.
//
// IDTokenSigningAlgValuesSupported lists the algorithms of the project's
// published keys, the active key's first.
type Discovery struct {
	Issuer                           string   `json:"issuer"`
	JWKSURI                          string   `json:"jwks_uri"`
	IntrospectionEndpoint            string   `json:"introspection_endpoint"`
	IntrospectionAuthMethods         []string `json:"introspection_endpoint_auth_methods_supported"`
	RevocationFeedEndpoint           string   `json:"revocation_feed_endpoint"`
	IDTokenSigningAlgValuesSupported []string `json:"id_token_signing_alg_values_supported"`
}

// DiscoveryHandler returns the handler of GET
// {base_url}/.well-known/openid-configuration: the request's project's
// [Discovery] document, with base_url its issuer (KeyringOptions.Issuer). For
// a project without an issuer, base_url is taken from the request: its
// scheme (https under TLS), its Host and the path it was sent to, less
// ep.Discovery. It needs no token; the answer may be cached as long as the
// key set's.
func (k *Keyring) DiscoveryHandler(ep Endpoints) http.Handler {
	return httpapi.Handle(k.logger, func(w http.ResponseWriter, r *http.Request) error {
		project, ok := tenant.FromContext(r.Context())
		if !ok {
			return errNoProject
		}
		algs, err := k.publishedAlgorithms(r.Context(), project)
		if err != nil {
			return err
		}
		base := k.issuer(project)
		if base == "" {
			base = httpapi.RequestBase(r, ep.Discovery)
		}
		body, err := json.Marshal(Discovery{
			Issuer:                           base,
			JWKSURI:                          base + ep.JWKS,
			IntrospectionEndpoint:            base + ep.Introspection,
			IntrospectionAuthMethods:         IntrospectionAuthMethods(),
			RevocationFeedEndpoint:           base + ep.Revocations,
			IDTokenSigningAlgValuesSupported: algs,
		})
		if err != nil {
			return err
		}
		k.writePublic(w, r, body)
		return nil
	})
}

// publishedAlgorithms returns the algorithms of the project's published
// (unretired) keys, each once, the active key's first.
func (k *Keyring) publishedAlgorithms(ctx context.Context, project string) ([]string, error) {
	recs, err := k.st.ListSigningKeys(ctx, project)
	if err != nil {
		return nil, fmt.Errorf("keys: discovery: %w", err)
	}
	algs := []string{}
	for _, rec := range slices.Backward(recs) {
		if !rec.Retired() && CheckAlgorithm(rec.Algorithm) == nil && !slices.Contains(algs, rec.Algorithm) {
			algs = append(algs, rec.Algorithm)
		}
	}
	return algs, nil
}

// IntrospectionAuthMethods returns the ways a client of the introspection
// endpoint authenticates, as the discovery document names them (RFC 8414):
// "client_secret_basic" (the API key's id and token as HTTP Basic
// credentials, [Verifier.APIKeyClient]) and "bearer" (the token as a bearer
// token).
func IntrospectionAuthMethods() []string { return []string{"client_secret_basic", "bearer"} }

// writePublic writes body, a public JSON document, with the key set's
// Cache-Control; HEAD gets the headers only.
func (k *Keyring) writePublic(w http.ResponseWriter, r *http.Request, body []byte) {
	body = append(body, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "public, max-age="+strconv.Itoa(int(k.jwksMaxAge.Seconds())))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}
