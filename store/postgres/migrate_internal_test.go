package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// TestMigrate_From0001 migrates a database that the first stage created
// and filled: its rows read back with the new fields empty (no DisabledAt,
// no EndsAt, no CreatedBy), its signing key as an EdDSA key (0004), and the
// new methods work on them.
func TestMigrate_From0001(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	ms, err := migrations()
	require.NoError(t, err)
	require.Equal(t, "0001_init", ms[0].name)
	conn := rawConn(t, url)
	for _, sql := range []string{
		createMigrationsTableSQL,
		ms[0].sql,
		`INSERT INTO schema_migrations (version, name) VALUES (1, '0001_init')`,
		`INSERT INTO projects (id, created_at) VALUES ('p', '2026-01-01Z')`,
		`INSERT INTO users (project_id, id, email, email_normalized, password_hash, created_at)
		 VALUES ('p', 'usr_1', 'Ann@example.com', 'ann@example.com', 'h', '2026-01-01Z')`,
		`INSERT INTO api_keys (project_id, id, name, created_at) VALUES ('p', 'key_1', 'k', '2026-01-01Z')`,
		`INSERT INTO signing_keys (project_id, id, public_key, encrypted_private_key, created_at)
		 VALUES ('p', 'sk_1', decode(repeat('07', 32), 'hex'), '\x0102', '2026-01-01Z')`,
		`INSERT INTO refresh_families (project_id, id, user_id, generation, issued_at, expires_at, created_at)
		 VALUES ('p', 'rf_1', 'usr_1', 0, '2026-01-01Z', '2026-01-02Z', '2026-01-01Z')`,
	} {
		_, err := conn.Exec(ctx, sql)
		require.NoError(t, err)
	}

	s := openInternal(t, url) // migrates
	var versions int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&versions))
	assert.Equal(t, len(ms), versions)

	u, err := s.GetUser(ctx, "p", "usr_1")
	require.NoError(t, err)
	assert.False(t, u.Disabled())
	k, err := s.GetAPIKey(ctx, "p", "key_1")
	require.NoError(t, err)
	assert.Empty(t, k.CreatedBy)
	assert.Empty(t, k.SigningKeyID)
	assert.Equal(t, []string{}, k.Scopes, "an old key has no scopes")
	assert.True(t, k.ExpiresAt.IsZero(), "an old key is permanent")
	assert.Empty(t, k.RolledTo)
	f, err := s.GetRefreshFamily(ctx, "p", "rf_1")
	require.NoError(t, err)
	assert.True(t, f.EndsAt.IsZero())
	sk, err := s.GetSigningKey(ctx, "p", "sk_1")
	require.NoError(t, err)
	assert.Equal(t, store.AlgEdDSA, sk.Algorithm, "a key made before 0004 is an EdDSA key")
	assert.Len(t, sk.PublicKey, 32)
	recs, _, err := s.ListContactsChecked(ctx, "p", store.TokenRecordIDs{SigningKeyID: "sk_1", APIKeyID: "key_1"}, paginate.Request{Limit: 1})
	require.NoError(t, err)
	require.NotNil(t, recs.SigningKey)
	assert.Equal(t, store.AlgEdDSA, recs.SigningKey.Algorithm, "the checked read names the algorithm")

	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	r, err := s.RotateRefresh(ctx, "p", "rf_1", 0, store.RotateParams{Now: at, TTL: time.Hour})
	require.NoError(t, err, "an old family rotates")
	assert.True(t, r.Family.ExpiresAt.Equal(at.Add(time.Hour)), "no end caps it")
	page, err := s.ListUsers(ctx, "p", "ann", paginate.Request{Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	require.NoError(t, s.DisableUser(ctx, "p", "usr_1", at))
	f, err = s.GetRefreshFamily(ctx, "p", "rf_1")
	require.NoError(t, err)
	assert.True(t, f.RevokedAt.Equal(at), "the old family is revoked with its user")
	revs, err := s.ListRevocations(ctx, "p", paginate.Request{Limit: 10})
	require.NoError(t, err)
	require.Len(t, revs.Items, 1)
	assert.Equal(t, store.RevokedUser, revs.Items[0].Kind)
	_, err = s.RollAPIKey(ctx, "p", "key_1", store.APIKey{ID: "key_2", ProjectID: "p", Name: "k", CreatedAt: at}, at.Add(time.Hour))
	require.NoError(t, err, "an old key rolls")
}
