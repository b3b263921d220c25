// Package interop holds only tests: Latchkey's tokens checked by JWT and
// OpenID libraries that know nothing of Latchkey, against the real handler
// over real HTTP.
//
// For a project of each signing algorithm (EdDSA, ES256, RS256), a login
// token and an API key are verified by github.com/coreos/go-oidc/v3 (from
// the discovery URL alone), github.com/MicahParks/keyfunc/v3 with
// github.com/golang-jwt/jwt/v5, and github.com/lestrrat-go/jwx/v3 (both
// given the discovery document's issuer and jwks_uri), each checking
// issuer and audience; and a token of one project fails with the settings
// of another. These libraries are test dependencies only: no package of
// the module imports them.
package interop
