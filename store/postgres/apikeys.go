package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	apiKeyColumns   = `project_id, id, name, created_at, last_used_at, revoked_at`
	createAPIKeySQL = `INSERT INTO api_keys (project_id, id, name, created_at, last_used_at, revoked_at)
	VALUES ($1, $2, $3, $4, $5, $6)`
	getAPIKeySQL   = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE project_id = $1 AND id = $2`
	listAPIKeysSQL = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE project_id = $1
	ORDER BY created_at, id`
	revokeAPIKeySQL = `UPDATE api_keys SET revoked_at = coalesce(revoked_at, $3)
	WHERE project_id = $1 AND id = $2`
	// touchAPIKeySQL writes only when it moves LastUsedAt forward, so a
	// key used by many requests at once does not queue writes on its row.
	touchAPIKeySQL = `UPDATE api_keys SET last_used_at = $3
	WHERE project_id = $1 AND id = $2 AND (last_used_at IS NULL OR last_used_at < $3)`
	apiKeyExistsSQL = `SELECT EXISTS (SELECT 1 FROM api_keys WHERE project_id = $1 AND id = $2)`
)

// CreateAPIKey records k. It returns an error matching store.ErrInvalid for
// an empty id or name, store.ErrNotFound for an unknown project and
// store.ErrConflict for an existing id.
func (s *Store) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	const op = "create api key"
	if err := checkProject(op, k.ProjectID); err != nil {
		return err
	}
	if err := checkID(op, "id", k.ID); err != nil {
		return err
	}
	if k.Name == "" {
		return invalid(op, "empty name")
	}
	_, err := s.pool.Exec(ctx, createAPIKeySQL, k.ProjectID, k.ID, k.Name,
		ts(k.CreatedAt), nullTS(k.LastUsedAt), nullTS(k.RevokedAt))
	return translate(op, err)
}

// GetAPIKey returns the key's record, or an error matching
// store.ErrNotFound. It reads the database on every call, so a revocation
// committed by any handle is visible to the next GetAPIKey of every handle.
func (s *Store) GetAPIKey(ctx context.Context, projectID, id string) (store.APIKey, error) {
	const op = "get api key"
	if err := checkProject(op, projectID); err != nil {
		return store.APIKey{}, err
	}
	if err := checkID(op, "id", id); err != nil {
		return store.APIKey{}, err
	}
	k, err := scanAPIKey(s.pool.QueryRow(ctx, getAPIKeySQL, projectID, id))
	return k, translate(op, err)
}

// ListAPIKeys returns the project's keys, revoked ones included, in
// ascending (CreatedAt, ID) order.
func (s *Store) ListAPIKeys(ctx context.Context, projectID string) ([]store.APIKey, error) {
	const op = "list api keys"
	if err := checkProject(op, projectID); err != nil {
		return nil, err
	}
	rows, _ := s.pool.Query(ctx, listAPIKeysSQL, projectID)
	ks, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.APIKey, error) {
		return scanAPIKey(row)
	})
	if err != nil {
		return nil, translate(op, err)
	}
	if ks == nil {
		ks = []store.APIKey{}
	}
	return ks, nil
}

// RevokeAPIKey sets the key's RevokedAt to at. Revoking a revoked key
// succeeds and keeps the first revocation time. It returns an error matching
// store.ErrNotFound for an unknown key and store.ErrInvalid for a zero at.
func (s *Store) RevokeAPIKey(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "revoke api key"
	if err := checkKeyArgs(op, projectID, id, at); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, revokeAPIKeySQL, projectID, id, ts(at))
	if err != nil {
		return translate(op, err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(op)
	}
	return nil
}

// TouchAPIKey sets the key's LastUsedAt to at unless it is already at or
// after at. It returns an error matching store.ErrNotFound for an unknown key
// and store.ErrInvalid for a zero at.
func (s *Store) TouchAPIKey(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "touch api key"
	if err := checkKeyArgs(op, projectID, id, at); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, touchAPIKeySQL, projectID, id, ts(at))
	if err != nil {
		return translate(op, err)
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	var ok bool
	if err := s.pool.QueryRow(ctx, apiKeyExistsSQL, projectID, id).Scan(&ok); err != nil {
		return translate(op, err)
	}
	if !ok {
		return notFound(op)
	}
	return nil
}

func checkKeyArgs(op, projectID, id string, at time.Time) error {
	if err := checkProject(op, projectID); err != nil {
		return err
	}
	if err := checkID(op, "id", id); err != nil {
		return err
	}
	if at.IsZero() {
		return invalid(op, "zero time")
	}
	return nil
}

func scanAPIKey(row rowScanner) (store.APIKey, error) {
	var k store.APIKey
	var used, revoked pgtype.Timestamptz
	if err := row.Scan(&k.ProjectID, &k.ID, &k.Name, &k.CreatedAt, &used, &revoked); err != nil {
		return store.APIKey{}, err
	}
	k.CreatedAt = k.CreatedAt.UTC()
	k.LastUsedAt = fromNullTS(used)
	k.RevokedAt = fromNullTS(revoked)
	return k, nil
}
