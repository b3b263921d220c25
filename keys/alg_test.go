package keys_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20poly1305"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

// createProjectAlg creates a project whose first key is of alg.
func (e *env) createProjectAlg(id, alg string) store.SigningKey {
	e.t.Helper()
	ctx := context.Background()
	require.NoError(e.t, e.st.CreateProject(ctx, store.Project{ID: id, CreatedAt: e.clock.Now()}))
	k, err := e.kr.RotateTo(ctx, id, alg)
	require.NoError(e.t, err)
	require.Equal(e.t, alg, k.Algorithm)
	return k
}

// discovery returns the project's discovery document.
func (e *env) discovery(project string) keys.Discovery {
	e.t.Helper()
	r := e.get("/p/"+project+"/.well-known/openid-configuration", "")
	require.Equal(e.t, http.StatusOK, r.status)
	raw, err := json.Marshal(r.body)
	require.NoError(e.t, err)
	var d keys.Discovery
	require.NoError(e.t, json.Unmarshal(raw, &d))
	return d
}

// openSecret opens the sealed private key of rec as the package documents
// it, independently of the package's code, and returns the sealed bytes.
func openSecret(t testing.TB, master []byte, rec store.SigningKey) []byte {
	t.Helper()
	k, err := hkdf.Key(sha256.New, master, nil, "latchkey signing-key seal v1", 32)
	require.NoError(t, err)
	aead, err := chacha20poly1305.NewX(k)
	require.NoError(t, err)
	sealed := rec.EncryptedPrivateKey
	require.Greater(t, len(sealed), 24)
	secret, err := aead.Open(nil, sealed[:24], sealed[24:], []byte(rec.ProjectID+"/"+rec.ID))
	require.NoError(t, err)
	return secret
}

// signerOf returns the private key sealed in rec, as the package documents
// the sealed bytes of each algorithm: the Ed25519 seed, the P-256 scalar,
// the PKCS #1 DER of the RSA key.
func signerOf(t testing.TB, master []byte, rec store.SigningKey) crypto.Signer {
	t.Helper()
	secret := openSecret(t, master, rec)
	var s crypto.Signer
	switch rec.Algorithm {
	case keys.EdDSA:
		require.Len(t, secret, ed25519.SeedSize)
		s = ed25519.NewKeyFromSeed(secret)
	case keys.ES256:
		k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), secret)
		require.NoError(t, err)
		s = k
	case keys.RS256:
		k, err := x509.ParsePKCS1PrivateKey(secret)
		require.NoError(t, err)
		require.Equal(t, 2048, k.N.BitLen())
		s = k
	default:
		t.Fatalf("algorithm %q", rec.Algorithm)
	}
	pub, err := keys.ParsePublicKey(rec.Algorithm, rec.PublicKey)
	require.NoError(t, err)
	require.True(t, s.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(pub.Key), "the sealed key is the record's")
	return s
}

// publicOfJWK builds the public key a JWK publishes from its members alone,
// as another service would, without the package's code.
func publicOfJWK(t testing.TB, k keys.JWK) any {
	t.Helper()
	dec := func(s string) []byte {
		b, err := base64.RawURLEncoding.DecodeString(s)
		require.NoError(t, err)
		return b
	}
	switch k.Kty {
	case "OKP":
		require.Equal(t, "Ed25519", k.Crv)
		return ed25519.PublicKey(dec(k.X))
	case "EC":
		require.Equal(t, "P-256", k.Crv)
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, dec(k.X)...), dec(k.Y)...))
		require.NoError(t, err)
		return pub
	case "RSA":
		return &rsa.PublicKey{N: new(big.Int).SetBytes(dec(k.N)), E: int(new(big.Int).SetBytes(dec(k.E)).Int64())}
	}
	t.Fatalf("kty %q", k.Kty)
	return nil
}

// TestKeyring_Algorithms: a project of each algorithm signs its login
// tokens and API keys with it (header alg, the signature of its key), its
// private key is sealed like an Ed25519 seed, the verifier accepts its
// tokens, the JWKS publishes the key in its algorithm's form with alg, use
// and kid, and discovery lists the algorithm.
func TestKeyring_Algorithms(t *testing.T) {
	e := newEnv(t, nil)
	for _, c := range []struct {
		alg, kty string
		members  []string
	}{
		{keys.EdDSA, "OKP", []string{"kty", "crv", "x", "kid", "use", "alg"}},
		{keys.ES256, "EC", []string{"kty", "crv", "x", "y", "kid", "use", "alg"}},
		{keys.RS256, "RSA", []string{"kty", "n", "e", "kid", "use", "alg"}},
	} {
		t.Run(c.alg, func(t *testing.T) {
			project := "p-" + map[string]string{keys.EdDSA: "ed", keys.ES256: "ec", keys.RS256: "rs"}[c.alg]
			rec := e.createProjectAlg(project, c.alg)
			got, err := e.st.GetSigningKey(context.Background(), project, rec.ID)
			require.NoError(t, err)
			require.Equal(t, c.alg, got.Algorithm)
			priv := signerOf(t, e.master, got)

			login := e.loginToken(project)
			_, key := e.apiKey(project)
			for _, tok := range []string{login, key} {
				require.Equal(t, map[string]any{"alg": c.alg, "typ": "JWT", "kid": rec.ID}, decodeHeader(t, tok))
			}
			requireOK(t, e.whoami(project, login), project, "user")
			requireOK(t, e.whoami(project, key), project, "api_key")

			res, set := e.jwks(project)
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.Len(t, set.Keys, 1)
			j := set.Keys[0]
			require.Equal(t, c.kty, j.Kty)
			require.Equal(t, c.alg, j.Alg)
			require.Equal(t, "sig", j.Use)
			require.Equal(t, rec.ID, j.Kid)
			require.True(t, priv.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(publicOfJWK(t, j)),
				"the JWK is the public half of the sealed key")
			var generic map[string][]map[string]any
			getJSON(t, e, "/p/"+project+"/.well-known/jwks.json", &generic)
			require.ElementsMatch(t, c.members, mapKeys(generic["keys"][0]))
			require.NoError(t, verifyWithJWKS(t, set, project, login))
			require.NoError(t, verifyWithJWKS(t, set, project, key))

			require.Equal(t, []string{c.alg}, e.discovery(project).IDTokenSigningAlgValuesSupported)
		})
	}
}

// getJSON GETs path and decodes its JSON body into v.
func getJSON(t *testing.T, e *env, path string, v any) {
	t.Helper()
	res, err := e.srv.Client().Get(e.srv.URL + path)
	require.NoError(t, err)
	defer res.Body.Close()
	require.NoError(t, json.NewDecoder(res.Body).Decode(v))
}

// TestKeyring_RotateAlgorithm: Rotate keeps the project's algorithm;
// RotateTo changes it, and the older key keeps verifying its tokens with
// its own algorithm until it is retired. Discovery lists the algorithms of
// the published keys, the active key's first.
func TestKeyring_RotateAlgorithm(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	first := e.createProjectAlg("alpha", keys.RS256)
	again, err := e.kr.Rotate(ctx, "alpha")
	require.NoError(t, err)
	require.Equal(t, keys.RS256, again.Algorithm, "Rotate keeps the active key's algorithm")
	require.Equal(t, []string{keys.RS256}, e.discovery("alpha").IDTokenSigningAlgValuesSupported)
	rsLogin := e.loginToken("alpha")
	_, rsKey := e.apiKey("alpha")
	require.NoError(t, e.kr.Retire(ctx, "alpha", first.ID))

	ec, err := e.kr.RotateTo(ctx, "alpha", keys.ES256)
	require.NoError(t, err)
	require.Equal(t, keys.ES256, ec.Algorithm)
	ecLogin := e.loginToken("alpha")
	require.Equal(t, keys.ES256, decodeHeader(t, ecLogin)["alg"])
	require.Equal(t, []string{keys.ES256, keys.RS256}, e.discovery("alpha").IDTokenSigningAlgValuesSupported)
	_, set := e.jwks("alpha")
	require.Len(t, set.Keys, 2)
	require.Equal(t, []string{"EC", "RSA"}, []string{set.Keys[0].Kty, set.Keys[1].Kty})
	for _, tok := range []string{rsLogin, rsKey, ecLogin} {
		require.Equal(t, http.StatusOK, e.whoami("alpha", tok).status, "older keys keep verifying with their own algorithm")
	}

	ed, err := e.kr.RotateTo(ctx, "alpha", keys.EdDSA)
	require.NoError(t, err)
	require.Equal(t, keys.EdDSA, ed.Algorithm)
	require.Equal(t, []string{keys.EdDSA, keys.ES256, keys.RS256}, e.discovery("alpha").IDTokenSigningAlgValuesSupported)
	require.NoError(t, e.kr.Retire(ctx, "alpha", again.ID))
	require.Equal(t, []string{keys.EdDSA, keys.ES256}, e.discovery("alpha").IDTokenSigningAlgValuesSupported)
	e.requireRejected("alpha", rsLogin, "retired signing key")
	e.requireRejected("alpha", rsKey, "retired signing key")
	requireOK(t, e.whoami("alpha", ecLogin), "alpha", "user")
	requireOK(t, e.whoami("alpha", e.loginToken("alpha")), "alpha", "user")

	// A project created without an algorithm signs with the Keyring's
	// default: EdDSA unless KeyringOptions.Algorithm says otherwise.
	require.Equal(t, keys.EdDSA, e.createProject("beta").Algorithm)
	kr, err := keys.NewKeyring(e.st, e.master, &keys.KeyringOptions{Algorithm: keys.ES256})
	require.NoError(t, err)
	require.NoError(t, e.st.CreateProject(ctx, store.Project{ID: "gamma", CreatedAt: e.clock.Now()}))
	g, err := kr.Rotate(ctx, "gamma")
	require.NoError(t, err)
	require.Equal(t, keys.ES256, g.Algorithm)
	_, err = keys.NewKeyring(e.st, e.master, &keys.KeyringOptions{Algorithm: "HS256"})
	require.ErrorIs(t, err, keys.ErrUnknownAlgorithm)
}

// TestKeyring_RotateToUnknown: an algorithm that is not EdDSA, ES256 or
// RS256, exactly so spelled, is refused and nothing is stored.
func TestKeyring_RotateToUnknown(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	ctx := context.Background()
	before, err := e.st.ListSigningKeys(ctx, "alpha")
	require.NoError(t, err)
	for _, alg := range []string{"HS256", "none", "es256", "RS512", "PS256", "ES384", " EdDSA"} {
		_, err := e.kr.RotateTo(ctx, "alpha", alg)
		require.ErrorIs(t, err, keys.ErrUnknownAlgorithm, alg)
		require.ErrorIs(t, err, store.ErrInvalid, alg)
	}
	after, err := e.st.ListSigningKeys(ctx, "alpha")
	require.NoError(t, err)
	require.Len(t, after, len(before))
}

// hmacSigner signs with HMAC-SHA256 under secret: the classic algorithm
// confusion, a verifier that takes alg from the token using the public
// key's bytes as the HMAC secret.
func hmacSigner(secret []byte) func([]byte) []byte {
	return func(in []byte) []byte {
		m := hmac.New(sha256.New, secret)
		m.Write(in)
		return m.Sum(nil)
	}
}

// joseSigner signs as JWS alg does with priv (ES256: r || s, 32 bytes
// each; RS256: PKCS #1 v1.5 over SHA-256; EdDSA: Ed25519).
func joseSigner(t testing.TB, alg string, priv crypto.Signer) func([]byte) []byte {
	return func(in []byte) []byte {
		s, err := jwt.GetSigningMethod(alg).Sign(string(in), priv)
		require.NoError(t, err)
		return s
	}
}

// algConfusion returns tokens whose header names another algorithm than
// the key their kid names, each signed so that a verifier taking the
// algorithm from the token would accept it, with the logged reason of
// their refusal. The projects "ed", "ec" and "rs" sign with EdDSA, ES256
// and RS256; each token is for project "ed" unless its name says so.
func algConfusion(t *testing.T, e *env, keysOf map[string]store.SigningKey) []struct{ name, project, token, reason string } {
	t.Helper()
	edKey, ecKey, rsKey := keysOf["ed"], keysOf["ec"], keysOf["rs"]
	attackerEC, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	attackerRSA, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	_, attackerEd, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	rsPub, err := keys.ParsePublicKey(keys.RS256, rsKey.PublicKey)
	require.NoError(t, err)
	pkix, err := x509.MarshalPKIXPublicKey(rsPub.Key)
	require.NoError(t, err)
	rsPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix})
	_, set := e.jwks("rs")
	rsJWK, err := json.Marshal(set.Keys[0])
	require.NoError(t, err)
	hdr := func(alg, kid string) map[string]any { return map[string]any{"alg": alg, "typ": "JWT", "kid": kid} }

	return []struct{ name, project, token, reason string }{
		// HS256 with the public key as the secret, in each form it is
		// found in: never an allowed algorithm.
		{"HS256, Ed25519 key bytes", "ed", forge(t, hdr("HS256", edKey.ID), e.loginClaims("ed"), hmacSigner(edKey.PublicKey)), "algorithm not allowed"},
		{"rs: HS256, RSA key PKCS #1 DER", "rs", forge(t, hdr("HS256", rsKey.ID), e.loginClaims("rs"), hmacSigner(rsKey.PublicKey)), "algorithm not allowed"},
		{"rs: HS256, RSA key PEM", "rs", forge(t, hdr("HS256", rsKey.ID), e.loginClaims("rs"), hmacSigner(rsPEM)), "algorithm not allowed"},
		{"rs: HS256, RSA key JWK", "rs", forge(t, hdr("HS256", rsKey.ID), e.loginClaims("rs"), hmacSigner(rsJWK)), "algorithm not allowed"},
		{"ec: HS256, P-256 point", "ec", forge(t, hdr("HS256", ecKey.ID), e.loginClaims("ec"), hmacSigner(ecKey.PublicKey)), "algorithm not allowed"},
		// One of the project algorithms, not the key's, signed by a key
		// of that algorithm: refused before the signature is looked at.
		{"ES256 header on an EdDSA kid", "ed", forge(t, hdr("ES256", edKey.ID), e.loginClaims("ed"), joseSigner(t, "ES256", attackerEC)), "algorithm is not the key's"},
		{"RS256 header on an EdDSA kid", "ed", forge(t, hdr("RS256", edKey.ID), e.loginClaims("ed"), joseSigner(t, "RS256", attackerRSA)), "algorithm is not the key's"},
		{"ec: EdDSA header on an ES256 kid", "ec", forge(t, hdr("EdDSA", ecKey.ID), e.loginClaims("ec"), joseSigner(t, "EdDSA", attackerEd)), "algorithm is not the key's"},
		{"ec: RS256 header on an ES256 kid", "ec", forge(t, hdr("RS256", ecKey.ID), e.loginClaims("ec"), joseSigner(t, "RS256", attackerRSA)), "algorithm is not the key's"},
		{"rs: ES256 header on an RS256 kid", "rs", forge(t, hdr("ES256", rsKey.ID), e.loginClaims("rs"), joseSigner(t, "ES256", attackerEC)), "algorithm is not the key's"},
		{"rs: EdDSA header on an RS256 kid", "rs", forge(t, hdr("EdDSA", rsKey.ID), e.loginClaims("rs"), joseSigner(t, "EdDSA", attackerEd)), "algorithm is not the key's"},
		// Neighbours of the allowed algorithms and none.
		{"rs: PS256", "rs", forge(t, hdr("PS256", rsKey.ID), e.loginClaims("rs"), joseSigner(t, "PS256", attackerRSA)), "algorithm not allowed"},
		{"rs: RS512", "rs", forge(t, hdr("RS512", rsKey.ID), e.loginClaims("rs"), joseSigner(t, "RS512", attackerRSA)), "algorithm not allowed"},
		{"ec: ES384 header", "ec", forge(t, hdr("ES384", ecKey.ID), e.loginClaims("ec"), nil), "algorithm not allowed"},
		{"none", "ed", forge(t, hdr("none", edKey.ID), e.loginClaims("ed"), nil), "algorithm not allowed"},
	}
}

// TestVerifier_AlgorithmConfusion: a token is accepted only when its header
// alg is the algorithm of the key its kid names (RFC 8725 3.1). Tokens
// made to pass a verifier that takes the algorithm from the token are
// refused by the middleware, and introspection calls them inactive.
func TestVerifier_AlgorithmConfusion(t *testing.T) {
	e := newEnv(t, nil)
	keysOf := map[string]store.SigningKey{
		"ed": e.createProjectAlg("ed", keys.EdDSA),
		"ec": e.createProjectAlg("ec", keys.ES256),
		"rs": e.createProjectAlg("rs", keys.RS256),
	}
	callers := map[string]string{}
	for p := range keysOf {
		_, callers[p] = e.apiKey(p)
	}
	// The genuine tokens of each key pass, so the refusals below are for
	// the algorithm alone.
	for p, k := range keysOf {
		genuine := forge(t, map[string]any{"alg": k.Algorithm, "typ": "JWT", "kid": k.ID}, e.loginClaims(p),
			joseSigner(t, k.Algorithm, signerOf(t, e.master, k)))
		requireOK(t, e.whoami(p, genuine), p, "user")
	}
	for _, c := range algConfusion(t, e, keysOf) {
		e.requireRejected(c.project, c.token, c.reason)
		status, _, body := e.introspect(c.project, callers[c.project], form(c.token), formType)
		require.Equal(t, http.StatusOK, status, c.name)
		require.JSONEq(t, `{"active":false}`, body, c.name)
	}
}

// TestParse_KeyFuncAlgorithm: Parse takes the algorithm from the key
// function, never from the token, and a key function that returns a key
// of another type than its algorithm's is a failure, not an acceptance.
func TestParse_KeyFuncAlgorithm(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Unix(1_800_000_000, 0)
	claims := map[string]any{"aud": "alpha", "sub": "key_k", "iat": now.Unix(), "jti": "j"}
	tok := forge(t, map[string]any{"alg": "ES256", "typ": "JWT", "kid": "sk_1"}, claims, joseSigner(t, "ES256", ec))
	opts := &keys.ParseOptions{Now: func() time.Time { return now }}
	parse := func(pub keys.PublicKey) error {
		_, err := keys.Parse(tok, "alpha", func(string) (keys.PublicKey, error) { return pub, nil }, opts)
		return err
	}
	require.NoError(t, parse(keys.PublicKey{Alg: keys.ES256, Key: &ec.PublicKey}))
	err = parse(keys.PublicKey{Alg: keys.EdDSA, Key: ed25519.PublicKey(make([]byte, 32))})
	require.ErrorIs(t, err, keys.ErrTokenMalformed, "the key is EdDSA, the token ES256")
	err = parse(keys.PublicKey{Alg: keys.EdDSA, Key: &ec.PublicKey})
	require.Error(t, err)
	require.False(t, errors.Is(err, keys.ErrInvalidToken), "a mistyped key is the key function's failure: %v", err)
	err = parse(keys.PublicKey{Alg: "ES256", Key: []byte("secret")})
	require.False(t, errors.Is(err, keys.ErrInvalidToken), "a mistyped key is the key function's failure: %v", err)
}

// TestJWK_PublicKey: a JWK gives its key only when it names one of the
// algorithms, in that algorithm's form; the algorithm is the JWK's.
func TestJWK_PublicKey(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	short, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	edPub, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	ecRaw, err := ec.PublicKey.Bytes()
	require.NoError(t, err)
	good := map[string]keys.PublicKey{}
	for alg, raw := range map[string][]byte{keys.EdDSA: edPub, keys.ES256: ecRaw, keys.RS256: x509.MarshalPKCS1PublicKey(&rk.PublicKey)} {
		p, err := keys.ParsePublicKey(alg, raw)
		require.NoError(t, err)
		good[alg] = p
		back, err := p.JWK("sk_1").PublicKey()
		require.NoError(t, err, alg)
		require.Equal(t, alg, back.Alg)
		require.True(t, back.Key.(interface{ Equal(crypto.PublicKey) bool }).Equal(p.Key), alg)
	}
	mod := func(alg string, f func(*keys.JWK)) keys.JWK {
		j := good[alg].JWK("sk_1")
		f(&j)
		return j
	}
	shortJWK := keys.PublicKey{Alg: keys.RS256, Key: &short.PublicKey}.JWK("sk_1")
	for name, j := range map[string]keys.JWK{
		"no alg":                  mod(keys.EdDSA, func(j *keys.JWK) { j.Alg = "" }),
		"HS256":                   mod(keys.EdDSA, func(j *keys.JWK) { j.Alg = "HS256" }),
		"an encryption key":       mod(keys.EdDSA, func(j *keys.JWK) { j.Use = "enc" }),
		"EdDSA naming EC":         mod(keys.EdDSA, func(j *keys.JWK) { j.Kty = "EC" }),
		"ES256 on an OKP key":     mod(keys.EdDSA, func(j *keys.JWK) { j.Alg = keys.ES256 }),
		"RS256 on an EC key":      mod(keys.ES256, func(j *keys.JWK) { j.Alg = keys.RS256 }),
		"EdDSA on an RSA key":     mod(keys.RS256, func(j *keys.JWK) { j.Alg = keys.EdDSA }),
		"ES256 on P-384":          mod(keys.ES256, func(j *keys.JWK) { j.Crv = "P-384" }),
		"ES256 off the curve":     mod(keys.ES256, func(j *keys.JWK) { j.Y = j.X }),
		"ES256 short x":           mod(keys.ES256, func(j *keys.JWK) { j.X = j.X[:40] }),
		"RS256 of 1024 bits":      shortJWK,
		"RS256 padded n":          mod(keys.RS256, func(j *keys.JWK) { j.N = "AA" + j.N }),
		"RS256 even exponent":     mod(keys.RS256, func(j *keys.JWK) { j.E = "AQAA" }),
		"EdDSA of 31 bytes":       mod(keys.EdDSA, func(j *keys.JWK) { j.X = j.X[:41] }),
		"EdDSA x padded base64":   mod(keys.EdDSA, func(j *keys.JWK) { j.X += "=" }),
		"RS256 n in std encoding": mod(keys.RS256, func(j *keys.JWK) { j.N = base64.StdEncoding.EncodeToString([]byte{0xfb, 0xff}) }),
	} {
		_, err := j.PublicKey()
		require.ErrorIs(t, err, store.ErrInvalid, name)
	}
}
