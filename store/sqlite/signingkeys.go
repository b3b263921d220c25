package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	createSigningKeySQL = `INSERT INTO signing_keys (id, project_id, public_key, encrypted_private_key, created_at, retired_at)
VALUES (?, ?, ?, ?, ?, ?)`
	signingKeyColumns   = `id, project_id, public_key, encrypted_private_key, created_at, retired_at`
	getSigningKeySQL    = `SELECT ` + signingKeyColumns + ` FROM signing_keys WHERE id = ? AND project_id = ?`
	activeSigningKeySQL = `SELECT ` + signingKeyColumns + ` FROM signing_keys
WHERE project_id = ? AND retired_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 1`
	listSigningKeysSQL = `SELECT ` + signingKeyColumns + ` FROM signing_keys WHERE project_id = ?
ORDER BY created_at, id`
	signingKeyStateSQL = `SELECT retired_at FROM signing_keys WHERE id = ? AND project_id = ?`
	activeKeyIDSQL     = `SELECT id FROM signing_keys WHERE project_id = ? AND retired_at IS NULL
ORDER BY created_at DESC, id DESC LIMIT 1`
	retireSigningKeySQL = `UPDATE signing_keys SET retired_at = ? WHERE id = ? AND project_id = ?`
)

// CreateSigningKey records k, which becomes the project's active key if it
// is the newest unretired one. It returns an error matching store.ErrInvalid
// for an empty id, an invalid project id or a public key that is not 32
// bytes, store.ErrNotFound for an unknown project and store.ErrConflict for
// an existing id.
func (s *Store) CreateSigningKey(ctx context.Context, k store.SigningKey) error {
	const op = "create signing key"
	if err := checkKey(op, k.ProjectID, k.ID); err != nil {
		return err
	}
	if len(k.PublicKey) != 32 {
		return invalid(op, "public key is not 32 bytes")
	}
	priv := k.EncryptedPrivateKey
	if priv == nil {
		priv = []byte{}
	}
	_, err := s.exec(ctx, createSigningKeySQL, k.ID, k.ProjectID, k.PublicKey, priv,
		micros(k.CreatedAt), nullMicros(k.RetiredAt))
	return wrap(op, err)
}

// GetSigningKey returns the project's key with the given id, retired or
// not, or an error matching store.ErrNotFound. A key of another project is
// not found.
func (s *Store) GetSigningKey(ctx context.Context, projectID, id string) (store.SigningKey, error) {
	const op = "get signing key"
	if err := checkKey(op, projectID, id); err != nil {
		return store.SigningKey{}, err
	}
	row, err := s.queryRow(ctx, getSigningKeySQL, id, projectID)
	if err != nil {
		return store.SigningKey{}, wrap(op, err)
	}
	k, err := scanSigningKey(row)
	return k, wrap(op, err)
}

// ActiveSigningKey returns the project's newest unretired key, by
// (CreatedAt, ID), or an error matching store.ErrNotFound when there is
// none.
func (s *Store) ActiveSigningKey(ctx context.Context, projectID string) (store.SigningKey, error) {
	const op = "active signing key"
	if !store.ValidProjectID(projectID) {
		return store.SigningKey{}, invalid(op, "project id is not a slug")
	}
	row, err := s.queryRow(ctx, activeSigningKeySQL, projectID)
	if err != nil {
		return store.SigningKey{}, wrap(op, err)
	}
	k, err := scanSigningKey(row)
	return k, wrap(op, err)
}

// ListSigningKeys returns the project's keys, retired ones included, in
// ascending (CreatedAt, ID) order. An unknown project has none.
func (s *Store) ListSigningKeys(ctx context.Context, projectID string) ([]store.SigningKey, error) {
	const op = "list signing keys"
	if !store.ValidProjectID(projectID) {
		return nil, invalid(op, "project id is not a slug")
	}
	rows, err := s.query(ctx, listSigningKeysSQL, projectID)
	if err != nil {
		return nil, wrap(op, err)
	}
	defer rows.Close()
	ks := []store.SigningKey{}
	for rows.Next() {
		k, err := scanSigningKey(rows)
		if err != nil {
			return nil, wrap(op, err)
		}
		ks = append(ks, k)
	}
	return ks, wrap(op, rows.Err())
}

// RetireSigningKey sets the key's RetiredAt to at. It returns an error
// matching store.ErrNotFound for an unknown key, store.ErrConflict when the
// key is the project's active key (rotate first) and store.ErrInvalid for a
// zero at. Retiring a retired key succeeds and keeps the first time. The
// checks and the change happen in one write transaction.
func (s *Store) RetireSigningKey(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "retire signing key"
	if err := checkKey(op, projectID, id); err != nil {
		return err
	}
	if at.IsZero() {
		return invalid(op, "zero time")
	}
	err := s.writeTx(ctx, func(t *wtx) error {
		row, err := t.queryRow(signingKeyStateSQL, id, projectID)
		if err != nil {
			return err
		}
		var retired sql.NullInt64
		if err := row.Scan(&retired); err != nil {
			return err
		}
		if retired.Valid {
			return nil
		}
		row, err = t.queryRow(activeKeyIDSQL, projectID)
		if err != nil {
			return err
		}
		var active string
		if err := row.Scan(&active); err != nil {
			return err
		}
		if active == id {
			return conflict(op, "key is the project's active key")
		}
		_, err = t.exec(retireSigningKeySQL, micros(at), id, projectID)
		return err
	})
	return wrap(op, err)
}

func scanSigningKey(r scanner) (store.SigningKey, error) {
	var k store.SigningKey
	var created int64
	var retired sql.NullInt64
	if err := r.Scan(&k.ID, &k.ProjectID, &k.PublicKey, &k.EncryptedPrivateKey, &created, &retired); err != nil {
		return store.SigningKey{}, err
	}
	k.CreatedAt = fromMicros(created)
	k.RetiredAt = fromNullMicros(retired)
	return k, nil
}
