package identity_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/audit"
	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

func TestCheckPassword(t *testing.T) {
	for _, tc := range []struct {
		name, password string
		ok             bool
	}{
		{"empty", "", false},
		{"one character", "x", false},
		{"seven characters", "1234567", false},
		{"eight characters", "12345678", true},
		{"seven characters in more bytes", "ééééééé", false},
		{"eight characters in more bytes", "éééééééé", true},
		{"1024 bytes", strings.Repeat("p", identity.MaxPasswordLen), true},
		{"1025 bytes", strings.Repeat("p", identity.MaxPasswordLen+1), false},
		{"512 characters in 1026 bytes", "p" + strings.Repeat("é", 512) + "p", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := identity.CheckPassword(tc.password)
			if tc.ok {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, identity.ErrPasswordPolicy)
			require.ErrorIs(t, err, store.ErrInvalid)
			var ae *store.ArgError
			require.True(t, errors.As(err, &ae), "a reason for the person who gave it")
			if tc.password != "" {
				assert.NotContains(t, err.Error(), tc.password, "never echoes the password")
			}
		})
	}
}

// TestUsers_PasswordPolicy checks that the policy applies where passwords
// are set, and never at sign-in.
func TestUsers_PasswordPolicy(t *testing.T) {
	e := newEnv(t, envConfig{})
	ctx := context.Background()
	users := identity.NewUsers(e.st, e.hasher, nil)

	_, err := users.Create(ctx, store.DefaultProject, "short@example.com", "1234567", nil)
	require.ErrorIs(t, err, identity.ErrPasswordPolicy)
	_, err = e.st.GetUserByEmail(ctx, store.DefaultProject, "short@example.com")
	require.ErrorIs(t, err, store.ErrNotFound, "nothing created")
	_, err = users.Create(ctx, store.DefaultProject, "long@example.com", strings.Repeat("p", identity.MaxPasswordLen+1), nil)
	require.ErrorIs(t, err, identity.ErrPasswordPolicy)

	u, err := users.Create(ctx, store.DefaultProject, "ada@example.com", "12345678", nil)
	require.NoError(t, err)
	err = users.SetPassword(ctx, store.DefaultProject, u.ID, "short")
	require.ErrorIs(t, err, identity.ErrPasswordPolicy)
	require.Equal(t, 200, e.login(t, "", "ada@example.com", "12345678").status, "the password is unchanged")

	// Sign-in does not apply the policy: a short password is a wrong one,
	// and an account whose password predates the policy still signs in.
	wrong := e.login(t, "", "ada@example.com", "nope")
	require.Equal(t, 401, wrong.status)
	assert.Equal(t, "invalid_credentials", wrong.json(t)["code"])
	e.createUser(t, store.DefaultProject, "old@example.com", "old", "")
	assert.Equal(t, 200, e.login(t, "", "old@example.com", "old").status)
}

// TestUsers_ResetPassword checks that a reset sets the password, ends every
// session of the user (refresh tokens refused, the sessions revoked, which
// the verifier checks for login tokens), leaves other users' sessions, and
// is audited; a refused password changes nothing.
func TestUsers_ResetPassword(t *testing.T) {
	e := newEnv(t, envConfig{auditLog: true})
	ctx := context.Background()
	users := identity.NewUsers(e.st, e.hasher, &identity.UsersOptions{Audit: audit.New(e.st, nil), Now: e.clock.Now})
	u, err := users.Create(ctx, store.DefaultProject, "ada@example.com", "the old password", nil)
	require.NoError(t, err)
	first := e.login(t, "", "ada@example.com", "the old password").tokens(t)
	second := e.login(t, "", "ada@example.com", "the old password").tokens(t)
	_, bob := e.loggedIn2(t)

	_, err = users.ResetPassword(ctx, store.DefaultProject, u.ID, "short")
	require.ErrorIs(t, err, identity.ErrPasswordPolicy)
	first = e.refresh(t, "", first.RefreshToken).tokens(t) // still live

	got, err := users.ResetPassword(ctx, store.DefaultProject, u.ID, "the new password")
	require.NoError(t, err)
	assert.Equal(t, u.ID, got.ID)
	assert.True(t, got.DisabledAt.IsZero(), "still enabled")
	for _, ts := range []tokenSet{first, second} {
		res := e.refresh(t, "", ts.RefreshToken)
		assert.Equal(t, http.StatusUnauthorized, res.status)
		f, err := e.st.GetRefreshFamily(ctx, store.DefaultProject, sidOf(t, ts.AccessToken))
		require.NoError(t, err)
		assert.False(t, f.RevokedAt.IsZero(), "the login token's session is revoked")
	}
	e.refresh(t, "", bob.RefreshToken).tokens(t) // another user's session goes on
	assert.Equal(t, http.StatusUnauthorized, e.login(t, "", "ada@example.com", "the old password").status)
	e.login(t, "", "ada@example.com", "the new password").tokens(t)

	page, err := e.st.ListAudit(ctx, store.DefaultProject, store.AuditFilter{Target: u.ID, Action: store.ActionUserPassword}, paginate.Request{Limit: 10})
	require.NoError(t, err)
	assert.Len(t, page.Items, 1, "one password set audited")
	_, err = users.ResetPassword(ctx, store.DefaultProject, store.NewID(store.PrefixUser), "the new password")
	assert.ErrorIs(t, err, store.ErrNotFound)
}
