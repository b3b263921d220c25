package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	createAPIKeySQL = `INSERT INTO api_keys (id, project_id, name, created_at, last_used_at, revoked_at)
VALUES (?, ?, ?, ?, ?, ?)`
	apiKeyColumns = `id, project_id, name, created_at, last_used_at, revoked_at`
	getAPIKeySQL  = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE id = ? AND project_id = ?`
	listAPIKeySQL = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE project_id = ?
ORDER BY created_at, id`
	revokeAPIKeySQL = `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?)
WHERE id = ? AND project_id = ?`
	// touchAPIKeySQL changes nothing (and writes nothing) when the key was
	// already used at or after the time given; existsAPIKeySQL then tells
	// that case from an unknown key.
	touchAPIKeySQL = `UPDATE api_keys SET last_used_at = ?
WHERE id = ? AND project_id = ? AND (last_used_at IS NULL OR last_used_at < ?)`
	existsAPIKeySQL = `SELECT COUNT(*) FROM api_keys WHERE id = ? AND project_id = ?`
)

// CreateAPIKey records k. It returns an error matching store.ErrInvalid for
// an empty id or name or an invalid project id, store.ErrNotFound for an
// unknown project and store.ErrConflict for an existing id.
func (s *Store) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	const op = "create api key"
	if err := checkKey(op, k.ProjectID, k.ID); err != nil {
		return err
	}
	if k.Name == "" {
		return invalid(op, "empty name")
	}
	_, err := s.exec(ctx, createAPIKeySQL, k.ID, k.ProjectID, k.Name, micros(k.CreatedAt),
		nullMicros(k.LastUsedAt), nullMicros(k.RevokedAt))
	return wrap(op, err)
}

// GetAPIKey returns the key's record, or an error matching
// store.ErrNotFound. It reads the database on every call (nothing is
// cached), so a revocation committed by any handle, in any process, is seen
// by the next call.
func (s *Store) GetAPIKey(ctx context.Context, projectID, id string) (store.APIKey, error) {
	const op = "get api key"
	if err := checkKey(op, projectID, id); err != nil {
		return store.APIKey{}, err
	}
	row, err := s.queryRow(ctx, getAPIKeySQL, id, projectID)
	if err != nil {
		return store.APIKey{}, wrap(op, err)
	}
	k, err := scanAPIKey(row)
	return k, wrap(op, err)
}

// ListAPIKeys returns the project's keys, revoked ones included, in
// ascending (CreatedAt, ID) order. An unknown project has none.
func (s *Store) ListAPIKeys(ctx context.Context, projectID string) ([]store.APIKey, error) {
	const op = "list api keys"
	if !store.ValidProjectID(projectID) {
		return nil, invalid(op, "project id is not a slug")
	}
	rows, err := s.query(ctx, listAPIKeySQL, projectID)
	if err != nil {
		return nil, wrap(op, err)
	}
	defer rows.Close()
	ks := []store.APIKey{}
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, wrap(op, err)
		}
		ks = append(ks, k)
	}
	return ks, wrap(op, rows.Err())
}

// RevokeAPIKey sets the key's RevokedAt to at. Revoking a revoked key
// succeeds and keeps the first revocation time. It returns an error matching
// store.ErrNotFound for an unknown key and store.ErrInvalid for a zero at.
func (s *Store) RevokeAPIKey(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "revoke api key"
	if err := checkKey(op, projectID, id); err != nil {
		return err
	}
	if at.IsZero() {
		return invalid(op, "zero time")
	}
	res, err := s.exec(ctx, revokeAPIKeySQL, micros(at), id, projectID)
	return wrap(op, mustAffect(res, err))
}

// TouchAPIKey sets the key's LastUsedAt to at unless it is already at or
// after at. It returns an error matching store.ErrNotFound for an unknown
// key and store.ErrInvalid for a zero at.
func (s *Store) TouchAPIKey(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "touch api key"
	if err := checkKey(op, projectID, id); err != nil {
		return err
	}
	if at.IsZero() {
		return invalid(op, "zero time")
	}
	us := micros(at)
	res, err := s.exec(ctx, touchAPIKeySQL, us, id, projectID, us)
	if err != nil {
		return wrap(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return wrap(op, err)
	}
	// Nothing changed: a newer use was recorded, or there is no such key.
	row, err := s.queryRow(ctx, existsAPIKeySQL, id, projectID)
	if err != nil {
		return wrap(op, err)
	}
	var n int
	if err := row.Scan(&n); err != nil {
		return wrap(op, err)
	}
	if n == 0 {
		return notFound(op)
	}
	return nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func scanAPIKey(r scanner) (store.APIKey, error) {
	var k store.APIKey
	var created int64
	var used, revoked sql.NullInt64
	if err := r.Scan(&k.ID, &k.ProjectID, &k.Name, &created, &used, &revoked); err != nil {
		return store.APIKey{}, err
	}
	k.CreatedAt = fromMicros(created)
	k.LastUsedAt = fromNullMicros(used)
	k.RevokedAt = fromNullMicros(revoked)
	return k, nil
}
