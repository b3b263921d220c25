package postgres

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	signingKeyColumns   = `project_id, id, public_key, encrypted_private_key, created_at, retired_at`
	createSigningKeySQL = `INSERT INTO signing_keys
	(project_id, id, public_key, encrypted_private_key, created_at, retired_at)
	VALUES ($1, $2, $3, $4, $5, $6)`
	getSigningKeySQL = `SELECT ` + signingKeyColumns + ` FROM signing_keys
	WHERE project_id = $1 AND id = $2`
	activeSigningKeySQL = `SELECT ` + signingKeyColumns + ` FROM signing_keys
	WHERE project_id = $1 AND retired_at IS NULL
	ORDER BY created_at DESC, id DESC LIMIT 1`
	listSigningKeysSQL = `SELECT ` + signingKeyColumns + ` FROM signing_keys
	WHERE project_id = $1 ORDER BY created_at, id`
	// lockSigningKeysSQL serializes retirements per project, so that two
	// concurrent retirements cannot each see the other's key as active and
	// leave the project without one.
	lockSigningKeysSQL  = `SELECT 1 FROM projects WHERE id = $1 FOR NO KEY UPDATE`
	retireSigningKeySQL = `UPDATE signing_keys SET retired_at = coalesce(retired_at, $3)
	WHERE project_id = $1 AND id = $2`
)

// CreateSigningKey records k, which becomes the project's active key if it
// is the newest unretired one. It returns an error matching store.ErrInvalid
// for an empty id or a public key that is not 32 bytes, store.ErrNotFound
// for an unknown project and store.ErrConflict for an existing id.
func (s *Store) CreateSigningKey(ctx context.Context, k store.SigningKey) error {
	const op = "create signing key"
	if err := checkProject(op, k.ProjectID); err != nil {
		return err
	}
	if err := checkID(op, "id", k.ID); err != nil {
		return err
	}
	if len(k.PublicKey) != ed25519.PublicKeySize {
		return invalid(op, fmt.Sprintf("public key is %d bytes, not %d", len(k.PublicKey), ed25519.PublicKeySize))
	}
	priv := k.EncryptedPrivateKey
	if priv == nil {
		priv = []byte{}
	}
	_, err := s.pool.Exec(ctx, createSigningKeySQL, k.ProjectID, k.ID, k.PublicKey, priv,
		ts(k.CreatedAt), nullTS(k.RetiredAt))
	return translate(op, err)
}

// GetSigningKey returns the project's key with the given id, retired or not,
// or an error matching store.ErrNotFound. A key of another project is not
// found.
func (s *Store) GetSigningKey(ctx context.Context, projectID, id string) (store.SigningKey, error) {
	const op = "get signing key"
	if err := checkProject(op, projectID); err != nil {
		return store.SigningKey{}, err
	}
	if err := checkID(op, "id", id); err != nil {
		return store.SigningKey{}, err
	}
	k, err := scanSigningKey(s.pool.QueryRow(ctx, getSigningKeySQL, projectID, id))
	return k, translate(op, err)
}

// ActiveSigningKey returns the project's newest unretired key, by
// (CreatedAt, ID), or an error matching store.ErrNotFound when there is
// none.
func (s *Store) ActiveSigningKey(ctx context.Context, projectID string) (store.SigningKey, error) {
	const op = "active signing key"
	if err := checkProject(op, projectID); err != nil {
		return store.SigningKey{}, err
	}
	k, err := scanSigningKey(s.pool.QueryRow(ctx, activeSigningKeySQL, projectID))
	return k, translate(op, err)
}

// ListSigningKeys returns the project's keys, retired ones included, in
// ascending (CreatedAt, ID) order.
func (s *Store) ListSigningKeys(ctx context.Context, projectID string) ([]store.SigningKey, error) {
	const op = "list signing keys"
	if err := checkProject(op, projectID); err != nil {
		return nil, err
	}
	rows, _ := s.pool.Query(ctx, listSigningKeysSQL, projectID)
	ks, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.SigningKey, error) {
		return scanSigningKey(row)
	})
	if err != nil {
		return nil, translate(op, err)
	}
	if ks == nil {
		ks = []store.SigningKey{}
	}
	return ks, nil
}

// RetireSigningKey sets the key's RetiredAt to at. It returns an error
// matching store.ErrNotFound for an unknown key, store.ErrConflict when the
// key is the project's active key (rotate first) and store.ErrInvalid for a
// zero at. Retiring a retired key succeeds and keeps the first time.
func (s *Store) RetireSigningKey(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "retire signing key"
	if err := checkKeyArgs(op, projectID, id, at); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, lockSigningKeysSQL, projectID).Scan(&one); err != nil {
			// No project, so no key.
			return translate(op, err)
		}
		k, err := scanSigningKey(tx.QueryRow(ctx, getSigningKeySQL, projectID, id))
		if err != nil {
			return translate(op, err)
		}
		if k.Retired() {
			return nil
		}
		active, err := scanSigningKey(tx.QueryRow(ctx, activeSigningKeySQL, projectID))
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return translate(op, err)
		}
		if err == nil && active.ID == id {
			return fmt.Errorf("postgres: %s: %q is the active key: %w", op, id, store.ErrConflict)
		}
		_, err = tx.Exec(ctx, retireSigningKeySQL, projectID, id, ts(at))
		return translate(op, err)
	})
}

func scanSigningKey(row rowScanner) (store.SigningKey, error) {
	var k store.SigningKey
	var retired pgtype.Timestamptz
	if err := row.Scan(&k.ProjectID, &k.ID, &k.PublicKey, &k.EncryptedPrivateKey, &k.CreatedAt, &retired); err != nil {
		return store.SigningKey{}, err
	}
	k.CreatedAt = k.CreatedAt.UTC()
	k.RetiredAt = fromNullTS(retired)
	return k, nil
}
