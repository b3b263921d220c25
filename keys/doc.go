// Package keys signs and verifies Latchkey's tokens: per-project signing
// keys (EdDSA, ES256 or RS256), login tokens, permanent API keys, the bearer middleware and
// the public key set (JWKS).
//
// # Signing keys
//
// Each project has one active key and any number of older ones. Each key
// has an algorithm: [EdDSA] (Ed25519, the default), [ES256] (ECDSA P-256)
// or [RS256] (RSA 2048). [Keyring.RotateTo] creates a new active key of a
// chosen algorithm, [Keyring.Rotate] one of the active key's algorithm (a
// project's first key is made the same way); older keys keep verifying until [Keyring.Retire] retires
// them, which makes every token they signed, login tokens and API keys
// alike, fail from the next request on. A key's id ("sk_...") is the kid of
// the tokens it signs.
//
// Private keys are stored sealed: the 32-byte Ed25519 seed, the 32-byte
// P-256 scalar or the PKCS #1 DER of the RSA key is encrypted with
// XChaCha20-Poly1305 under HKDF-SHA256(master key, info "latchkey
// signing-key seal v1"), with additional data projectID + "/" + kid, and
// stored as the 24-byte random nonce followed by the ciphertext. A store
// never sees a plaintext private key; the host supplies the 32-byte master
// key.
//
// # Tokens
//
// Tokens are JWTs (RFC 7519) with header alg (the algorithm of the key
// that signed them), typ "JWT" and kid. A verifier accepts a token only
// when its alg is exactly the algorithm of the key its kid names (RFC 8725
// 3.1): the algorithm is bound to the key, never taken from the token.
// Their claims are aud (the project id, a string), sub, iat and jti:
//
//   - a login token ([Keyring.MintLoginToken]) has sub "usr_...", exp =
//     iat + 86400 s, and the user's tags in "tags";
//   - an API key token ([APIKeys.Create], [APIKeys.CreateKey]) has sub
//     "key_...", its scopes in "scope" (space-separated, RFC 8693 4.2;
//     absent for a key that may do everything) and, for a key created
//     with an expiry, exp; it is valid until it expires (no leeway), the
//     key is revoked (at once, or at the end of a roll's overlap,
//     [APIKeys.Roll]) or its signing key retired. [RequireScope] guards a
//     route by scope.
//
// # Verifying
//
// A [Verifier] checks a token for the request's project; see its
// documentation for the exact rules. [Verifier.Middleware] reads the token
// from the Authorization header only, puts the [Principal] in the request
// context and answers 401 invalid_token with an RFC 6750 challenge
// otherwise. [Verifier.BeginCheck] is the same check split where it reads
// the store, for a read-only handler that reads the token's records with
// its answer (Latchkey's list of contacts, whose internal package holds the
// answer until the [Check] is decided): the token is verified once, and
// the [Check] is decided from the records that handler read.
// [Keyring.JWKSHandler] publishes the project's unretired public keys so
// other services can verify its tokens.
//
// # Usage
//
//	kr, err := keys.NewKeyring(st, masterKey, nil)
//	if err != nil { ... }
//	if _, err := kr.Rotate(ctx, "default"); err != nil { ... } // with the project
//	v := keys.NewVerifier(st, nil)
//
//	mux.Handle("GET /.well-known/jwks.json", kr.JWKSHandler())
//	mux.Handle("GET /v1/contacts", v.Middleware(contactsHandler))
//
//	// in a handler below the middleware:
//	p, _ := keys.PrincipalFromContext(r.Context())
//	if p.Kind == keys.KindUser && p.HasTag("admin") { ... }
//
// Both handlers expect the project in the request context (package tenant).
package keys
