package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/coreos/go-oidc/v3/oidc"
	gjwt "github.com/golang-jwt/jwt/v5"
	"github.com/lestrrat-go/jwx/v3/jwk"
	xjwt "github.com/lestrrat-go/jwx/v3/jwt"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/sqlite"
	"github.com/latchkey-dev/latchkey/store/sqlite/sqlitetest"
	"github.com/latchkey-dev/latchkey/tenant"
)

// project is one project of the deployment under test, with the tokens
// it minted and what its discovery document says.
type project struct {
	id, alg     string
	login, key  string // a login token and an API key
	issuer      string // discovery: issuer
	jwksURI     string // discovery: jwks_uri
	algs        []string
	discoveryAt string
}

// deployment starts Latchkey on a SQLite file behind a real HTTP server
// that serves project P at /p/P, as the example server does, with tokens
// minted with iss = base_url; and creates a project of each algorithm,
// each with a user who logs in over HTTP and an API key.
func deployment(t *testing.T) map[string]*project {
	_, projects := deploy(t)
	return projects
}

// deploy is deployment, also returning the Latchkey it serves.
func deploy(t *testing.T) (*latchkey.Latchkey, map[string]*project) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlitetest.Path(t), &sqlite.Options{Logger: quiet()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	master := make([]byte, keys.MasterKeySize)
	for i := range master {
		master[i] = byte(i * 7)
	}
	var base string
	lk, err := latchkey.New(st, master, &latchkey.Options{
		Resolver:      tenant.FromRequest,
		Issuer:        func(p string) string { return base + "/p/" + p },
		Logger:        quiet(),
		PruneInterval: -1,
	})
	require.NoError(t, err)
	srv := httptest.NewServer(tenant.ByPath("/p/", store.DefaultProject, lk.Handler()))
	t.Cleanup(func() {
		_ = lk.Close()
		srv.Close()
	})
	base = srv.URL

	projects := map[string]*project{}
	for id, alg := range map[string]string{"ed": keys.EdDSA, "ec": keys.ES256, "rs": keys.RS256} {
		_, err := lk.CreateProjectWith(ctx, id, &latchkey.ProjectOptions{Algorithm: alg})
		require.NoError(t, err)
		_, err = lk.Users().Create(ctx, id, "ann@example.com", "correct horse battery staple", []string{"admin"})
		require.NoError(t, err)
		_, key, err := lk.APIKeys().Create(ctx, id, "interop")
		require.NoError(t, err)
		p := &project{id: id, alg: alg, key: key, discoveryAt: base + "/p/" + id + "/.well-known/openid-configuration"}
		p.login = login(t, base+"/p/"+id)
		var d struct {
			Issuer  string   `json:"issuer"`
			JWKSURI string   `json:"jwks_uri"`
			Algs    []string `json:"id_token_signing_alg_values_supported"`
		}
		getJSON(t, p.discoveryAt, &d)
		p.issuer, p.jwksURI, p.algs = d.Issuer, d.JWKSURI, d.Algs
		require.Equal(t, base+"/p/"+id, p.issuer)
		require.Equal(t, []string{alg}, p.algs)
		projects[id] = p
	}
	return lk, projects
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// login signs ann in over HTTP and returns the access token.
func login(t *testing.T, baseURL string) string {
	t.Helper()
	res, err := http.Post(baseURL+"/v1/identity/login", "application/json",
		strings.NewReader(`{"email":"ann@example.com","password":"correct horse battery staple"}`))
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var ts struct {
		AccessToken string `json:"access_token"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&ts))
	return ts.AccessToken
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, url)
	require.NoError(t, json.NewDecoder(res.Body).Decode(v))
}

// verifier is one library's check of a token with the settings of a
// project: it returns the token's subject.
type verifier func(ctx context.Context, token string) (string, error)

// library builds, from a project's settings, the verifier of one library
// for login tokens and the one for API keys (which have no exp).
type library struct {
	name string
	new  func(t *testing.T, p *project) (loginV, keyV verifier)
}

var libraries = []library{
	{"go-oidc", func(t *testing.T, p *project) (verifier, verifier) {
		// Given nothing but the issuer: go-oidc reads the discovery
		// document, checks its issuer, and takes jwks_uri and the
		// algorithms from it.
		provider, err := oidc.NewProvider(context.Background(), p.issuer)
		require.NoError(t, err)
		v := func(cfg *oidc.Config) verifier {
			ver := provider.Verifier(cfg)
			return func(ctx context.Context, token string) (string, error) {
				tok, err := ver.Verify(ctx, token)
				if err != nil {
					return "", err
				}
				return tok.Subject, nil
			}
		}
		// An API key has no exp: go-oidc is told not to require one.
		return v(&oidc.Config{ClientID: p.id}), v(&oidc.Config{ClientID: p.id, SkipExpiryCheck: true})
	}},
	{"keyfunc+golang-jwt", func(t *testing.T, p *project) (verifier, verifier) {
		kf, err := keyfunc.NewDefaultCtx(t.Context(), []string{p.jwksURI})
		require.NoError(t, err)
		v := func(opts ...gjwt.ParserOption) verifier {
			opts = append(opts, gjwt.WithIssuer(p.issuer), gjwt.WithAudience(p.id), gjwt.WithValidMethods(p.algs))
			return func(_ context.Context, token string) (string, error) {
				tok, err := gjwt.Parse(token, kf.Keyfunc, opts...)
				if err != nil {
					return "", err
				}
				return tok.Claims.GetSubject()
			}
		}
		return v(gjwt.WithExpirationRequired()), v()
	}},
	{"jwx", func(t *testing.T, p *project) (verifier, verifier) {
		set, err := jwk.Fetch(context.Background(), p.jwksURI)
		require.NoError(t, err)
		v := func(_ context.Context, token string) (string, error) {
			tok, err := xjwt.Parse([]byte(token), xjwt.WithKeySet(set), xjwt.WithIssuer(p.issuer), xjwt.WithAudience(p.id))
			if err != nil {
				return "", err
			}
			sub, ok := tok.Subject()
			if !ok {
				return "", fmt.Errorf("no sub")
			}
			return sub, nil
		}
		return v, v
	}},
}

// TestInterop: each library verifies the login token and the API key of
// the EdDSA, the ES256 and the RS256 project with that project's settings,
// and refuses the tokens of the other two projects.
func TestInterop(t *testing.T) {
	projects := deployment(t)
	ctx := context.Background()
	for _, lib := range libraries {
		t.Run(lib.name, func(t *testing.T) {
			for _, id := range []string{"ed", "ec", "rs"} {
				p := projects[id]
				t.Run(p.alg, func(t *testing.T) {
					loginV, keyV := lib.new(t, p)
					sub, err := loginV(ctx, p.login)
					require.NoError(t, err, "the login token of %s", p.id)
					require.True(t, strings.HasPrefix(sub, "usr_"), sub)
					sub, err = keyV(ctx, p.key)
					require.NoError(t, err, "the API key of %s", p.id)
					require.True(t, strings.HasPrefix(sub, "key_"), sub)
					for _, other := range projects {
						if other.id == p.id {
							continue
						}
						_, err := loginV(ctx, other.login)
						require.Error(t, err, "%s's login token with %s's settings", other.id, p.id)
						_, err = keyV(ctx, other.key)
						require.Error(t, err, "%s's API key with %s's settings", other.id, p.id)
					}
				})
			}
		})
	}
}

// TestInterop_rotationToAnotherAlgorithm: after the EdDSA project rotates
// to RS256, libraries set up before the rotation meet a kid they do not
// know. keyfunc and jwx (read again) verify the new key's tokens and the
// older key's alike. go-oidc reads id_token_signing_alg_values_supported
// once, when its provider is made: a verifier made before the rotation
// refuses the RS256 token until it is made again, or unless it was given
// every algorithm (oidc.Config.SupportedSigningAlgs), as the README says.
func TestInterop_rotationToAnotherAlgorithm(t *testing.T) {
	lk, projects := deploy(t)
	p := projects["ed"]
	ctx := context.Background()
	before, err := oidc.NewProvider(ctx, p.issuer)
	require.NoError(t, err)
	pinned := before.Verifier(&oidc.Config{ClientID: p.id})
	allAlgs := before.Verifier(&oidc.Config{ClientID: p.id, SupportedSigningAlgs: []string{"EdDSA", "ES256", "RS256"}})
	kf, err := keyfunc.NewDefaultCtx(t.Context(), []string{p.jwksURI})
	require.NoError(t, err)
	parseKF := func(token string) error {
		_, err := gjwt.Parse(token, kf.Keyfunc, gjwt.WithIssuer(p.issuer), gjwt.WithAudience(p.id),
			gjwt.WithValidMethods([]string{"EdDSA", "ES256", "RS256"}))
		return err
	}
	require.NoError(t, parseKF(p.login))

	_, err = lk.Keyring().RotateTo(ctx, p.id, keys.RS256)
	require.NoError(t, err)
	rsLogin := login(t, p.issuer)
	for name, tok := range map[string]string{"the RS256 token": rsLogin, "the older EdDSA token": p.login} {
		require.NoError(t, parseKF(tok), "keyfunc: %s", name)
		_, err := allAlgs.Verify(ctx, tok)
		require.NoError(t, err, "go-oidc given every algorithm: %s", name)
		set, err := jwk.Fetch(ctx, p.jwksURI)
		require.NoError(t, err)
		_, err = xjwt.Parse([]byte(tok), xjwt.WithKeySet(set), xjwt.WithIssuer(p.issuer), xjwt.WithAudience(p.id))
		require.NoError(t, err, "jwx: %s", name)
	}
	_, err = pinned.Verify(ctx, rsLogin)
	require.Error(t, err, "go-oidc keeps the algorithms discovery listed when its provider was made")
	after, err := oidc.NewProvider(ctx, p.issuer)
	require.NoError(t, err)
	_, err = after.Verifier(&oidc.Config{ClientID: p.id}).Verify(ctx, rsLogin)
	require.NoError(t, err, "a provider made after the rotation")
}
