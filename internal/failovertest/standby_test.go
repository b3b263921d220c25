package failovertest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres"
)

// TestFailover_StandbyRefusesWrites: a store opened on a hot standby (a
// server that cannot write) answers every write with an error matching
// store.ErrUnavailable, never another error, and says so when asked
// (store.WritableChecker); the example server's /healthz on it is 503 (and
// 200 on the primary); an instance on it answers
// login, refresh and logout with 503 unavailable and Retry-After, and
// changes nothing: the session it was asked to end still refreshes on the
// primary.
func TestFailover_StandbyRefusesWrites(t *testing.T) {
	p := newPair(t)
	ctx := t.Context()
	db := p.createDatabase(t)
	prim := startInstance(t, "primary", nodeURL(p.primary, db))
	createContacts(t, prim, 2)
	u, err := prim.lk.Users().Create(ctx, project, "ada@example.com", "pw-ada", []string{"admin"})
	if err != nil {
		t.Fatalf("create a user: %v", err)
	}
	login := prim.login(ctx, "ada@example.com", "pw-ada")
	if login.status != http.StatusOK {
		t.Fatalf("login on the primary: %s", login)
	}
	session := login.tokens()
	key, _, err := prim.lk.APIKeys().Create(ctx, project, "k")
	if err != nil {
		t.Fatalf("create a key: %v", err)
	}
	sk, err := prim.st.ActiveSigningKey(ctx, project)
	if err != nil {
		t.Fatalf("the active signing key: %v", err)
	}
	sum := sha256.Sum256([]byte("console session"))
	cs := store.ConsoleSession{ID: hex.EncodeToString(sum[:]), ProjectID: project, UserID: u.ID, CreatedAt: time.Now(), LastSeenAt: time.Now()}
	if err := prim.st.CreateConsoleSession(ctx, cs); err != nil {
		t.Fatalf("create a console session: %v", err)
	}
	fam := familyOf(t, prim, session.AccessToken)
	p.waitReplayed(t)

	standby, err := postgres.Open(ctx, nodeURL(p.standby, db), &postgres.Options{NoMigrate: true, Logger: instanceLogger(t, "standby")})
	if err != nil {
		t.Fatalf("open a store on the standby: %v", err)
	}
	t.Cleanup(func() { _ = standby.Close() })
	if _, err := standby.GetUser(ctx, project, u.ID); err != nil {
		t.Fatalf("the standby reads: %v", err)
	}

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
				ID: store.NewID(store.PrefixSigningKey), ProjectID: project,
				PublicKey: sk.PublicKey, EncryptedPrivateKey: sk.EncryptedPrivateKey, CreatedAt: now,
			})
		}},
		{"RetireSigningKey", func(ctx context.Context, s store.Store) error { return s.RetireSigningKey(ctx, project, sk.ID, now) }},
		{"CreateRefreshFamily", func(ctx context.Context, s store.Store) error {
			return s.CreateRefreshFamily(ctx, store.RefreshFamily{
				ID: store.NewID(store.PrefixFamily), ProjectID: project, UserID: u.ID,
				IssuedAt: now, ExpiresAt: now.Add(time.Hour), CreatedAt: now,
			})
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
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s on the standby = %v, want an error matching store.ErrUnavailable", w.name, err)
		}
	}

	if err := standby.CheckWritable(ctx); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("CheckWritable on the standby = %v, want an error matching store.ErrUnavailable", err)
	}
	if err := prim.st.CheckWritable(ctx); err != nil {
		t.Errorf("CheckWritable on the primary = %v, want nil", err)
	}

	// The example server's /healthz: 200 on the primary, 503 on the
	// standby, so that a load balancer takes that instance out.
	bin := buildServer(t)
	if got := startServer(t, bin, nodeURL(p.primary, db)).healthz(t); got != http.StatusOK {
		t.Errorf("GET /healthz of the example server on the primary: %d, want 200", got)
	}
	if got := startServer(t, bin, nodeURL(p.standby, db)).healthz(t); got != http.StatusServiceUnavailable {
		t.Errorf("GET /healthz of the example server on the standby: %d, want 503", got)
	}

	// An instance on the standby: every request that writes is 503.
	in := serveInstance(t, "standby", standby, instanceLogger(t, "standby"))
	for _, c := range []struct {
		name string
		send func() answer
	}{
		{"login", func() answer { return in.login(ctx, "ada@example.com", "pw-ada") }},
		{"login with a wrong password", func() answer { return in.login(ctx, "ada@example.com", "wrong") }},
		{"refresh", func() answer { return in.refresh(ctx, session.RefreshToken) }},
		{"logout", func() answer { return in.logout(ctx, session.RefreshToken) }},
	} {
		if a := c.send(); !a.unavailable() {
			t.Errorf("%s on an instance whose store is a standby: %s (Retry-After %q), want 503 unavailable with Retry-After", c.name, a, a.retryAfter)
		}
	}
	// Nothing was changed: the session the logout named is live.
	if a := prim.refresh(ctx, session.RefreshToken); a.status != http.StatusOK {
		t.Errorf("refresh on the primary after a logout the standby refused: %s, want 200", a)
	}
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
	if err != nil {
		t.Fatalf("a login token's payload: %v", err)
	}
	var claims struct {
		SID string `json:"sid"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.SID == "" {
		t.Fatalf("a login token's sid: %v", err)
	}
	f, err := in.st.GetRefreshFamily(t.Context(), project, claims.SID)
	if err != nil {
		t.Fatalf("the session of a login token: %v", err)
	}
	return f
}
