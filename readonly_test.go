package latchkey_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// TestReadOnlyDatabase_503 serves an instance on a PostgreSQL database that
// cannot take writes (its sessions read-only, as a hot standby's are: every
// write fails with SQLSTATE 25006). Login, refresh and logout answer 503
// unavailable with Retry-After, never 500 or a logout's 204, and change
// nothing: once the database takes writes again, the session the logout
// could not end is live and its refresh token rotates.
func TestReadOnlyDatabase_503(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	a := startInstance(t, dbURL, nil)
	ctx := t.Context()
	_, err := a.lk.CreateProject(ctx, "shared")
	require.NoError(t, err)
	_, err = a.lk.Users().Create(ctx, "shared", "ada@example.com", "pw-ada-secret", nil)
	require.NoError(t, err)
	const loginBody = `{"email":"ada@example.com","password":"pw-ada-secret"}`
	st, body := a.call(t, "POST", "/v1/identity/login", "", loginBody)
	require.Equal(t, http.StatusOK, st, body)
	var ts tokenSet
	require.NoError(t, json.Unmarshal([]byte(body), &ts))
	sid := sessionOf(t, ts.AccessToken)
	session := func(s store.Store) store.RefreshFamily {
		t.Helper()
		f, err := s.GetRefreshFamily(ctx, "shared", sid)
		require.NoError(t, err)
		return f
	}
	before := session(a.lk.Store())
	require.True(t, before.RevokedAt.IsZero())

	pgtest.SetReadOnly(t, dbURL, true)
	ro := startInstance(t, dbURL, nil) // its sessions are read-only
	for _, c := range []struct{ name, path, body string }{
		{"login", "/v1/identity/login", loginBody},
		{"refresh", "/v1/identity/refresh", `{"refresh_token":"` + ts.RefreshToken + `"}`},
		{"logout", "/v1/identity/logout", `{"refresh_token":"` + ts.RefreshToken + `"}`},
	} {
		res, body := ro.do(t, "POST", c.path, "", c.body)
		require.NotNil(t, res, body)
		assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, "%s: %s", c.name, body)
		assert.Equal(t, "unavailable", codeOf(body), c.name)
		assert.NotEmpty(t, res.Header.Get("Retry-After"), c.name)
	}
	assert.Equal(t, before, session(ro.lk.Store()), "the refused refresh and logout changed nothing")

	pgtest.SetReadOnly(t, dbURL, false)
	rw := startInstance(t, dbURL, nil)
	st, body = rw.call(t, "POST", "/v1/identity/refresh", "", `{"refresh_token":"`+ts.RefreshToken+`"}`)
	require.Equal(t, http.StatusOK, st, "the session the refused logout left live refreshes: %s", body)
}

// sessionOf returns the sid claim of a login token, decoded without
// verifying it.
func sessionOf(t *testing.T, token string) string {
	t.Helper()
	parts := strings.Split(token, ".")
	require.Len(t, parts, 3)
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	var c struct {
		Sid string `json:"sid"`
	}
	require.NoError(t, json.Unmarshal(payload, &c))
	require.NotEmpty(t, c.Sid)
	return c.Sid
}
