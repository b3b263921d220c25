package keys_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/keys"
)

// introspect POSTs token to project's introspection endpoint with caller as
// bearer and returns the status and the raw body.
func (e *env) introspect(project, caller, body, contentType string) (int, http.Header, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/p/"+project+"/v1/identity/introspect", strings.NewReader(body))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", contentType)
	if caller != "" {
		req.Header.Set("Authorization", "Bearer "+caller)
	}
	res, err := e.srv.Client().Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	return res.StatusCode, res.Header, string(raw)
}

// introspectAs POSTs body (a form) to project's introspection endpoint
// with the given Authorization header value, and returns the status, the
// headers and the raw body.
func (e *env) introspectAs(project, authorization, body string) (int, http.Header, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/p/"+project+"/v1/identity/introspect", strings.NewReader(body))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", formType)
	req.Header.Set("Authorization", authorization)
	res, err := e.srv.Client().Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	return res.StatusCode, res.Header, string(raw)
}

// basic is the Authorization value of client_secret_basic (RFC 6749
// 2.3.1): id and secret form-urlencoded, joined by ":", in base64.
func basic(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

func form(token string) string { return url.Values{"token": {token}}.Encode() }

const formType = "application/x-www-form-urlencoded"

func TestIntrospect(t *testing.T) {
	e := newEnv(t, nil, "alpha", "beta")
	e.issuerBase = "https://id.example.com"
	ctx := context.Background()
	_, callerTok := e.apiKey("alpha")
	u := e.user("alpha", "admin")
	login, sid := e.loginTokenOf(u)
	key, keyTok := e.apiKey("alpha")
	_, betaKey := e.apiKey("beta")

	status, h, body := e.introspect("alpha", callerTok, form(login), formType)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "no-store", h.Get("Cache-Control"))
	require.Equal(t, "application/json", h.Get("Content-Type"))
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	c := decodeClaims(t, login)
	require.Equal(t, map[string]any{
		"active": true, "iss": "https://id.example.com/p/alpha", "sub": u.ID, "aud": "alpha",
		"iat": c["iat"], "jti": c["jti"], "token_type": "user", "exp": c["exp"], "sid": sid,
		"tags": []any{"admin"},
	}, got)
	require.Equal(t, "https://id.example.com/p/alpha", c["iss"], "minted with the issuer")

	status, _, body = e.introspect("alpha", callerTok, form(keyTok), formType+"; charset=UTF-8")
	require.Equal(t, http.StatusOK, status, body)
	got = nil
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	require.Equal(t, true, got["active"])
	require.Equal(t, "api_key", got["token_type"])
	require.Equal(t, key.ID, got["sub"])
	require.NotContains(t, got, "exp")
	require.NotContains(t, got, "sid")
	require.NotContains(t, got, "tags")

	// Everything not valid in this project right now is exactly
	// {"active": false}.
	require.NoError(t, e.ak.Revoke(ctx, "alpha", key.ID))
	require.NoError(t, e.st.RevokeRefreshFamily(ctx, "alpha", sid, e.clock.Now()))
	for name, tok := range map[string]string{
		"revoked API key": keyTok, "ended session": login, "another project's key": betaKey,
		"garbage": "not-a-token", "refresh token": "rt_" + strings.Repeat("A", 75),
	} {
		status, _, body := e.introspect("alpha", callerTok, form(tok), formType)
		require.Equal(t, http.StatusOK, status, name)
		require.JSONEq(t, `{"active":false}`, body, name)
	}

	// Introspecting is not a use of the key introspected.
	k, err := e.st.GetAPIKey(ctx, "alpha", key.ID)
	require.NoError(t, err)
	require.True(t, k.LastUsedAt.IsZero())
}

func TestIntrospect_Caller(t *testing.T) {
	e := newEnv(t, nil, "alpha", "beta")
	_, callerTok := e.apiKey("alpha")
	_, betaKey := e.apiKey("beta")
	login := e.loginToken("alpha")

	status, h, body := e.introspect("alpha", "", form(login), formType)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, "Bearer", h.Get("WWW-Authenticate"))
	require.Contains(t, body, `"code":"invalid_token"`)
	status, _, body = e.introspect("alpha", betaKey, form(login), formType)
	require.Equal(t, http.StatusUnauthorized, status, "a key of another project")
	require.Contains(t, body, `"code":"invalid_token"`)
	status, _, body = e.introspect("alpha", login, form(login), formType)
	require.Equal(t, http.StatusForbidden, status, "a login token may not introspect")
	require.Contains(t, body, `"code":"forbidden"`)

	for _, c := range []struct {
		name, body, contentType string
		status                  int
		code                    string
	}{
		{"no token", "", formType, 400, "invalid_request"},
		{"empty token", "token=", formType, 400, "invalid_request"},
		{"token twice", "token=a&token=b", formType, 400, "invalid_request"},
		{"json body", `{"token":"x"}`, "application/json", 415, "unsupported_media_type"},
		{"latin1", "token=x", formType + "; charset=latin1", 415, "unsupported_media_type"},
		{"bad form", "token=%zz", formType, 400, "invalid_request"},
		{"too large", "token=" + strings.Repeat("x", 64<<10), formType, 413, "request_too_large"},
	} {
		status, _, body := e.introspect("alpha", callerTok, c.body, c.contentType)
		require.Equal(t, c.status, status, c.name)
		require.Contains(t, body, `"code":"`+c.code+`"`, c.name)
	}
}

func TestDiscovery(t *testing.T) {
	e := newEnv(t, nil, "alpha")
	get := func() keys.Discovery {
		t.Helper()
		r := e.get("/p/alpha/.well-known/openid-configuration", "")
		require.Equal(t, http.StatusOK, r.status)
		raw, err := json.Marshal(r.body)
		require.NoError(t, err)
		var d keys.Discovery
		require.NoError(t, json.Unmarshal(raw, &d))
		return d
	}
	// No issuer: the base_url is the request's.
	base := e.srv.URL + "/p/alpha"
	require.Equal(t, keys.Discovery{
		Issuer: base, JWKSURI: base + "/.well-known/jwks.json",
		IntrospectionEndpoint: base + "/v1/identity/introspect", RevocationFeedEndpoint: base + "/v1/identity/revocations",
		IntrospectionAuthMethods:         []string{"client_secret_basic", "bearer"},
		IDTokenSigningAlgValuesSupported: []string{"EdDSA"},
	}, get())
	e.issuerBase = "https://id.example.com"
	d := get()
	require.Equal(t, "https://id.example.com/p/alpha", d.Issuer)
	require.Equal(t, "https://id.example.com/p/alpha/.well-known/jwks.json", d.JWKSURI)
}

// The API key as HTTP Basic client credentials (client_secret_basic): its id
// as the user name and its token as the password.
func TestIntrospect_BasicClient(t *testing.T) {
	e := newEnv(t, nil, "alpha", "beta")
	caller, callerTok := e.apiKey("alpha")
	other, otherTok := e.apiKey("alpha")
	beta, betaTok := e.apiKey("beta")
	u := e.user("alpha")
	login, _ := e.loginTokenOf(u)
	target := form(login) + "&token_type_hint=access_token"

	active := func(name, authorization string) {
		t.Helper()
		status, _, body := e.introspectAs("alpha", authorization, target)
		require.Equal(t, http.StatusOK, status, "%s: %s", name, body)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(body), &got))
		require.Equal(t, true, got["active"], name)
		require.Equal(t, u.ID, got["sub"], name)
	}
	active("form-urlencoded, as RFC 6749 says", basic(caller.ID, callerTok))
	raw := "Basic " + base64.StdEncoding.EncodeToString([]byte(caller.ID+":"+callerTok))
	active("not encoded: an id and a token need no escape", raw)
	active("scheme in any case", "bAsIc "+strings.TrimPrefix(basic(caller.ID, callerTok), "Basic "))
	active("unpadded base64", "Basic "+base64.RawStdEncoding.EncodeToString([]byte(caller.ID+":"+callerTok)))
	active("two spaces after the scheme", "Basic  "+strings.TrimPrefix(basic(caller.ID, callerTok), "Basic "))
	active("bearer, as before", "Bearer "+callerTok)

	refused := func(name, authorization string) {
		t.Helper()
		status, h, body := e.introspectAs("alpha", authorization, target)
		require.Equal(t, http.StatusUnauthorized, status, "%s: %s", name, body)
		require.Contains(t, body, `"code":"invalid_token"`, name)
		require.Equal(t, keys.BasicChallenge, h.Get("WWW-Authenticate"), name)
		require.NotContains(t, body, callerTok, name)
	}
	refused("another key's id", basic(other.ID, callerTok))
	refused("another key's token", basic(caller.ID, otherTok))
	refused("the key's id, not escaped, with junk", basic(caller.ID+"x", callerTok))
	refused("a key of another project", basic(beta.ID, betaTok))
	refused("a garbage secret", basic(caller.ID, "not-a-token"))
	for name, enc := range map[string]string{
		"not base64":   "Basic !!!" + callerTok,
		"no colon":     "Basic " + base64.StdEncoding.EncodeToString([]byte(caller.ID+callerTok)),
		"empty id":     "Basic " + base64.StdEncoding.EncodeToString([]byte(":"+callerTok)),
		"empty secret": "Basic " + base64.StdEncoding.EncodeToString([]byte(caller.ID+":")),
		"bad escape":   "Basic " + base64.StdEncoding.EncodeToString([]byte(caller.ID+":%zz"+callerTok)),
		"not UTF-8":    "Basic " + base64.StdEncoding.EncodeToString([]byte(caller.ID+":\xff"+callerTok)),
		"nothing":      "Basic ",
	} {
		refused("malformed: "+name, enc)
	}

	// A login token as the password with a key's id is a mismatch of id and
	// token; with its own subject, it is refused as a bearer login token is.
	refused("a key's id with a login token", basic(caller.ID, login))
	refused("another user's id with a login token", basic(e.user("alpha").ID, login))
	status, _, body := e.introspectAs("alpha", basic(u.ID, login), target)
	require.Equal(t, http.StatusForbidden, status, body)
	require.Contains(t, body, `"code":"forbidden"`)

	// A revoked key is refused from the next request.
	require.NoError(t, e.ak.Revoke(context.Background(), "alpha", other.ID))
	refused("a revoked key", basic(other.ID, otherTok))
}
