package keys_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/keys"
)

func (e *env) jwks(project string) (*http.Response, keys.JWKS) {
	e.t.Helper()
	res, err := e.srv.Client().Get(e.srv.URL + "/p/" + project + "/.well-known/jwks.json")
	require.NoError(e.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	var set keys.JWKS
	require.NoError(e.t, json.Unmarshal(raw, &set), "%s", raw)
	var generic map[string][]map[string]any
	require.NoError(e.t, json.Unmarshal(raw, &generic))
	for _, k := range generic["keys"] {
		members := map[any][]string{
			"OKP": {"kty", "crv", "x", "kid", "use", "alg"},
			"EC":  {"kty", "crv", "x", "y", "kid", "use", "alg"},
			"RSA": {"kty", "n", "e", "kid", "use", "alg"},
		}[k["kty"]]
		require.ElementsMatch(e.t, members, mapKeys(k), "members of a JWK")
	}
	return res, set
}

func mapKeys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// verifyWithJWKS verifies token the way another service would, using only
// the published JWKS.
func verifyWithJWKS(t *testing.T, set keys.JWKS, project, token string) error {
	t.Helper()
	_, err := jwt.Parse(token, func(tk *jwt.Token) (any, error) {
		for _, k := range set.Keys {
			if k.Kid == tk.Header["kid"] {
				if tk.Method.Alg() != k.Alg {
					return nil, errors.New("alg is not the key's")
				}
				return publicOfJWK(t, k), nil
			}
		}
		return nil, errors.New("kid not in JWKS")
	}, jwt.WithValidMethods([]string{"EdDSA", "ES256", "RS256"}), jwt.WithAudience(project), jwt.WithTimeFunc(func() time.Time { return t0 }))
	return err
}

func TestJWKSHandler(t *testing.T) {
	e := newEnv(t, nil, "alpha", "beta")
	ctx := context.Background()
	first, err := e.st.ActiveSigningKey(ctx, "alpha")
	require.NoError(t, err)

	res, set := e.jwks("alpha") // no Authorization header
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "application/json", res.Header.Get("Content-Type"))
	require.Equal(t, "public, max-age=300", res.Header.Get("Cache-Control"))
	require.Len(t, set.Keys, 1)
	k := set.Keys[0]
	require.Equal(t, keys.JWK{Kty: "OKP", Crv: "Ed25519", X: b64(first.PublicKey), Kid: first.ID, Use: "sig", Alg: "EdDSA"}, k)

	oldTok := e.loginToken("alpha")
	_, oldKey := e.apiKey("alpha")
	require.NoError(t, verifyWithJWKS(t, set, "alpha", oldTok))
	require.NoError(t, verifyWithJWKS(t, set, "alpha", oldKey))

	// beta publishes only its own key, which does not verify alpha's token.
	_, betaSet := e.jwks("beta")
	require.Len(t, betaSet.Keys, 1)
	require.NotEqual(t, first.ID, betaSet.Keys[0].Kid)
	require.Error(t, verifyWithJWKS(t, betaSet, "alpha", oldTok))

	// After a rotation both keys are published, the active one first.
	rotated, err := e.kr.Rotate(ctx, "alpha")
	require.NoError(t, err)
	_, set = e.jwks("alpha")
	require.Len(t, set.Keys, 2)
	require.Equal(t, rotated.ID, set.Keys[0].Kid)
	require.Equal(t, first.ID, set.Keys[1].Kid)
	require.NoError(t, verifyWithJWKS(t, set, "alpha", e.loginToken("alpha")))
	require.NoError(t, verifyWithJWKS(t, set, "alpha", oldTok))

	// A retired key is no longer published.
	require.NoError(t, e.kr.Retire(ctx, "alpha", first.ID))
	_, set = e.jwks("alpha")
	require.Len(t, set.Keys, 1)
	require.Equal(t, rotated.ID, set.Keys[0].Kid)
	require.Error(t, verifyWithJWKS(t, set, "alpha", oldTok))

	// An unknown project publishes an empty set, never null.
	_, set = e.jwks("nosuchproject")
	require.NotNil(t, set.Keys)
	require.Empty(t, set.Keys)

	// HEAD gets the headers (the routing table sends it here with GET).
	res, err = e.srv.Client().Head(e.srv.URL + "/p/alpha/.well-known/jwks.json")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
}
