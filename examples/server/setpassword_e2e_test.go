package main

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestE2E_userSetPassword sets a user's password from the command line
// while a server runs: the user's login and refresh tokens are refused from
// the next request, the old password no longer signs in and the new one
// does, the audit log records it, and a password the policy refuses
// changes nothing. No password is ever printed.
func TestE2E_userSetPassword(t *testing.T) {
	t.Parallel()
	dir := newDataDir(t)
	created := ok(t, dir, "the old password\n", "user create", "-project", "default", "-email", "ada@example.com", "-tags", "ops")[0]
	ok(t, dir, "bob's password\n", "user create", "-project", "default", "-email", "bob@example.com")
	s := startServer(t, dir)
	access, refresh := s.login("", "ada@example.com", "the old password")
	bobAccess, _ := s.login("", "bob@example.com", "bob's password")
	require.Equal(t, http.StatusOK, s.do("GET", "/v1/contacts", access, "").status)

	res := cli(t, dir, "1234567\n", "user set-password", "-project", "default", "-email", "ada@example.com")
	assert.Equal(t, 2, res.code, res.stderr)
	assert.Contains(t, res.stderr, "password shorter than 8 characters")
	assert.NotContains(t, res.stderr, "1234567")
	assert.Empty(t, res.lines)
	require.Equal(t, http.StatusOK, s.do("GET", "/v1/contacts", access, "").status, "a refused password changes nothing")

	res = cli(t, dir, "the new password\n", "user set-password", "-project", "default", "-email", "ada@example.com")
	require.Equal(t, 0, res.code, res.stderr)
	require.Len(t, res.lines, 1)
	assert.Equal(t, created, res.lines[0], "the user, as user create prints it")
	assert.NotContains(t, res.stderr, "password")

	s.problem("GET", "/v1/contacts", access, http.StatusUnauthorized, "invalid_token")
	r := s.do("POST", "/v1/identity/refresh", "", fmt.Sprintf(`{"refresh_token":%q}`, refresh))
	assert.Equal(t, http.StatusUnauthorized, r.status, string(r.body))
	r = s.do("POST", "/v1/identity/login", "", `{"email":"ada@example.com","password":"the old password"}`)
	assert.Equal(t, http.StatusUnauthorized, r.status)
	newAccess, _ := s.login("", "ada@example.com", "the new password")
	assert.Equal(t, http.StatusOK, s.do("GET", "/v1/contacts", newAccess, "").status)
	assert.Equal(t, http.StatusOK, s.do("GET", "/v1/contacts", bobAccess, "").status, "another user's session goes on")

	entries := ok(t, dir, "", "audit list", "-project", "default", "-action", "user.password")
	require.Len(t, entries, 1)
	assert.Equal(t, created["id"], entries[0]["target"])
	assert.Equal(t, "cli", entries[0]["actor"])

	res = cli(t, dir, "the new password\n", "user set-password", "-project", "default", "-email", "nobody@example.com")
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stderr, `no user with email "nobody@example.com"`)
	res = cli(t, dir, "", "user set-password", "-project", "default", "-email", "ada@example.com")
	assert.Equal(t, 1, res.code, "no password given")

	require.NoError(t, s.stop())
	for _, pw := range []string{"the old password", "the new password", "1234567"} {
		assert.NotContains(t, s.stderr.String(), pw)
	}
}
