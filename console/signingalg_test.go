package console_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

// TestConsole_RotateAlgorithm: the rotation form offers the algorithms,
// the active key's selected; a rotation makes a key of the one chosen, the
// list shows each key's algorithm, and tokens of the older key keep
// working. An algorithm that is not offered is refused and changes nothing.
func TestConsole_RotateAlgorithm(t *testing.T) {
	f := newFixture(t, nil)
	c := f.newClient(t, project)
	formToken := c.mustSignIn()
	ctx := context.Background()
	_, oldToken := c.createKey(formToken, "signed-by-eddsa")

	confirm := c.get("rotate")
	require.Equal(t, http.StatusOK, confirm.status)
	assert.Contains(t, confirm.body, `<select id="rotate-alg" name="alg"`)
	assert.Contains(t, confirm.body, `<option value="EdDSA" selected>EdDSA</option>`)
	assert.Contains(t, confirm.body, `<option value="ES256">ES256</option>`)
	assert.Contains(t, confirm.body, `<option value="RS256">RS256</option>`)

	r := c.post("rotate", url.Values{"form_token": {formToken}, "alg": {"RS256"}})
	require.Equal(t, http.StatusSeeOther, r.status)
	active, err := f.st.ActiveSigningKey(ctx, project)
	require.NoError(t, err)
	assert.Equal(t, store.AlgRS256, active.Algorithm)
	page := c.get("signing-keys")
	assert.Contains(t, page.body, active.ID+" is the new active signing key. It signs with RS256;")
	assert.Contains(t, page.body, `<span class="badge badge-info">RS256</span>`)
	assert.Contains(t, page.body, `<span class="badge badge-info">EdDSA</span>`)
	assert.Contains(t, page.body, `{&#34;e&#34;:&#34;AQAB&#34;,&#34;kty&#34;:&#34;RSA&#34;,&#34;n&#34;:`, "the RSA key's JWK members")
	assert.Equal(t, http.StatusOK, f.apiStatus(t, project, oldToken), "the EdDSA key keeps verifying")
	_, newToken := c.createKey(formToken, "signed-by-rs256")
	assert.Equal(t, http.StatusOK, f.apiStatus(t, project, newToken))

	// The next rotation offers the active key's algorithm, and a form
	// without alg keeps it.
	assert.Contains(t, c.get("rotate").body, `<option value="RS256" selected>RS256</option>`)
	require.Equal(t, http.StatusSeeOther, c.post("rotate", url.Values{"form_token": {formToken}}).status)
	again, err := f.st.ActiveSigningKey(ctx, project)
	require.NoError(t, err)
	assert.NotEqual(t, active.ID, again.ID)
	assert.Equal(t, store.AlgRS256, again.Algorithm)

	for _, alg := range []string{"HS256", "none", "rs256"} {
		r := c.post("rotate", url.Values{"form_token": {formToken}, "alg": {alg}})
		assert.Equal(t, http.StatusBadRequest, r.status, alg)
	}
	still, err := f.st.ActiveSigningKey(ctx, project)
	require.NoError(t, err)
	assert.Equal(t, again.ID, still.ID, "a refused algorithm rotates nothing")
}
