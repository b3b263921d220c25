package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	signingKeyColumns   = `project_id, id, public_key, encrypted_private_key, created_at, retired_at, alg`
	createSigningKeySQL = `INSERT INTO signing_keys (` + signingKeyColumns + `)
	VALUES ($1, $2, $3, $4, $5, NULL, $6)`
	getSigningKeySQL = `SELECT ` + signingKeyColumns + ` FROM signing_keys
	WHERE project_id = $1 AND id = $2`
	activeSigningKeySQL = `SELECT ` + signingKeyColumns + ` FROM signing_keys
	WHERE project_id = $1 AND retired_at IS NULL
	ORDER BY created_at DESC, id DESC LIMIT 1`
	listSigningKeysSQL = `SELECT ` + signingKeyColumns + ` FROM signing_keys
	WHERE project_id = $1 ORDER BY created_at, id`
	retireSigningKeySQL = `UPDATE signing_keys SET retired_at = $3
	WHERE project_id = $1 AND id = $2 AND retired_at IS NULL`
)

// CreateSigningKey records k, which becomes the project's active key if it
// is the newest unretired one. It returns an error matching store.ErrInvalid
// when store.CheckSigningKey refuses k, store.ErrNotFound for an unknown
// project and store.ErrConflict for an existing id.
func (s *Store) CreateSigningKey(ctx context.Context, k store.SigningKey) error {
	const op = "create signing key"
	_, err := s.execCount(ctx, op, createSigningKeySQL, k.ProjectID, k.ID, k.PublicKey,
		k.EncryptedPrivateKey, dbTime(k.CreatedAt), k.Algorithm)
	return err
}

// GetSigningKey returns the project's key with the given id, retired or not,
// or an error matching store.ErrNotFound. A key of another project is not
// found.
func (s *Store) GetSigningKey(ctx context.Context, projectID, id string) (store.SigningKey, error) {
	const op = "get signing key"
	return getOne(ctx, s, op, getSigningKeySQL, []any{projectID, id}, scanSigningKey)
}

// ActiveSigningKey returns the project's newest unretired key, by
// (CreatedAt, ID), or an error matching store.ErrNotFound when there is
// none.
func (s *Store) ActiveSigningKey(ctx context.Context, projectID string) (store.SigningKey, error) {
	const op = "active signing key"
	return getOne(ctx, s, op, activeSigningKeySQL, []any{projectID}, scanSigningKey)
}

// ListSigningKeys returns the project's keys, retired ones included, in
// ascending (CreatedAt, ID) order.
func (s *Store) ListSigningKeys(ctx context.Context, projectID string) ([]store.SigningKey, error) {
	const op = "list signing keys"
	return listAll(ctx, s, op, listSigningKeysSQL, []any{projectID}, func(rows pgx.Rows) (store.SigningKey, error) {
		return scanSigningKey(rows)
	})
}

// RetireSigningKey sets the key's RetiredAt to at and adds one revocation of
// kind store.RevokedSigningKey to the project's feed, in one transaction. It
// returns an error matching store.ErrNotFound for an unknown key,
// store.ErrConflict when the key is the project's active key (rotate first)
// and store.ErrInvalid for a zero at. Retiring a retired key succeeds, keeps
// the first time and adds nothing.
//
// The transaction first locks the project row (the feed's lock, see
// lockFeedSQL), which also serializes retirements per project, so that two
// concurrent retirements cannot each see the other's key as active and
// leave the project without one.
func (s *Store) RetireSigningKey(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "retire signing key"
	at = dbTime(at)
	return s.inTx(ctx, op, func(tx pgx.Tx) error {
		m, err := lockFeed(ctx, tx, projectID)
		if err != nil {
			return err // pgx.ErrNoRows: no project, so no key
		}
		k, err := scanSigningKey(tx.QueryRow(ctx, getSigningKeySQL, projectID, id))
		if err != nil {
			return err
		}
		if k.Retired() {
			return nil
		}
		active, err := scanSigningKey(tx.QueryRow(ctx, activeSigningKeySQL, projectID))
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if err == nil && active.ID == id {
			return fmt.Errorf("postgres: %s: the key is the project's active key: %w", op, store.ErrConflict)
		}
		if _, err := tx.Exec(ctx, retireSigningKeySQL, projectID, id, at); err != nil {
			return err
		}
		return insertRevocation(ctx, tx, m, projectID, store.RevokedSigningKey, id, at)
	})
}

func scanSigningKey(row rowScanner) (store.SigningKey, error) {
	var k store.SigningKey
	var retired pgtype.Timestamptz
	if err := row.Scan(&k.ProjectID, &k.ID, &k.PublicKey, &k.EncryptedPrivateKey, &k.CreatedAt, &retired, &k.Algorithm); err != nil {
		return store.SigningKey{}, err
	}
	k.CreatedAt = k.CreatedAt.UTC()
	k.RetiredAt = fromNullDBTime(retired)
	return k, nil
}
