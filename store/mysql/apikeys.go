package mysql

import (
	"context"
	"database/sql"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	apiKeyColumns   = `project_id, id, name, created_by, signing_key_id, created_at, last_used_at, revoked_at`
	createAPIKeySQL = `INSERT INTO api_keys (` + apiKeyColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)`
	getAPIKeySQL   = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE project_id = ? AND id = ?`
	listAPIKeysSQL = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE project_id = ?
	ORDER BY created_at, id`
	// revokeAPIKeySQL changes only an unrevoked key, so that a second
	// revocation keeps the first time and adds no feed item.
	revokeAPIKeySQL = `UPDATE api_keys SET revoked_at = ?
	WHERE project_id = ? AND id = ? AND revoked_at IS NULL`
	// touchAPIKeySQL writes only when it moves LastUsedAt forward.
	touchAPIKeySQL = `UPDATE api_keys SET last_used_at = ?
	WHERE project_id = ? AND id = ? AND (last_used_at IS NULL OR last_used_at < ?)`
	apiKeyExistsSQL = `SELECT EXISTS (SELECT 1 FROM api_keys WHERE project_id = ? AND id = ?)`
)

// CreateAPIKey records k. It returns an error matching store.ErrInvalid when
// store.CheckAPIKey refuses k, store.ErrNotFound for an unknown project and
// store.ErrConflict for an existing id. CreatedBy and SigningKeyID are kept
// as given.
func (s *Store) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	const op = "create api key"
	if err := store.CheckAPIKey(k); err != nil {
		return check(op, err)
	}
	_, err := s.execCount(ctx, op, createAPIKeySQL, k.ProjectID, k.ID, k.Name,
		k.CreatedBy, k.SigningKeyID, dbTime(k.CreatedAt))
	return err
}

// GetAPIKey returns the key's record, or an error matching
// store.ErrNotFound. It reads the database on every call (nothing is
// cached), so a revocation committed by any handle is visible to the next
// GetAPIKey of every handle.
func (s *Store) GetAPIKey(ctx context.Context, projectID, id string) (store.APIKey, error) {
	const op = "get api key"
	if err := store.CheckKey(projectID, "API key id", id); err != nil {
		return store.APIKey{}, check(op, err)
	}
	return getOne(ctx, s, op, getAPIKeySQL, []any{projectID, id}, scanAPIKey)
}

// ListAPIKeys returns the project's keys, revoked ones included, in
// ascending (CreatedAt, ID) order.
func (s *Store) ListAPIKeys(ctx context.Context, projectID string) ([]store.APIKey, error) {
	const op = "list api keys"
	if err := store.CheckProjectID(projectID); err != nil {
		return nil, check(op, err)
	}
	return listAll(ctx, s, op, listAPIKeysSQL, []any{projectID}, scanAPIKey)
}

// RevokeAPIKey sets the key's RevokedAt to at and adds one revocation of
// kind store.RevokedAPIKey to the project's feed, in one transaction.
// Revoking a revoked key succeeds, keeps the first revocation time and adds
// nothing. It returns an error matching store.ErrNotFound for an unknown key
// and store.ErrInvalid for a zero at.
func (s *Store) RevokeAPIKey(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "revoke api key"
	if err := store.CheckKey(projectID, "API key id", id); err != nil {
		return check(op, err)
	}
	if err := store.CheckTime("revoked at", at); err != nil {
		return check(op, err)
	}
	at = dbTime(at)
	return s.inTx(ctx, op, func(tx *sql.Tx) error {
		n, err := affected(tx.ExecContext(ctx, revokeAPIKeySQL, at, projectID, id))
		if err != nil {
			return err
		}
		if n == 0 {
			return existsOrNotFound(ctx, tx, op, apiKeyExistsSQL, projectID, id)
		}
		return addRevocation(ctx, tx, projectID, store.RevokedAPIKey, id, at)
	})
}

// TouchAPIKey sets the key's LastUsedAt to at unless it is already at or
// after at. It returns an error matching store.ErrNotFound for an unknown key
// and store.ErrInvalid for a zero at.
func (s *Store) TouchAPIKey(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "touch api key"
	if err := store.CheckKey(projectID, "API key id", id); err != nil {
		return check(op, err)
	}
	if err := store.CheckTime("last used at", at); err != nil {
		return check(op, err)
	}
	t := dbTime(at)
	n, err := s.execCount(ctx, op, touchAPIKeySQL, t, projectID, id, t)
	if err != nil || n > 0 {
		return err
	}
	return s.read(ctx, op, func(q querier) error {
		return existsOrNotFound(ctx, q, op, apiKeyExistsSQL, projectID, id)
	})
}

func scanAPIKey(row rowScanner) (store.APIKey, error) {
	var k store.APIKey
	var used, revoked sql.NullTime
	if err := row.Scan(&k.ProjectID, &k.ID, &k.Name, &k.CreatedBy, &k.SigningKeyID,
		&k.CreatedAt, &used, &revoked); err != nil {
		return store.APIKey{}, err
	}
	k.CreatedAt = k.CreatedAt.UTC()
	k.LastUsedAt = fromNull(used)
	k.RevokedAt = fromNull(revoked)
	return k, nil
}
