package mysql

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/mysql/mytest"
)

// TestMigrate_UpgradesInPlace migrates a database to the first schema,
// records a project, a signing key and an API key as that schema holds
// them, and then migrates it to the newest: the key is EdDSA, the API key
// has no scopes, expiry or roll, and it can be rolled with an overlap.
func TestMigrate_UpgradesInPlace(t *testing.T) {
	url := mytest.NewDatabase(t)
	ctx := t.Context()
	s, err := Open(ctx, url, &Options{NoMigrate: true})
	require.NoError(t, err)
	defer s.Close()
	ms, err := migrations()
	require.NoError(t, err)
	require.NoError(t, s.migrate(ctx, ms[:1]))

	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	pub := make([]byte, 32)
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO projects (id, created_at) VALUES ('p', ?)`, []any{t0}},
		{`INSERT INTO signing_keys (project_id, id, public_key, encrypted_private_key, created_at)
		VALUES ('p', 'sk_old', ?, 'sealed', ?)`, []any{pub, t0}},
		{`INSERT INTO api_keys (project_id, id, name, created_by, signing_key_id, created_at)
		VALUES ('p', 'key_old', 'svc', '', 'sk_old', ?)`, []any{t0}},
	} {
		_, err := s.db.ExecContext(ctx, stmt.sql, stmt.args...)
		require.NoError(t, err)
	}

	require.NoError(t, s.Migrate(ctx))
	sk, err := s.GetSigningKey(ctx, "p", "sk_old")
	require.NoError(t, err)
	require.Equal(t, store.AlgEdDSA, sk.Algorithm, "a key recorded before the algorithm was")
	k, err := s.GetAPIKey(ctx, "p", "key_old")
	require.NoError(t, err)
	require.Equal(t, []string{}, k.Scopes)
	require.True(t, k.ExpiresAt.IsZero() && k.RevokesAt.IsZero(), "no expiry, no scheduled revocation")
	require.Empty(t, k.RolledFrom+k.RolledTo)

	now := t0.Add(time.Hour)
	next := store.APIKey{ProjectID: "p", ID: "key_new", Name: "svc", SigningKeyID: "sk_old", CreatedAt: now}
	old, err := s.RollAPIKey(ctx, "p", "key_old", next, now.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, "key_new", old.RolledTo)
	due, err := s.NextScheduledRevocation(ctx, "p")
	require.NoError(t, err)
	require.True(t, due.Equal(now.Add(time.Hour)), "NextScheduledRevocation = %v", due)
	require.NoError(t, s.SetSetting(ctx, store.SettingPublicURL, "https://id.example.com"))
}
