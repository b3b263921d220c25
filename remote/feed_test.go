package remote

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePage(t *testing.T) {
	t.Parallel()
	page := func(s string) feedPage {
		var p feedPage
		require.NoError(t, json.Unmarshal([]byte(s), &p))
		return p
	}
	at := "2026-11-21T10:15:30.123456Z"
	when, err := time.Parse(time.RFC3339Nano, at)
	require.NoError(t, err)

	items, cursor, skipped, err := parsePage(page(`{"data":[
		{"id":"rev_1","kind":"api_key","subject":"key_a","revoked_at":"` + at + `"},
		{"id":"rev_2","kind":"signing_key","subject":"sk_b","revoked_at":"` + at + `"},
		{"id":"rev_3","kind":"session","subject":"rf_c","revoked_at":"` + at + `"},
		{"id":"rev_4","kind":"user","subject":"usr_d","revoked_at":"` + at + `"},
		{"id":"rev_5","kind":"tag","subject":"whatever","revoked_at":"` + at + `"}
	],"pagination":{"limit":100,"has_more":false,"next_cursor":""}}`))
	require.NoError(t, err)
	assert.Equal(t, []item{
		{kindAPIKey, "key_a", when}, {kindSigningKey, "sk_b", when},
		{kindSession, "rf_c", when}, {kindUser, "usr_d", when},
	}, items)
	assert.Equal(t, 1, skipped, "an unknown kind is skipped")
	assert.Equal(t, "rev_5:"+at, cursor, "the cursor moves past the last item, known or not")

	_, cursor, _, err = parsePage(page(`{"data":[{"id":"rev_1","kind":"api_key","subject":"key_a","revoked_at":"` + at + `"}],
		"pagination":{"limit":1,"has_more":true,"next_cursor":"rev_1:` + at + `"}}`))
	require.NoError(t, err)
	assert.Equal(t, "rev_1:"+at, cursor)

	items, cursor, _, err = parsePage(page(`{"data":[],"pagination":{"limit":100,"has_more":false,"next_cursor":""}}`))
	require.NoError(t, err)
	assert.Empty(t, items)
	assert.Equal(t, "", cursor, "an empty page keeps the cursor")

	for _, bad := range []string{
		`{"data":[]}`,
		`{"data":[],"pagination":{"limit":100,"has_more":true,"next_cursor":"rev_1:` + at + `"}}`,
		`{"data":[{"id":"x_1","kind":"api_key","subject":"key_a","revoked_at":"` + at + `"}],"pagination":{"has_more":false}}`,
		`{"data":[{"id":"rev_1","kind":"api_key","subject":"key_a","revoked_at":"yesterday"}],"pagination":{"has_more":false}}`,
		`{"data":[{"id":"rev_1","kind":"api_key","subject":"usr_a","revoked_at":"` + at + `"}],"pagination":{"has_more":false}}`,
		`{"data":[{"id":"rev_1","kind":"user","subject":"usr_","revoked_at":"` + at + `"}],"pagination":{"has_more":false}}`,
		`{"data":[{"id":"rev_1","kind":"session","subject":"","revoked_at":"` + at + `"}],"pagination":{"has_more":false}}`,
		`{"data":[{"id":"rev_1","kind":"api_key","subject":"key_a","revoked_at":"` + at + `"}],"pagination":{"has_more":true,"next_cursor":"nonsense"}}`,
	} {
		_, _, _, err := parsePage(page(bad))
		assert.Error(t, err, bad)
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	v := &Verifier{maxBackoff: 2 * time.Second}
	for n, want := range map[int]time.Duration{1: firstBackoff, 2: 2 * firstBackoff, 3: 4 * firstBackoff, 10: 2 * time.Second, 1000: 2 * time.Second} {
		for range 20 {
			d := v.backoff(n)
			assert.LessOrEqual(t, d, want, n)
			assert.GreaterOrEqual(t, d, want/2, n)
		}
	}
}
