package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/latchkey-dev/latchkey/keys"
)

// Bounds on what the verifier reads from Latchkey.
const (
	// maxDocumentBytes bounds the discovery document, the key set and a
	// page of the feed (at most 100 items of a few ids each), with room to
	// spare.
	maxDocumentBytes = 1 << 20
	// maxKidLen bounds a kid the key set may name; Latchkey's are far
	// shorter.
	maxKidLen = 64
)

// response is an answer read whole, at most maxDocumentBytes.
type response struct {
	status int
	header http.Header
	body   []byte
}

// get sends GET u, with the API key as bearer token when auth is set, and
// reads the answer. A body over maxDocumentBytes is an error.
func (v *Verifier) get(ctx context.Context, u string, auth bool) (response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return response{}, err
	}
	req.Header.Set("Accept", "application/json")
	if auth {
		req.Header.Set("Authorization", "Bearer "+v.apiKey)
	}
	res, err := v.client.Do(req)
	if err != nil {
		return response{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxDocumentBytes+1))
	if err != nil {
		return response{}, fmt.Errorf("reading the answer of GET %s: %w", u, err)
	}
	if len(body) > maxDocumentBytes {
		return response{}, fmt.Errorf("the answer of GET %s exceeds %d bytes", u, maxDocumentBytes)
	}
	return response{status: res.StatusCode, header: res.Header, body: body}, nil
}

// decodeJSON decodes a 200 application/json answer into dst, or describes
// what else it was.
func decodeJSON(what string, res response, dst any) error {
	if res.status != http.StatusOK {
		return fmt.Errorf("%s: %s", what, describeStatus(res))
	}
	if mt, _, err := mime.ParseMediaType(res.header.Get("Content-Type")); err != nil || mt != "application/json" {
		return fmt.Errorf("%s: the answer is not application/json", what)
	}
	if err := json.Unmarshal(res.body, dst); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// describeStatus describes a non-200 answer: its status and, for a
// problem+json body, its code.
func describeStatus(res response) string {
	s := fmt.Sprintf("HTTP %d", res.status)
	var p struct {
		Code string `json:"code"`
	}
	if json.Unmarshal(res.body, &p) == nil && p.Code != "" && len(p.Code) <= 64 {
		s += " " + p.Code
	}
	return s
}

// checkBaseURL returns baseURL without a trailing slash if it is an
// absolute http or https URL with no query, fragment or user information.
func checkBaseURL(baseURL string) (string, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("remote: base URL %q is not an http or https URL such as https://id.example.com", baseURL)
	}
	return strings.TrimSuffix(baseURL, "/"), nil
}

// discover reads the discovery document of the base_url v.issuer and keeps
// the key set's and the feed's addresses. The document's issuer must be the
// base_url exactly, and both addresses must lie under it: the API key is
// sent to the feed, so the document may not send it elsewhere.
func (v *Verifier) discover(ctx context.Context) error {
	res, err := v.get(ctx, v.issuer+discoveryPath, false)
	if err != nil {
		return fmt.Errorf("remote: reading the discovery document: %w", err)
	}
	var d keys.Discovery
	if err := decodeJSON("remote: the discovery document", res, &d); err != nil {
		return err
	}
	if d.Issuer != v.issuer {
		return fmt.Errorf("remote: the discovery document names the issuer %q, not the base URL %q", d.Issuer, v.issuer)
	}
	for _, ep := range []struct{ name, u string }{
		{"jwks_uri", d.JWKSURI},
		{"revocation_feed_endpoint", d.RevocationFeedEndpoint},
	} {
		if !strings.HasPrefix(ep.u, v.issuer+"/") {
			return fmt.Errorf("remote: the discovery document's %s %q is not under the base URL", ep.name, ep.u)
		}
		if _, err := url.Parse(ep.u); err != nil {
			return fmt.Errorf("remote: the discovery document's %s is not a URL", ep.name)
		}
	}
	v.jwksURL, v.feedURL = d.JWKSURI, d.RevocationFeedEndpoint
	return nil
}

// discoveryPath is where a project serves its discovery document, under its
// base_url.
const discoveryPath = "/.well-known/openid-configuration"

// fetchKeys reads the project's key set: its signature keys by kid, each
// with the algorithm its JWK names (keys.JWK.PublicKey), the only one the
// tokens it verifies may name. Members that are not signature keys of
// Latchkey's algorithms are skipped; a kid given twice, or a member that
// names one of those algorithms but is not a well-formed key of it, makes
// the whole set an error, since it cannot be used safely.
func (v *Verifier) fetchKeys(ctx context.Context) (map[string]keys.PublicKey, error) {
	res, err := v.get(ctx, v.jwksURL, false)
	if err != nil {
		return nil, fmt.Errorf("remote: reading the key set: %w", err)
	}
	var set struct {
		Keys []keys.JWK `json:"keys"`
	}
	if err := decodeJSON("remote: the key set", res, &set); err != nil {
		return nil, err
	}
	m := make(map[string]keys.PublicKey, len(set.Keys))
	for _, k := range set.Keys {
		if keys.CheckAlgorithm(k.Alg) != nil || (k.Use != "" && k.Use != "sig") {
			continue
		}
		if !strings.HasPrefix(k.Kid, "sk_") || len(k.Kid) > maxKidLen {
			return nil, fmt.Errorf("remote: the key set has an %s key with a bad kid", k.Alg)
		}
		pub, err := k.PublicKey()
		if err != nil {
			return nil, fmt.Errorf("remote: the key set's key %s is not a well-formed %s key", k.Kid, k.Alg)
		}
		if _, dup := m[k.Kid]; dup {
			return nil, fmt.Errorf("remote: the key set names %s twice", k.Kid)
		}
		m[k.Kid] = pub
	}
	return m, nil
}
