package failovertest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres"
)

// TestFailover_StandbyRefusesWrites: a store opened on a hot standby (a
// server that cannot write) answers every write with an error matching
// store.ErrUnavailable, never another error, and says so when asked
// (store.WritableChecker); the example server's /healthz on it is 503 (and
// 200 on the primary); an instance on it answers console sign-in and
// login, refresh and logout with 503 unavailable and Retry-After, and
// changes nothing: the session it was asked to end still refreshes on the
// primary.
func TestFailover_StandbyRefusesWrites(t *testing.T) {
	p := newPair(t)
	ctx := t.Context()
	db := p.createDatabase(t)
	prim := startInstance(t, "primary", nodeURL(p.primary, db))
	createContacts(t, prim, 2)
	u, err := prim.lk.Users().Create(ctx, project, "ada@example.com", "pw-ada-secret", []string{"admin"})
	require.NoError(t, err, "create a user")
	login := prim.login(ctx, "ada@example.com", "pw-ada-secret")
	require.Equal(t, http.StatusOK, login.status, "login on the primary: %s", login)
	session := login.tokens()
	key, _, err := prim.lk.APIKeys().Create(ctx, project, "k")
	require.NoError(t, err, "create a key")
	sk, err := prim.st.ActiveSigningKey(ctx, project)
	require.NoError(t, err, "the active signing key")
	sum := sha256.Sum256([]byte("console session"))
	cs := store.ConsoleSession{ID: hex.EncodeToString(sum[:]), ProjectID: project, UserID: u.ID, CreatedAt: time.Now(), LastSeenAt: time.Now()}
	require.NoError(t, prim.st.CreateConsoleSession(ctx, cs), "create a console session")
	fam := familyOf(t, prim, session.AccessToken)
	p.waitReplayed(t)

	standby, err := postgres.Open(ctx, nodeURL(p.standby, db), &postgres.Options{NoMigrate: true, Logger: instanceLogger(t, "standby")})
	require.NoError(t, err, "open a store on the standby")
	t.Cleanup(func() { _ = standby.Close() })
	_, err = standby.GetUser(ctx, project, u.ID)
	require.NoError(t, err, "the standby reads")

	now := time.Now()
	newUser := store.User{
		ID: store.NewID(store.PrefixUser), ProjectID: project, Email: "grace@example.com",
		PasswordHash: u.PasswordHash, Tags: []string{}, CreatedAt: now,
	}
	contact := store.Contact{ID: store.NewID(store.PrefixContact), ProjectID: project, Name: "C", CreatedAt: now}
	writes := []struct {
		name string
		call func(context.Context, store.Store) error
	}{
		{"CreateProject", func(ctx context.Context, s store.Store) error {
			return s.CreateProject(ctx, store.Project{ID: "other", CreatedAt: now})
		}},
		{"CreateUser", func(ctx context.Context, s store.Store) error { return s.CreateUser(ctx, newUser) }},
		{"SetSetting", func(ctx context.Context, s store.Store) error {
			return s.SetSetting(ctx, store.SettingPublicURL, "http://standby.example")
		}},
		{"SetPasswordHash", func(ctx context.Context, s store.Store) error {
			return s.SetPasswordHash(ctx, project, u.ID, u.PasswordHash)
		}},
		{"SetUserTags", func(ctx context.Context, s store.Store) error {
			return s.SetUserTags(ctx, project, u.ID, []string{"x"})
		}},
		{"DisableUser", func(ctx context.Context, s store.Store) error { return s.DisableUser(ctx, project, u.ID, now) }},
		{"EnableUser", func(ctx context.Context, s store.Store) error { return s.EnableUser(ctx, project, u.ID) }},
		{"CreateContact", func(ctx context.Context, s store.Store) error {
			_, err := s.CreateContact(ctx, contact)
			return err
		}},
		{"CreateContacts", func(ctx context.Context, s store.Store) error {
			return s.CreateContacts(ctx, project, []store.Contact{contact})
		}},
		{"DeleteContact", func(ctx context.Context, s store.Store) error { return s.DeleteContact(ctx, project, contact.ID) }},
		{"CreateAPIKey", func(ctx context.Context, s store.Store) error {
			return s.CreateAPIKey(ctx, store.APIKey{ID: store.NewID(store.PrefixAPIKey), ProjectID: project, Name: "n", CreatedAt: now})
		}},
		{"RevokeAPIKey", func(ctx context.Context, s store.Store) error { return s.RevokeAPIKey(ctx, project, key.ID, now) }},
		{"TouchAPIKey", func(ctx context.Context, s store.Store) error {
			return s.TouchAPIKey(ctx, project, key.ID, now.Add(time.Hour))
		}},
		{"CreateSigningKey", func(ctx context.Context, s store.Store) error {
			return s.CreateSigningKey(ctx, store.SigningKey{
				ID: store.NewID(store.PrefixSigningKey), ProjectID: project, Algorithm: sk.Algorithm,
				PublicKey: sk.PublicKey, EncryptedPrivateKey: sk.EncryptedPrivateKey, CreatedAt: now,
			})
		}},
		{"RetireSigningKey", func(ctx context.Context, s store.Store) error { return s.RetireSigningKey(ctx, project, sk.ID, now) }},
		{"CreateRefreshFamily", func(ctx context.Context, s store.Store) error {
			return s.CreateRefreshFamily(ctx, store.RefreshFamily{
				ID: store.NewID(store.PrefixFamily), ProjectID: project, UserID: u.ID,
				IssuedAt: now, ExpiresAt: now.Add(time.Hour), CreatedAt: now,
			}, u.PasswordHash)
		}},
		{"RotateRefresh", func(ctx context.Context, s store.Store) error {
			_, err := s.RotateRefresh(ctx, project, fam.ID, fam.Generation, store.RotateParams{Now: now, TTL: time.Hour, ReuseWindow: 10 * time.Second})
			return err
		}},
		{"RevokeRefreshFamily", func(ctx context.Context, s store.Store) error {
			return s.RevokeRefreshFamily(ctx, project, fam.ID, now)
		}},
		{"PruneRefreshFamilies", func(ctx context.Context, s store.Store) error {
			_, err := s.PruneRefreshFamilies(ctx, now)
			return err
		}},
		{"PruneSessionRevocations", func(ctx context.Context, s store.Store) error {
			_, err := s.PruneSessionRevocations(ctx, now)
			return err
		}},
		{"AppendAudit", func(ctx context.Context, s store.Store) error {
			return s.AppendAudit(ctx, store.AuditEntry{ID: store.NewID(store.PrefixAudit), ProjectID: project, At: now, Action: store.ActionAPIKeyRevoke})
		}},
		{"PruneAudit", func(ctx context.Context, s store.Store) error {
			_, err := s.PruneAudit(ctx, now)
			return err
		}},
		{"CreateConsoleSession", func(ctx context.Context, s store.Store) error {
			c := cs
			sum := sha256.Sum256([]byte("another console session"))
			c.ID = hex.EncodeToString(sum[:])
			return s.CreateConsoleSession(ctx, c)
		}},
		{"TouchConsoleSession", func(ctx context.Context, s store.Store) error {
			return s.TouchConsoleSession(ctx, project, cs.ID, now.Add(time.Hour))
		}},
		{"DeleteConsoleSession", func(ctx context.Context, s store.Store) error { return s.DeleteConsoleSession(ctx, project, cs.ID) }},
		{"PruneConsoleSessions", func(ctx context.Context, s store.Store) error {
			_, err := s.PruneConsoleSessions(ctx, now, now)
			return err
		}},
		{"AddFailure", func(ctx context.Context, s store.Store) error {
			_, _, err := s.AddFailure(ctx, "failover-test", now, time.Minute)
			return err
		}},
		{"ClearFailures", func(ctx context.Context, s store.Store) error { return s.ClearFailures(ctx, "failover-test") }},
		{"PruneThrottle", func(ctx context.Context, s store.Store) error {
			_, err := s.PruneThrottle(ctx, now)
			return err
		}},
	}
	for _, w := range writes {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		err := w.call(cctx, standby)
		cancel()
		assert.ErrorIs(t, err, store.ErrUnavailable, "%s on the standby", w.name)
	}

	assert.ErrorIs(t, standby.CheckWritable(ctx), store.ErrUnavailable, "CheckWritable on the standby")
	assert.NoError(t, prim.st.CheckWritable(ctx), "CheckWritable on the primary")

	// The example server's /healthz: 200 on the primary, 503 on the
	// standby, so that a load balancer takes that instance out.
	bin := buildServer(t)
	assert.Equal(t, http.StatusOK, startServer(t, bin, nodeURL(p.primary, db)).healthz(t),
		"GET /healthz of the example server on the primary")
	assert.Equal(t, http.StatusServiceUnavailable, startServer(t, bin, nodeURL(p.standby, db)).healthz(t),
		"GET /healthz of the example server on the standby")

	// An instance on the standby: every request that writes is 503.
	in := serveInstance(t, "standby", standby, instanceLogger(t, "standby"))
	for _, c := range []struct {
		name string
		send func() answer
	}{
		{"login", func() answer { return in.login(ctx, "ada@example.com", "pw-ada-secret") }},
		{"login with a wrong password", func() answer { return in.login(ctx, "ada@example.com", "wrong") }},
		{"refresh", func() answer { return in.refresh(ctx, session.RefreshToken) }},
		{"logout", func() answer { return in.logout(ctx, session.RefreshToken) }},
	} {
		a := c.send()
		assert.True(t, a.unavailable(), "%s on an instance whose store is a standby: %s (Retry-After %q), want 503 unavailable with Retry-After",
			c.name, a, a.retryAfter)
	}
	a := in.consoleSignIn(ctx, "ada@example.com", "pw-ada-secret")
	assert.Equal(t, http.StatusServiceUnavailable, a.status, "console sign-in on an instance whose store is a standby: %s", a)
	assert.NotEmpty(t, a.retryAfter, "console sign-in on an instance whose store is a standby: Retry-After")
	a = prim.consoleSignIn(ctx, "ada@example.com", "pw-ada-secret")
	assert.Equal(t, http.StatusSeeOther, a.status, "console sign-in on the primary: %s", a)

	// Nothing was changed: the session the logout named is live.
	a = prim.refresh(ctx, session.RefreshToken)
	assert.Equal(t, http.StatusOK, a.status, "refresh on the primary after a logout the standby refused: %s", a)
}

// familyOf returns the refresh family (the session) of a login token: its
// sid claim, read without a check (the token is the test's own).
func familyOf(t *testing.T, in *instance, accessToken string) store.RefreshFamily {
	t.Helper()
	parts := strings.Split(accessToken, ".")
	if len(parts) != 3 {
		t.Fatalf("a login token has %d parts, want 3", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err, "a login token's payload")
	var claims struct {
		SID string `json:"sid"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.SID == "" {
		t.Fatalf("a login token's sid: %v", err)
	}
	f, err := in.st.GetRefreshFamily(t.Context(), project, claims.SID)
	require.NoError(t, err, "the session of a login token")
	return f
}
