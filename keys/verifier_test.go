package keys_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

func TestMiddleware_LoginToken(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	u := e.user("alpha", "admin", "ops")
	tok, sid := e.loginTokenOf(u)

	for range 2 { // first verification, then from the cache
		r := e.whoami("alpha", tok)
		requireOK(t, r, "alpha", "user")
		require.Equal(t, u.ID, r.body["subject"])
		require.Equal(t, []any{"admin", "ops"}, r.body["tags"])
	}

	// The token's shape is the contract's.
	h := decodeHeader(t, tok)
	require.Equal(t, "EdDSA", h["alg"])
	require.Equal(t, "JWT", h["typ"])
	active, err := e.st.ActiveSigningKey(context.Background(), "alpha")
	require.NoError(t, err)
	require.Equal(t, active.ID, h["kid"])
	c := decodeClaims(t, tok)
	require.Equal(t, "alpha", c["aud"], "aud is the project id, as a string")
	require.Equal(t, u.ID, c["sub"])
	require.EqualValues(t, t0.Unix(), c["iat"])
	require.EqualValues(t, t0.Unix()+86400, c["exp"])
	require.NotEmpty(t, c["jti"])
	require.Equal(t, sid, c["sid"], "a login token names its session")
	require.NotContains(t, c, "iss", "a Keyring without an Issuer mints no iss")
	require.Equal(t, []any{"admin", "ops"}, c["tags"])

	// A user without tags gets [] in the token and in the principal.
	r := e.whoami("alpha", e.loginToken("alpha"))
	requireOK(t, r, "alpha", "user")
	require.Equal(t, []any{}, r.body["tags"])
}

func TestMiddleware_APIKey(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	k, tok := e.apiKey("alpha")
	for range 2 {
		r := e.whoami("alpha", tok)
		requireOK(t, r, "alpha", "api_key")
		require.Equal(t, k.ID, r.body["subject"])
		require.Equal(t, []any{}, r.body["tags"])
	}
	c := decodeClaims(t, tok)
	require.Equal(t, k.ID, c["sub"])
	require.Equal(t, "alpha", c["aud"])
	require.NotContains(t, c, "exp", "permanent API keys have no exp")
	require.NotEmpty(t, c["jti"])
	require.Contains(t, c, "iat")
	require.NotContains(t, c, "sid", "an API key is in no session")
	k, err := e.st.GetAPIKey(context.Background(), "alpha", k.ID)
	require.NoError(t, err)
	require.Equal(t, decodeHeader(t, tok)["kid"], k.SigningKeyID, "the record names the key that signed it")

	// Still valid a year later: no expiry.
	e.clock.Advance(365 * 24 * time.Hour)
	requireOK(t, e.whoami("alpha", tok), "alpha", "api_key")
}

func TestMiddleware_Challenge(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	tok := e.loginToken("alpha")

	t.Run("no token", func(t *testing.T) {
		r := e.get("/p/alpha/v1/whoami", "")
		require.Equal(t, http.StatusUnauthorized, r.status)
		require.Equal(t, "Bearer", r.header.Get("WWW-Authenticate"), "no error attribute without a token (RFC 6750 3.1)")
		require.Equal(t, "application/problem+json", r.header.Get("Content-Type"))
		require.Equal(t, "invalid_token", r.body["code"])
		for _, f := range []string{"type", "title", "status", "detail", "code"} {
			require.Contains(t, r.body, f)
		}
	})
	t.Run("other scheme", func(t *testing.T) {
		r := e.get("/p/alpha/v1/whoami", "Basic dXNlcjpwYXNz")
		require.Equal(t, http.StatusUnauthorized, r.status)
		require.Equal(t, "Bearer", r.header.Get("WWW-Authenticate"))
	})
	t.Run("scheme case-insensitive", func(t *testing.T) {
		for _, s := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
			requireOK(t, e.get("/p/alpha/v1/whoami", s+" "+tok), "alpha", "user")
		}
		// RFC 6750: "Bearer" 1*SP b64token.
		requireOK(t, e.get("/p/alpha/v1/whoami", "Bearer  "+tok), "alpha", "user")
	})
	for name, h := range map[string]string{
		"garbage":      "Bearer not-a-jwt",
		"empty":        "Bearer ",
		"extra token":  "Bearer " + tok + " x",
		"two segments": "Bearer a.b",
	} {
		t.Run(name, func(t *testing.T) {
			requireInvalidToken(t, e.get("/p/alpha/v1/whoami", h))
		})
	}
	t.Run("two headers", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/p/alpha/v1/whoami", nil)
		req.Header.Add("Authorization", "Bearer "+tok)
		req.Header.Add("Authorization", "Bearer "+tok)
		requireInvalidToken(t, e.do(req))
	})
	t.Run("no project in context", func(t *testing.T) {
		r := e.get("/noproject/v1/whoami", "Bearer "+tok)
		require.Equal(t, http.StatusInternalServerError, r.status)
		require.Equal(t, "internal", r.body["code"])
	})
}

// TestMiddleware_QueryAndForm: a token is never taken from the query string
// or a form body, even a valid one.
func TestMiddleware_QueryAndForm(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	tok := e.loginToken("alpha")
	requireOK(t, e.whoami("alpha", tok), "alpha", "user") // valid, and now cached

	for _, q := range []string{"access_token", "token", "jwt", "authorization"} {
		r := e.get("/p/alpha/v1/whoami?"+q+"="+url.QueryEscape(tok), "")
		require.Equal(t, http.StatusUnauthorized, r.status, q)
		require.Equal(t, "Bearer", r.header.Get("WWW-Authenticate"), "a query token is not a presented token")
	}
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/p/alpha/v1/whoami",
		strings.NewReader(url.Values{"access_token": {tok}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r := e.do(req)
	require.Equal(t, http.StatusUnauthorized, r.status)
	require.Equal(t, "Bearer", r.header.Get("WWW-Authenticate"))
}

// TestVerify_Attacks presents forged and altered tokens to project alpha.
// Each would pass if the rule it names were missing.
func TestVerify_Attacks(t *testing.T) {
	e := newEnv(t, nil, "alpha", "beta")
	ctx := context.Background()
	alphaKey, err := e.st.ActiveSigningKey(ctx, "alpha")
	require.NoError(t, err)
	betaKey, err := e.st.ActiveSigningKey(ctx, "beta")
	require.NoError(t, err)
	alphaPriv, betaPriv := e.privateKey(alphaKey), e.privateKey(betaKey)
	_, attackerPriv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	attackerPub := attackerPriv.Public().(ed25519.PublicKey)

	// Control: the forging helper makes tokens the verifier accepts.
	good := forge(t, edHeader(alphaKey.ID), e.loginClaims("alpha"), ed25519Signer(alphaPriv))
	requireOK(t, e.whoami("alpha", good), "alpha", "user")
	goodKey, _ := e.apiKey("alpha")
	goodKeyClaims := map[string]any{"aud": "alpha", "sub": goodKey.ID, "iat": t0.Unix(), "jti": "k1"}
	requireOK(t, e.whoami("alpha", forge(t, edHeader(alphaKey.ID), goodKeyClaims, ed25519Signer(alphaPriv))), "alpha", "api_key")

	with := func(m map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(out, kv[i].(string))
			} else {
				out[kv[i].(string)] = kv[i+1]
			}
		}
		return out
	}
	lc := e.loginClaims("alpha")
	now := t0.Unix()

	signed := ed25519Signer(alphaPriv)
	swapPart := func(tok string, i int, part string) string {
		parts := strings.Split(tok, ".")
		parts[i] = part
		return strings.Join(parts, ".")
	}
	jsonB64 := func(v any) string {
		raw, err := json.Marshal(v)
		require.NoError(t, err)
		return b64(raw)
	}
	hs256 := func(secret []byte) string {
		tk := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims(lc))
		tk.Header["kid"] = alphaKey.ID
		s, err := tk.SignedString(secret)
		require.NoError(t, err)
		return s
	}
	attackerJWK := map[string]any{"kty": "OKP", "crv": "Ed25519", "x": b64(attackerPub)}
	noneHeader := map[string]any{"alg": "none", "typ": "JWT", "kid": alphaKey.ID}

	cases := []struct {
		name, token, reason string
	}{
		{"alg none", forge(t, noneHeader, lc, nil), "algorithm not allowed"},
		{"alg none signed", forge(t, noneHeader, lc, signed), "algorithm not allowed"},
		{"HS256 with the public key as secret", hs256(alphaKey.PublicKey), "algorithm not allowed"},
		{"HS256 with the JWKS x as secret", hs256([]byte(b64(alphaKey.PublicKey))), "algorithm not allowed"},
		{"unknown kid", forge(t, edHeader(store.NewID(store.PrefixSigningKey)), lc, signed), "unknown kid"},
		{"no kid", forge(t, map[string]any{"alg": "EdDSA", "typ": "JWT"}, lc, signed), "bad kid"},
		{"kid not a string", forge(t, with(edHeader(""), "kid", 7), lc, signed), "bad kid"},
		{"attacker key, alpha kid", forge(t, edHeader(alphaKey.ID), lc, ed25519Signer(attackerPriv)), "bad signature"},
		{"beta kid, aud alpha, signed by beta", forge(t, edHeader(betaKey.ID), lc, ed25519Signer(betaPriv)), "unknown kid"},
		{"alpha kid, aud beta, signed by alpha", forge(t, edHeader(alphaKey.ID), with(lc, "aud", "beta"), signed), "wrong audience"},
		{"no aud", forge(t, edHeader(alphaKey.ID), with(lc, "aud", nil), signed), "not exactly one audience"},
		{"aud array with another project", forge(t, edHeader(alphaKey.ID), with(lc, "aud", []string{"alpha", "beta"}), signed),
			"not exactly one audience"},
		{"login token without exp", forge(t, edHeader(alphaKey.ID), with(lc, "exp", nil), signed), "login token without exp"},
		{"login token living 25 h", forge(t, edHeader(alphaKey.ID), with(lc, "exp", now+25*3600), signed),
			"login token lifetime too long"},
		{"login token expired", forge(t, edHeader(alphaKey.ID), with(lc, "iat", now-86400-31, "exp", now-31), signed), "expired"},
		{"issued in the future", forge(t, edHeader(alphaKey.ID), with(lc, "iat", now+3600, "exp", now+3600+86400), signed),
			"issued in the future"},
		{"not before in the future", forge(t, edHeader(alphaKey.ID), with(lc, "nbf", now+3600), signed), "not valid yet"},
		{"no iat", forge(t, edHeader(alphaKey.ID), with(lc, "iat", nil), signed), "missing iat"},
		{"no jti", forge(t, edHeader(alphaKey.ID), with(lc, "jti", nil), signed), "missing jti"},
		{"API key token with exp before iat", forge(t, edHeader(alphaKey.ID), with(goodKeyClaims, "exp", now-3600), signed),
			"API key token with exp not after iat"},
		{"API key token expired a second ago, no leeway", forge(t, edHeader(alphaKey.ID), with(goodKeyClaims, "iat", now-60, "exp", now-1), signed),
			"expired"},
		{"login token with scope", forge(t, edHeader(alphaKey.ID), with(lc, "scope", "contacts:read"), signed), "login token with scope"},
		{"API key token with an empty scope", forge(t, edHeader(alphaKey.ID), with(goodKeyClaims, "scope", ""), signed), "bad scope claim"},
		{"API key token with a bad scope", forge(t, edHeader(alphaKey.ID), with(goodKeyClaims, "scope", "Contacts:read"), signed), "bad scope claim"},
		{"API key token with two spaces in scope", forge(t, edHeader(alphaKey.ID), with(goodKeyClaims, "scope", "a  b"), signed), "bad scope claim"},
		{"API key token with scope not a string", forge(t, edHeader(alphaKey.ID), with(goodKeyClaims, "scope", []string{"a"}), signed), "malformed"},
		{"unknown API key", forge(t, edHeader(alphaKey.ID), with(goodKeyClaims, "sub", store.NewID(store.PrefixAPIKey)), signed),
			"unknown API key"},
		{"subject of another kind", forge(t, edHeader(alphaKey.ID), with(lc, "sub", "ct_123"), signed), "unknown subject kind"},
		{"no sub", forge(t, edHeader(alphaKey.ID), with(lc, "sub", nil), signed), "unknown subject kind"},
		{"typ other", forge(t, with(edHeader(alphaKey.ID), "typ", "at+jwt"), lc, signed), "typ not JWT"},
		{"no typ", forge(t, with(edHeader(alphaKey.ID), "typ", nil), lc, signed), "typ not JWT"},
		{"crit header", forge(t, with(edHeader(alphaKey.ID), "crit", []string{"x"}, "x", 1), lc, signed), "header member not allowed"},
		{"jwk header with the attacker's key", forge(t, with(edHeader(alphaKey.ID), "jwk", attackerJWK), lc,
			ed25519Signer(attackerPriv)), "header member not allowed"},
		{"jwk header and no kid", forge(t, map[string]any{"alg": "EdDSA", "typ": "JWT", "jwk": attackerJWK}, lc,
			ed25519Signer(attackerPriv)), "header member not allowed"},
		// RFC 8725 §3.1: what the verifier does not understand, it refuses,
		// even on a genuinely signed token.
		{"zip header", forge(t, with(edHeader(alphaKey.ID), "zip", "DEF"), lc, signed), "header member not allowed"},
		{"b64 header", forge(t, with(edHeader(alphaKey.ID), "b64", false), lc, signed), "header member not allowed"},
		{"p2c header", forge(t, with(edHeader(alphaKey.ID), "p2c", 1000000), lc, signed), "header member not allowed"},
		{"cty header", forge(t, with(edHeader(alphaKey.ID), "cty", "JWT"), lc, signed), "header member not allowed"},
		{"API key token with sid", forge(t, edHeader(alphaKey.ID), with(goodKeyClaims, "sid", store.NewID(store.PrefixFamily)), signed),
			"API key token with sid"},
		{"sid not a session id", forge(t, edHeader(alphaKey.ID), with(lc, "sid", "usr_x"), signed), "bad sid"},
		{"sid of no session", forge(t, edHeader(alphaKey.ID), with(lc, "sid", store.NewID(store.PrefixFamily)), signed), "unknown session"},
		{"altered signature", swapPart(good, 2, flipChar(strings.Split(good, ".")[2], 10)), "bad signature"},
		{"signature of another token", swapPart(good, 2,
			strings.Split(forge(t, edHeader(alphaKey.ID), e.loginClaims("alpha"), signed), ".")[2]), "bad signature"},
		{"altered claims (sub)", swapPart(good, 1, jsonB64(with(lc, "sub", store.NewID(store.PrefixUser)))), "bad signature"},
		{"altered claims (tags)", swapPart(good, 1, jsonB64(with(lc, "tags", []string{"admin"}))), "bad signature"},
		{"altered claims (aud)", swapPart(good, 1, jsonB64(with(lc, "aud", "beta"))), "bad signature"},
		{"altered header (kid)", func() string {
			rotated, err := e.kr.Rotate(ctx, "alpha")
			require.NoError(t, err)
			return swapPart(good, 0, jsonB64(edHeader(rotated.ID)))
		}(), "bad signature"},
		{"signature with padding", good + "=", "malformed"},
		{"four segments", good + ".x", "malformed"},
		{"signature non-canonical", good[:len(good)-1] + string(nonCanonicalLast(good[len(good)-1])), "malformed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.requireRejected("alpha", c.token, c.reason)
		})
	}
}

// flipChar returns s with its i-th character replaced by another base64url
// character.
func flipChar(s string, i int) string {
	b := []byte(s)
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// nonCanonicalLast returns another base64url character that decodes to the
// same 64-byte signature when used as the last character (it differs only in
// the unused low bits); strict decoding must refuse it.
func nonCanonicalLast(c byte) byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	i := strings.IndexByte(alphabet, c)
	return alphabet[i^1]
}

func TestVerify_JKUNeverFetched(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	alphaKey, err := e.st.ActiveSigningKey(context.Background(), "alpha")
	require.NoError(t, err)
	_, attackerPriv, _ := ed25519.GenerateKey(rand.Reader)
	var fetched atomic.Int64
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []any{map[string]any{
			"kty": "OKP", "crv": "Ed25519", "kid": "sk_evil", "x": b64(attackerPriv.Public().(ed25519.PublicKey)),
		}}})
	}))
	defer evil.Close()

	h := edHeader("sk_evil")
	h["jku"] = evil.URL
	h["x5u"] = evil.URL
	e.requireRejected("alpha", forge(t, h, e.loginClaims("alpha"), ed25519Signer(attackerPriv)), "header member not allowed")

	// A genuine token that carries jku is refused too: only alg, typ and
	// kid are allowed in the header; nothing else is obeyed or fetched.
	h = edHeader(alphaKey.ID)
	h["jku"] = evil.URL
	e.requireRejected("alpha", forge(t, h, e.loginClaims("alpha"), ed25519Signer(e.privateKey(alphaKey))), "header member not allowed")
	require.Zero(t, fetched.Load(), "the verifier fetched a key URL from a token")
}

// TestVerify_CrossProject: two projects in one store and one process. A
// token of one is refused by the other, before and after it is cached.
func TestVerify_CrossProject(t *testing.T) {
	e := newEnv(t, nil, "alpha", "beta")
	login := e.loginToken("alpha")
	_, key := e.apiKey("alpha")

	e.requireRejected("beta", login, "unknown kid")
	e.requireRejected("beta", key, "unknown kid")
	requireOK(t, e.whoami("alpha", login), "alpha", "user") // now cached for alpha
	requireOK(t, e.whoami("alpha", key), "alpha", "api_key")
	e.requireRejected("beta", login, "unknown kid") // a cached token is verified for its project only
	e.requireRejected("beta", key, "unknown kid")
	e.requireRejected("nosuchproject", login, "unknown kid")

	// Same for Verify called directly, with the reason a host can check.
	_, err := e.v.Verify(context.Background(), "beta", login)
	require.ErrorIs(t, err, keys.ErrInvalidToken)
	require.ErrorIs(t, err, keys.ErrWrongProject)
}

// TestVerify_Expiry: a login token verifies until exp plus the leeway (30 s
// by default), also from the cache, and never more than 60 s after exp.
func TestVerify_Expiry(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	tok := e.loginToken("alpha")
	requireOK(t, e.whoami("alpha", tok), "alpha", "user") // cached
	e.clock.Advance(24*time.Hour + 29*time.Second)
	requireOK(t, e.whoami("alpha", tok), "alpha", "user")
	e.clock.Advance(2 * time.Second) // exp + 31 s
	e.requireRejected("alpha", tok, "expired")

	// Not cached: a fresh token past its exp is refused on first sight too.
	fresh := e.loginToken("alpha")
	e.clock.Advance(24*time.Hour + 31*time.Second)
	e.requireRejected("alpha", fresh, "expired")

	// An API key token of the same age is fine: no exp.
	_, key := e.apiKey("alpha")
	e.clock.Advance(48 * time.Hour)
	requireOK(t, e.whoami("alpha", key), "alpha", "api_key")
}

func TestVerify_LeewayAtMost60s(t *testing.T) {
	e := newEnv(t, &keys.VerifierOptions{Leeway: time.Hour}, "alpha")
	cached, fresh := e.loginToken("alpha"), e.loginToken("alpha")
	requireOK(t, e.whoami("alpha", cached), "alpha", "user")
	e.clock.Advance(24*time.Hour + 59*time.Second)
	requireOK(t, e.whoami("alpha", cached), "alpha", "user")
	e.clock.Advance(2 * time.Second) // exp + 61 s
	e.requireRejected("alpha", cached, "expired")
	e.requireRejected("alpha", fresh, "expired")
}

// TestVerify_TooLarge: a token over 8 KiB is refused before any work: no
// store lookup happens, although the token is genuine.
func TestVerify_TooLarge(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	alphaKey, err := e.st.ActiveSigningKey(ctx, "alpha")
	require.NoError(t, err)
	priv := e.privateKey(alphaKey)
	mint := func(size int) string {
		// A genuine login token whose tags pad it to exactly size bytes. A
		// base64 length is never 1 mod 4, so the header is padded too,
		// with white space (only alg, typ and kid are allowed in it).
		const sigLen = 86 // a 64-byte signature in base64url
		for pad := size * 3 / 4; pad > 0; pad-- {
			for extra := range 3 {
				rawH, _ := json.Marshal(edHeader(alphaKey.ID))
				rawH = append(rawH[:len(rawH)-1], strings.Repeat(" ", extra)+"}"...)
				c := e.loginClaims("alpha")
				c["tags"] = []string{strings.Repeat("t", pad)}
				rawC, _ := json.Marshal(c)
				if len(b64(rawH))+1+len(b64(rawC))+1+sigLen == size {
					tok := forgeRaw(rawH, rawC, ed25519Signer(priv))
					require.Len(t, tok, size)
					return tok
				}
			}
		}
		t.Fatalf("cannot make a token of %d bytes", size)
		return ""
	}
	largest, tooLarge := mint(keys.MaxTokenBytes), mint(keys.MaxTokenBytes+1)

	requireOK(t, e.whoami("alpha", largest), "alpha", "user")

	before := e.st.getSigningKey.Load()
	e.requireRejected("alpha", tooLarge, "token too large")
	_, err = e.v.Verify(ctx, "alpha", tooLarge)
	require.ErrorIs(t, err, keys.ErrInvalidToken)
	require.Equal(t, before, e.st.getSigningKey.Load(), "an oversized token reached the store")
}

// TestVerify_RevokedAPIKey: a revoked key is refused from the very next
// request, also when it was cached, and also when another handle on the same
// database (another process) revoked it.
func TestVerify_RevokedAPIKey(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()

	t.Run("same handle", func(t *testing.T) {
		k, tok := e.apiKey("alpha")
		requireOK(t, e.whoami("alpha", tok), "alpha", "api_key")
		requireOK(t, e.whoami("alpha", tok), "alpha", "api_key")
		require.NoError(t, e.ak.Revoke(ctx, "alpha", k.ID))
		e.requireRejected("alpha", tok, "revoked API key")
	})
	t.Run("second handle", func(t *testing.T) {
		k, tok := e.apiKey("alpha")
		requireOK(t, e.whoami("alpha", tok), "alpha", "api_key")
		requireOK(t, e.whoami("alpha", tok), "alpha", "api_key")
		other := e.openSecond()
		require.NoError(t, other.RevokeAPIKey(ctx, "alpha", k.ID, e.clock.Now()))
		e.requireRejected("alpha", tok, "revoked API key")
	})
	t.Run("second handle, its own APIKeys", func(t *testing.T) {
		k, tok := e.apiKey("alpha")
		requireOK(t, e.whoami("alpha", tok), "alpha", "api_key")
		other := e.openSecond()
		kr2, err := keys.NewKeyring(other, e.master, nil)
		require.NoError(t, err)
		require.NoError(t, keys.NewAPIKeys(other, kr2, nil).Revoke(ctx, "alpha", k.ID))
		e.requireRejected("alpha", tok, "revoked API key")
	})
}

// TestVerify_RotateAndRetire: after a rotation new tokens carry the new kid
// and old ones still verify; retiring the old key refuses every login token
// and API key it signed from the next request, also when another handle
// retired it.
func TestVerify_RotateAndRetire(t *testing.T) {
	for _, via := range []string{"same handle", "second handle"} {
		t.Run(via, func(t *testing.T) {
			e := newEnv(t, nil, "alpha")
			ctx := context.Background()
			old, err := e.st.ActiveSigningKey(ctx, "alpha")
			require.NoError(t, err)
			oldLogin := e.loginToken("alpha")
			_, oldKey := e.apiKey("alpha")
			requireOK(t, e.whoami("alpha", oldLogin), "alpha", "user")
			requireOK(t, e.whoami("alpha", oldKey), "alpha", "api_key")

			kr := e.kr
			if via == "second handle" {
				kr, err = keys.NewKeyring(e.openSecond(), e.master, &keys.KeyringOptions{Now: e.clock.Now})
				require.NoError(t, err)
			}
			// The active key cannot be retired.
			require.ErrorIs(t, kr.Retire(ctx, "alpha", old.ID), store.ErrConflict)

			rotated, err := kr.Rotate(ctx, "alpha") // same clock instant: still becomes active
			require.NoError(t, err)
			require.NotEqual(t, old.ID, rotated.ID)
			newLogin := e.loginToken("alpha")
			_, newKey := e.apiKey("alpha")
			require.Equal(t, rotated.ID, decodeHeader(t, newLogin)["kid"])
			require.Equal(t, rotated.ID, decodeHeader(t, newKey)["kid"])
			require.Equal(t, old.ID, decodeHeader(t, oldLogin)["kid"])

			for _, tok := range []string{oldLogin, oldKey, newLogin, newKey} {
				require.Equal(t, http.StatusOK, e.whoami("alpha", tok).status)
			}

			require.NoError(t, kr.Retire(ctx, "alpha", old.ID))
			e.requireRejected("alpha", oldLogin, "retired signing key")
			e.requireRejected("alpha", oldKey, "retired signing key")
			requireOK(t, e.whoami("alpha", newLogin), "alpha", "user")
			requireOK(t, e.whoami("alpha", newKey), "alpha", "api_key")
			require.NoError(t, kr.Retire(ctx, "alpha", old.ID), "retiring twice succeeds")
			require.ErrorIs(t, kr.Retire(ctx, "alpha", "sk_nope"), store.ErrNotFound)
		})
	}
}

// TestVerify_TouchAtMostOncePerMinute: the last-used time is written on the
// first use and then at most once per TouchInterval, not on every request.
func TestVerify_TouchAtMostOncePerMinute(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	k, tok := e.apiKey("alpha")
	require.True(t, k.LastUsedAt.IsZero())

	lastUsed := func() time.Time {
		got, err := e.st.GetAPIKey(ctx, "alpha", k.ID)
		require.NoError(t, err)
		return got.LastUsedAt
	}
	for range 10 {
		requireOK(t, e.whoami("alpha", tok), "alpha", "api_key")
	}
	require.EqualValues(t, 1, e.st.touchAPIKey.Load())
	require.True(t, lastUsed().Equal(t0), "last used %v", lastUsed())

	e.clock.Advance(59 * time.Second)
	requireOK(t, e.whoami("alpha", tok), "alpha", "api_key")
	require.EqualValues(t, 1, e.st.touchAPIKey.Load())
	e.clock.Advance(2 * time.Second)
	requireOK(t, e.whoami("alpha", tok), "alpha", "api_key")
	require.EqualValues(t, 2, e.st.touchAPIKey.Load())
	require.True(t, lastUsed().Equal(t0.Add(61*time.Second)))

	// A use recorded by another instance also counts: a fresh Verifier on a
	// second handle does not write again within the minute.
	other := e.openSecond()
	v2 := keys.NewVerifier(other, &keys.VerifierOptions{Now: e.clock.Now})
	e.clock.Advance(30 * time.Second)
	_, err := v2.Verify(ctx, "alpha", tok)
	require.NoError(t, err)
	require.True(t, lastUsed().Equal(t0.Add(61*time.Second)), "written within the interval")
}

// TestVerify_CachedStillChecksStore: with a store that offers no change
// signal (store.ChangeVersioner), a cached token costs no signature check
// but still one signing-key lookup (and one API-key lookup for API keys) per
// request. (With the signal, see TestVerify_RecordCache_*.)
func TestVerify_CachedStillChecksStore(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	plain := withoutChangeVersion(e.st)
	v := keys.NewVerifier(plain, &keys.VerifierOptions{Now: e.clock.Now, Logger: testLogger(t)})
	login := e.loginToken("alpha")
	_, key := e.apiKey("alpha")
	for _, tok := range []string{login, key} {
		_, err := v.Verify(ctx, "alpha", tok)
		require.NoError(t, err)
	}
	sk, ak := e.st.getSigningKey.Load(), e.st.getAPIKey.Load()
	for range 5 {
		_, err := v.Verify(ctx, "alpha", login)
		require.NoError(t, err)
		_, err = v.Verify(ctx, "alpha", key)
		require.NoError(t, err)
	}
	require.EqualValues(t, 10, e.st.getSigningKey.Load()-sk)
	require.EqualValues(t, 5, e.st.getAPIKey.Load()-ak)
}

// TestVerify_PrincipalTagsNotShared: a caller changing the Tags it got does
// not change what the next request sees.
func TestVerify_PrincipalTagsNotShared(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	tok := e.loginToken("alpha", "reader")
	p, err := e.v.Verify(context.Background(), "alpha", tok)
	require.NoError(t, err)
	p.Tags[0] = "admin"
	p, err = e.v.Verify(context.Background(), "alpha", tok)
	require.NoError(t, err)
	require.Equal(t, []string{"reader"}, p.Tags)
	require.False(t, p.HasTag("admin"))
}

// TestVerify_CacheDisabled: with the cache off, every rule still holds.
func TestVerify_CacheDisabled(t *testing.T) {
	e := newEnv(t, &keys.VerifierOptions{CacheSize: -1}, "alpha")
	tok := e.loginToken("alpha")
	requireOK(t, e.whoami("alpha", tok), "alpha", "user")
	requireOK(t, e.whoami("alpha", tok), "alpha", "user")
	e.clock.Advance(25 * time.Hour)
	e.requireRejected("alpha", tok, "expired")
}

func TestVerify_StoreFailureIsNotARejection(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	tok := e.loginToken("alpha")
	requireOK(t, e.whoami("alpha", tok), "alpha", "user")
	require.NoError(t, e.st.Store.Close())
	r := e.whoami("alpha", tok)
	require.Equal(t, http.StatusInternalServerError, r.status)
	require.Equal(t, "internal", r.body["code"])
	_, err := e.v.Verify(context.Background(), "alpha", tok)
	require.Error(t, err)
	require.NotErrorIs(t, err, keys.ErrInvalidToken)
}
