package sqlite

import (
	"context"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	createSigningKeySQL = `INSERT INTO signing_keys (id, project_id, public_key, encrypted_private_key, created_at, alg)
VALUES (?, ?, ?, ?, ?, ?)`
	signingKeyColumns   = `id, project_id, public_key, encrypted_private_key, created_at, retired_at, alg`
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
// when store.CheckSigningKey refuses k, store.ErrNotFound for an unknown
// project and store.ErrConflict for an existing id.
func (s *Store) CreateSigningKey(ctx context.Context, k store.SigningKey) error {
	const op = "create signing key"
	_, err := s.exec(ctx, createSigningKeySQL, k.ID, k.ProjectID, k.PublicKey, k.EncryptedPrivateKey, dbTime(k.CreatedAt), k.Algorithm)
	return wrap(op, err)
}

// GetSigningKey returns the project's key with the given id, retired or
// not, or an error matching store.ErrNotFound. A key of another project is
// not found.
func (s *Store) GetSigningKey(ctx context.Context, projectID, id string) (store.SigningKey, error) {
	const op = "get signing key"
	return s.readSigningKey(ctx, op, getSigningKeySQL, id, projectID)
}

// ActiveSigningKey returns the project's newest unretired key, by
// (CreatedAt, ID), or an error matching store.ErrNotFound when there is
// none.
func (s *Store) ActiveSigningKey(ctx context.Context, projectID string) (store.SigningKey, error) {
	const op = "active signing key"
	return s.readSigningKey(ctx, op, activeSigningKeySQL, projectID)
}

// ListSigningKeys returns the project's keys, retired ones included, in
// ascending (CreatedAt, ID) order. An unknown project has none.
func (s *Store) ListSigningKeys(ctx context.Context, projectID string) ([]store.SigningKey, error) {
	const op = "list signing keys"
	ks, err := readAll(ctx, s, listSigningKeysSQL, func(st *sqlite.Stmt) (store.SigningKey, error) {
		return scanSigningKey(st), nil
	}, projectID)
	if err != nil {
		return nil, wrap(op, err)
	}
	return ks, nil
}

// RetireSigningKey sets the key's RetiredAt to at and adds one revocation
// of kind store.RevokedSigningKey to the project's feed. It returns an error
// matching store.ErrNotFound for an unknown key, store.ErrConflict when the
// key is the project's active key (rotate first) and store.ErrInvalid for a
// zero at. Retiring a retired key succeeds, keeps the first time and adds
// nothing. The checks and the changes happen in one write transaction.
func (s *Store) RetireSigningKey(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "retire signing key"
	err := s.writeTx(ctx, func(t *wtx) error {
		retired, err := t.isSet(signingKeyStateSQL, id, projectID)
		if err != nil || retired {
			return err
		}
		// The key is not retired, so the project has an active key.
		var active string
		if err := t.queryRow(activeKeyIDSQL, func(st *sqlite.Stmt) error {
			active = st.ColumnText(0)
			return nil
		}, projectID); err != nil {
			return err
		}
		if active == id {
			return conflict(op, "key is the project's active key")
		}
		if _, err := t.exec(retireSigningKeySQL, dbTime(at), id, projectID); err != nil {
			return err
		}
		return t.addRevocation(projectID, store.RevokedSigningKey, id, dbTime(at))
	})
	return wrap(op, err)
}

// readSigningKey reads the key of query's row.
func (s *Store) readSigningKey(ctx context.Context, op, query string, args ...any) (store.SigningKey, error) {
	var k store.SigningKey
	err := s.readRow(ctx, query, func(st *sqlite.Stmt) error {
		k = scanSigningKey(st)
		return nil
	}, args...)
	if err != nil {
		return store.SigningKey{}, wrap(op, err)
	}
	return k, nil
}

// scanSigningKey returns the key of a row of signingKeyColumns.
func scanSigningKey(st *sqlite.Stmt) store.SigningKey {
	k := store.SigningKey{
		ID:                  st.ColumnText(0),
		ProjectID:           st.ColumnText(1),
		PublicKey:           make([]byte, st.ColumnLen(2)),
		EncryptedPrivateKey: make([]byte, st.ColumnLen(3)),
		CreatedAt:           columnTime(st, 4),
		RetiredAt:           columnNullTime(st, 5),
		Algorithm:           st.ColumnText(6),
	}
	st.ColumnBytes(2, k.PublicKey)
	st.ColumnBytes(3, k.EncryptedPrivateKey)
	return k
}
