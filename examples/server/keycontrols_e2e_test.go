package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// key create with scopes and an expiry, a bad scope refused with nothing
// created, key roll with an overlap (both keys work, key list shows the
// scheduled revocation), a second roll of the same key refused, and a roll
// with no overlap revoking at once; all while the server runs.
func TestE2E_keyScopesExpiryAndRoll(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir)
	key := ok(t, dir, "", "key create", "-project", "default", "-name", "billing",
		"-scope", "contacts:read", "-scope", "reports:read", "-expires-in", "720h")[0]
	require.ElementsMatch(t, []string{"id", "name", "token", "scopes", "expires_at"}, memberNames(key))
	assert.Equal(t, []any{"contacts:read", "reports:read"}, key["scopes"])
	exp, err := time.Parse(time.RFC3339Nano, key["expires_at"].(string))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now().Add(720*time.Hour), exp, time.Hour)
	token := key["token"].(string)
	require.Equal(t, http.StatusOK, s.do("GET", "/v1/contacts", token, "").status)
	s.problem("GET", "/v1/identity/revocations", token, http.StatusForbidden, "forbidden")

	for _, bad := range [][]string{{"-scope", "Contacts:read"}, {"-scope", "a b"}, {"-scope", "x", "-scope", "x"}, {"-expires-in", "-1h"}} {
		args := append([]string{"key create", "-project", "default", "-name", "bad"}, bad...)
		res := cli(t, dir, "", args...)
		assert.NotEqualf(t, 0, res.code, "%v", bad)
		assert.NotEmptyf(t, res.stderr, "%v", bad)
		assert.Emptyf(t, res.lines, "%v: nothing printed", bad)
	}
	require.Len(t, ok(t, dir, "", "key list", "-project", "default"), 1, "a refused create created a key")

	rolled := ok(t, dir, "", "key roll", "-project", "default", "-overlap", "1h", key["id"].(string))[0]
	require.ElementsMatch(t, []string{"id", "name", "token", "scopes", "expires_at", "rolled_from", "overlap_ends_at"}, memberNames(rolled))
	assert.Equal(t, key["id"], rolled["rolled_from"])
	assert.Equal(t, "billing", rolled["name"])
	assert.Equal(t, key["scopes"], rolled["scopes"])
	ends, err := time.Parse(time.RFC3339Nano, rolled["overlap_ends_at"].(string))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now().Add(time.Hour), ends, 5*time.Minute)
	newToken := rolled["token"].(string)
	require.Equal(t, http.StatusOK, s.do("GET", "/v1/contacts", token, "").status, "the old key during the overlap")
	require.Equal(t, http.StatusOK, s.do("GET", "/v1/contacts", newToken, "").status, "the new key")

	listed := ok(t, dir, "", "key list", "-project", "default")
	require.Len(t, listed, 2)
	assert.Equal(t, rolled["overlap_ends_at"], listed[0]["revokes_at"], "key list shows the scheduled revocation")
	assert.Nil(t, listed[0]["revoked_at"])
	assert.Equal(t, rolled["id"], listed[0]["rolled_to"])
	assert.Equal(t, key["id"], listed[1]["rolled_from"])
	assert.Equal(t, key["expires_at"] != nil, listed[0]["expires_at"] != nil)

	res := cli(t, dir, "", "key roll", "-project", "default", key["id"].(string))
	assert.Equal(t, 1, res.code, "a second roll of one key")
	assert.Contains(t, res.stderr, "rolled already")
	res = cli(t, dir, "", "key roll", "-project", "default", "key_nope")
	assert.Equal(t, 1, res.code, "a roll of an unknown key")

	again := ok(t, dir, "", "key roll", "-project", "default", "-overlap", "0", rolled["id"].(string))[0]
	s.problem("GET", "/v1/contacts", newToken, http.StatusUnauthorized, "invalid_token")
	require.Equal(t, http.StatusOK, s.do("GET", "/v1/contacts", again["token"].(string), "").status)
	res = cli(t, dir, "", "key roll", "-project", "default", rolled["id"].(string))
	assert.Equal(t, 1, res.code, "a roll of a revoked key")
}

// Once a roll's overlap has ended, the old key is revoked: key list and key
// revoke print it with revoked_at (the scheduled time, as the feed says) and
// no longer a scheduled revocation.
func TestE2E_keyListAfterTheOverlap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir)
	key := ok(t, dir, "", "key create", "-project", "default", "-name", "billing")[0]
	token := key["token"].(string)
	rolled := ok(t, dir, "", "key roll", "-project", "default", "-overlap", "1s", key["id"].(string))[0]
	// The server refuses the old key from the end of the overlap on.
	require.Eventually(t, func() bool {
		return s.do("GET", "/v1/contacts", token, "").status == http.StatusUnauthorized
	}, time.Minute, 50*time.Millisecond)

	listed := ok(t, dir, "", "key list", "-project", "default")
	require.Len(t, listed, 2)
	require.Equal(t, key["id"], listed[0]["id"])
	assert.Equal(t, rolled["overlap_ends_at"], listed[0]["revoked_at"], "the overlap has ended: the old key is revoked")
	assert.Nil(t, listed[0]["revokes_at"], "nothing is scheduled any more")
	assert.Nil(t, listed[1]["revoked_at"])

	revoked := ok(t, dir, "", "key revoke", "-project", "default", key["id"].(string))[0]
	assert.Equal(t, rolled["overlap_ends_at"], revoked["revoked_at"], "revoking it again changes nothing")
	assert.Nil(t, revoked["revokes_at"])
}
