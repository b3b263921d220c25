package remote

// An off-the-shelf JWT validator, given nothing but the discovery URL,
// verifies Latchkey's tokens: the discovery document and the key set are
// standard enough for a library that knows nothing of Latchkey.

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/store"
)

func TestOffTheShelfValidator_keyfunc(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.user("ann@example.com", "admin")
	login, _ := h.login("ann@example.com")
	_, err := h.lk.CreateProject(context.Background(), "other")
	require.NoError(t, err)
	_, otherProject := h.apiKeyOf("other", "svc")

	// What a gateway is configured with: the discovery URL.
	discoveryURL := h.base + latchkey.PathDiscovery
	res, err := http.Get(discoveryURL)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var d struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&d))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // stops keyfunc's background refresh
	kf, err := keyfunc.NewDefaultCtx(ctx, []string{d.JWKSURI})
	require.NoError(t, err)
	parse := func(token string) (*jwt.Token, jwt.MapClaims, error) {
		claims := jwt.MapClaims{}
		tok, err := jwt.ParseWithClaims(token, claims, kf.Keyfunc,
			jwt.WithValidMethods([]string{"EdDSA"}),
			jwt.WithIssuer(d.Issuer),
			jwt.WithAudience(store.DefaultProject),
			jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(),
			jwt.WithLeeway(30*time.Second),
		)
		return tok, claims, err
	}

	tok, claims, err := parse(login)
	require.NoError(t, err)
	assert.True(t, tok.Valid)
	assert.Equal(t, h.base, claims["iss"])
	assert.Equal(t, store.DefaultProject, claims["aud"])
	assert.True(t, strings.HasPrefix(claims["sub"].(string), "usr_"))
	assert.True(t, strings.HasPrefix(claims["sid"].(string), "rf_"))

	// The library refuses what it should: an altered token, another
	// project's token (its kid is not in this project's key set).
	parts := strings.Split(login, ".")
	claimsMap := claimsOf(t, login)
	claimsMap["sub"] = "usr_mallory"
	_, _, err = parse(parts[0] + "." + strings.Split(tamper(t, login, 1, claimsMap), ".")[1] + "." + parts[2])
	assert.ErrorIs(t, err, jwt.ErrTokenSignatureInvalid)
	_, _, err = parse(otherProject)
	assert.Error(t, err)
}
