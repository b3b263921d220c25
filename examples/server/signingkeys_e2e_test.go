package main

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// headerOf returns the decoded JOSE header of token.
func headerOf(t *testing.T, token string) map[string]any {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[0])
	require.NoError(t, err)
	var h map[string]any
	require.NoError(t, json.Unmarshal(raw, &h))
	return h
}

// TestE2E_signingAlgorithms: project create -alg chooses the project's
// algorithm; key rotate-signing keeps it or changes it with -alg and
// prints the new key; signing-key list lists the keys. The server signs
// with the active key's algorithm from the next token on, publishes each
// key in its algorithm's form and lists the algorithms in discovery, and
// tokens of the older key keep working.
func TestE2E_signingAlgorithms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ok(t, dir, "", "project create", "-alg", "RS256", "rs")
	ok(t, dir, "", "project create", "-alg", "ES256", "ec")
	ok(t, dir, "", "project create", "ed")
	for _, bad := range [][]string{
		{"project create", "-alg", "HS256", "hs"},
		{"project create", "-alg", "rs256", "hs"},
		{"key rotate-signing", "-project", "rs", "-alg", "none"},
	} {
		res := cli(t, dir, "", bad...)
		assert.Equal(t, 2, res.code, "%v: %s", bad, res.stderr)
		assert.Contains(t, res.stderr, "must be one of EdDSA, ES256, RS256", bad)
	}
	res := cli(t, dir, "", "signing-key list", "-project", "hs")
	assert.NotEqual(t, 0, res.code, "no project hs was created")

	tokens := map[string]string{}
	for _, p := range []string{"rs", "ec", "ed"} {
		tokens[p] = ok(t, dir, "", "key create", "-project", p, "-name", "k")[0]["token"].(string)
	}
	s := startServer(t, dir)
	for p, alg := range map[string]string{"rs": "RS256", "ec": "ES256", "ed": "EdDSA"} {
		assert.Equal(t, alg, headerOf(t, tokens[p])["alg"], p)
		assert.Equal(t, http.StatusOK, s.do("GET", "/p/"+p+"/v1/contacts", tokens[p], "").status, p)
		keys := s.do("GET", "/p/"+p+"/.well-known/jwks.json", "", "").json(t)["keys"].([]any)
		require.Len(t, keys, 1)
		assert.Equal(t, alg, keys[0].(map[string]any)["alg"], p)
		d := s.do("GET", "/p/"+p+"/.well-known/openid-configuration", "", "").json(t)
		assert.Equal(t, []any{alg}, d["id_token_signing_alg_values_supported"], p)
	}
	assert.Equal(t, "RSA", s.do("GET", "/p/rs/.well-known/jwks.json", "", "").json(t)["keys"].([]any)[0].(map[string]any)["kty"])

	// A rotation without -alg keeps RS256; with -alg, ES256.
	list := ok(t, dir, "", "signing-key list", "-project", "rs")
	require.Len(t, list, 1)
	first := list[0]["kid"].(string)
	assert.Equal(t, map[string]any{"kid": first, "alg": "RS256", "created_at": list[0]["created_at"], "retired_at": nil, "active": true}, list[0])
	same := ok(t, dir, "", "key rotate-signing", "-project", "rs")
	require.Len(t, same, 1)
	assert.ElementsMatch(t, []string{"alg", "created_at", "kid"}, memberNames(same[0]))
	assert.Equal(t, "RS256", same[0]["alg"])
	ec := ok(t, dir, "", "key rotate-signing", "-project", "rs", "-alg", "ES256")[0]
	assert.Equal(t, "ES256", ec["alg"])
	list = ok(t, dir, "", "signing-key list", "-project", "rs")
	require.Len(t, list, 3)
	assert.Equal(t, []any{first, same[0]["kid"], ec["kid"]}, []any{list[0]["kid"], list[1]["kid"], list[2]["kid"]})
	assert.Equal(t, []any{"RS256", "RS256", "ES256"}, []any{list[0]["alg"], list[1]["alg"], list[2]["alg"]})
	assert.Equal(t, []any{false, false, true}, []any{list[0]["active"], list[1]["active"], list[2]["active"]})

	// The server signs with the new key from the next token on, and the
	// RS256 key keeps verifying.
	newKey := ok(t, dir, "", "key create", "-project", "rs", "-name", "after")[0]["token"].(string)
	assert.Equal(t, map[string]any{"alg": "ES256", "typ": "JWT", "kid": ec["kid"]}, headerOf(t, newKey))
	for _, tok := range []string{newKey, tokens["rs"]} {
		assert.Equal(t, http.StatusOK, s.do("GET", "/p/rs/v1/contacts", tok, "").status)
	}
	d := s.do("GET", "/p/rs/.well-known/openid-configuration", "", "").json(t)
	assert.Equal(t, []any{"ES256", "RS256"}, d["id_token_signing_alg_values_supported"])
	// A token of one project is refused by another, whatever the algorithms.
	s.problem("GET", "/p/ec/v1/contacts", tokens["rs"], http.StatusUnauthorized, "invalid_token")
	s.problem("GET", "/p/rs/v1/contacts", tokens["ec"], http.StatusUnauthorized, "invalid_token")
}
