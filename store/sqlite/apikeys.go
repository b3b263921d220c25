package sqlite

import (
	"context"
	"errors"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	createAPIKeySQL = `INSERT INTO api_keys (id, project_id, name, created_by, signing_key_id, created_at)
VALUES (?, ?, ?, ?, ?, ?)`
	apiKeyColumns = `id, project_id, name, created_by, signing_key_id, created_at, last_used_at, revoked_at`
	getAPIKeySQL  = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE id = ? AND project_id = ?`
	listAPIKeySQL = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE project_id = ?
ORDER BY created_at, id`
	// revokeAPIKeySQL revokes a key that is not revoked; apiKeyRevokedSQL
	// tells a revoked key from an unknown one first.
	apiKeyRevokedSQL = `SELECT revoked_at FROM api_keys WHERE id = ? AND project_id = ?`
	revokeAPIKeySQL  = `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND project_id = ? AND revoked_at IS NULL`
	// touchAPIKeySQL changes nothing (and writes nothing) when the key was
	// already used at or after the time given; existsAPIKeySQL then tells
	// that case from an unknown key.
	touchAPIKeySQL = `UPDATE api_keys SET last_used_at = ?
WHERE id = ? AND project_id = ? AND (last_used_at IS NULL OR last_used_at < ?)`
	existsAPIKeySQL = `SELECT 1 FROM api_keys WHERE id = ? AND project_id = ?`
)

// CreateAPIKey records k. It returns an error matching store.ErrInvalid
// when store.CheckAPIKey refuses k, store.ErrNotFound for an unknown project
// and store.ErrConflict for an existing id. CreatedBy and SigningKeyID are
// kept as given.
func (s *Store) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	const op = "create api key"
	if err := store.CheckAPIKey(k); err != nil {
		return check(op, err)
	}
	_, err := s.exec(ctx, createAPIKeySQL, k.ID, k.ProjectID, k.Name, k.CreatedBy, k.SigningKeyID, dbTime(k.CreatedAt))
	return wrap(op, err)
}

// GetAPIKey returns the key's record, or an error matching
// store.ErrNotFound. It reads the database on every call (nothing is
// cached), so a revocation committed by any handle, in any process, is seen
// by the next call.
func (s *Store) GetAPIKey(ctx context.Context, projectID, id string) (store.APIKey, error) {
	const op = "get api key"
	if err := store.CheckKey(projectID, "API key id", id); err != nil {
		return store.APIKey{}, check(op, err)
	}
	var k store.APIKey
	err := s.readRow(ctx, getAPIKeySQL, func(st *sqlite.Stmt) error {
		k = scanAPIKey(st)
		return nil
	}, id, projectID)
	if err != nil {
		return store.APIKey{}, wrap(op, err)
	}
	return k, nil
}

// ListAPIKeys returns the project's keys, revoked ones included, in
// ascending (CreatedAt, ID) order. An unknown project has none.
func (s *Store) ListAPIKeys(ctx context.Context, projectID string) ([]store.APIKey, error) {
	const op = "list api keys"
	if err := store.CheckProjectID(projectID); err != nil {
		return nil, check(op, err)
	}
	ks, err := readAll(ctx, s, listAPIKeySQL, func(st *sqlite.Stmt) (store.APIKey, error) {
		return scanAPIKey(st), nil
	}, projectID)
	if err != nil {
		return nil, wrap(op, err)
	}
	return ks, nil
}

// RevokeAPIKey sets the key's RevokedAt to at and adds one revocation of
// kind store.RevokedAPIKey to the project's feed, in one write transaction.
// Revoking a revoked key succeeds, keeps the first revocation time and adds
// nothing. It returns an error matching store.ErrNotFound for an unknown key
// and store.ErrInvalid for a zero at.
func (s *Store) RevokeAPIKey(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "revoke api key"
	if err := errors.Join(store.CheckKey(projectID, "API key id", id), store.CheckTime("at", at)); err != nil {
		return check(op, err)
	}
	us := dbTime(at)
	err := s.writeTx(ctx, func(t *wtx) error {
		revoked, err := t.isSet(apiKeyRevokedSQL, id, projectID)
		if err != nil || revoked {
			return err
		}
		if _, err := t.exec(revokeAPIKeySQL, us, id, projectID); err != nil {
			return err
		}
		return t.addRevocation(projectID, store.RevokedAPIKey, id, us)
	})
	return wrap(op, err)
}

// TouchAPIKey sets the key's LastUsedAt to at unless it is already at or
// after at. It returns an error matching store.ErrNotFound for an unknown
// key and store.ErrInvalid for a zero at.
func (s *Store) TouchAPIKey(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "touch api key"
	if err := errors.Join(store.CheckKey(projectID, "API key id", id), store.CheckTime("at", at)); err != nil {
		return check(op, err)
	}
	us := dbTime(at)
	n, err := s.exec(ctx, touchAPIKeySQL, us, id, projectID, us)
	if err != nil || n > 0 {
		return wrap(op, err)
	}
	// Nothing changed: a newer use was recorded, or there is no such key.
	return wrap(op, s.readRow(ctx, existsAPIKeySQL, func(*sqlite.Stmt) error { return nil }, id, projectID))
}

// scanAPIKey returns the key of a row of apiKeyColumns.
func scanAPIKey(st *sqlite.Stmt) store.APIKey {
	return store.APIKey{
		ID:           st.ColumnText(0),
		ProjectID:    st.ColumnText(1),
		Name:         st.ColumnText(2),
		CreatedBy:    st.ColumnText(3),
		SigningKeyID: st.ColumnText(4),
		CreatedAt:    columnTime(st, 5),
		LastUsedAt:   columnNullTime(st, 6),
		RevokedAt:    columnNullTime(st, 7),
	}
}
