package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

const (
	apiKeyColumns = `project_id, id, name, created_by, signing_key_id, created_at, last_used_at, revoked_at,
	scopes, expires_at, rolled_from, rolled_to, revokes_at`
	createAPIKeySQL = `INSERT INTO api_keys (project_id, id, name, created_by, signing_key_id, created_at,
	scopes, expires_at, rolled_from)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	getAPIKeySQL = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE project_id = ? AND id = ?`
	// lockAPIKeySQL reads the key and locks its row for the rest of the
	// transaction: concurrent rolls and revocations of one key queue on
	// it, and each reads what the one before committed (a locking read
	// reads the newest committed row, whatever the read view).
	lockAPIKeySQL  = getAPIKeySQL + ` FOR UPDATE`
	listAPIKeysSQL = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE project_id = ?
	ORDER BY created_at, id`
	revokeAPIKeySQL = `UPDATE api_keys SET revoked_at = ?, revokes_at = NULL WHERE project_id = ? AND id = ?`
	rollAPIKeySQL   = `UPDATE api_keys SET rolled_to = ?, revokes_at = ? WHERE project_id = ? AND id = ?`
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
	_, err := s.execCount(ctx, op, createAPIKeySQL, createAPIKeyArgs(k)...)
	return err
}

// GetAPIKey returns the key's record, or an error matching
// store.ErrNotFound. It reads the database on every call (nothing is
// cached), so a revocation committed by any handle is visible to the next
// GetAPIKey of every handle.
func (s *Store) GetAPIKey(ctx context.Context, projectID, id string) (store.APIKey, error) {
	const op = "get api key"
	return getOne(ctx, s, op, getAPIKeySQL, []any{projectID, id}, scanAPIKey)
}

// ListAPIKeys returns the project's keys, revoked ones included, in
// ascending (CreatedAt, ID) order.
func (s *Store) ListAPIKeys(ctx context.Context, projectID string) ([]store.APIKey, error) {
	const op = "list api keys"
	return listAll(ctx, s, op, listAPIKeysSQL, []any{projectID}, scanAPIKey)
}

// ListAPIKeysPage returns at most req.Limit keys of the project whose name
// starts with namePrefix (compared byte by byte; every key when it is
// empty), revoked ones included, that sort strictly after req.After, in
// ascending (CreatedAt, ID) order, and whether more such keys follow: a
// keyset query on api_keys_list. An unknown project lists as empty.
func (s *Store) ListAPIKeysPage(ctx context.Context, projectID, namePrefix string, req paginate.Request) (paginate.Page[store.APIKey], error) {
	const op = "list api keys page"
	limit, fetch := pageSize(req)
	query, args := listAPIKeysPageSQL(projectID, namePrefix, req.After, fetch)
	return listPage(ctx, s, op, limit, query, args, scanAPIKey)
}

// listAPIKeysPageSQL returns ListAPIKeysPage's query and its arguments. The
// name is compared as its bytes (CAST AS BINARY): the column's utf8mb4_bin
// collation pads with spaces, so that "a" would sort equal to "a ".
func listAPIKeysPageSQL(projectID, prefix string, after paginate.Cursor, fetch int) (string, []any) {
	query, args := `SELECT `+apiKeyColumns+` FROM api_keys WHERE project_id = ?`, []any{projectID}
	if prefix != "" {
		query += ` AND CAST(name AS BINARY) >= ?`
		args = append(args, []byte(prefix))
		if end, ok := store.PrefixEnd(prefix); ok {
			query += ` AND CAST(name AS BINARY) < ?`
			args = append(args, []byte(end))
		}
	}
	if !after.IsZero() {
		t := dbTime(after.CreatedAt)
		query += ` AND (created_at > ? OR (created_at = ? AND id > ?))`
		args = append(args, t, t, after.ID)
	}
	query += sprintf(` ORDER BY created_at, id LIMIT %d`, fetch)
	return query, args
}

// RevokeAPIKey sets the key's RevokedAt to at and adds one revocation of
// kind store.RevokedAPIKey to the project's feed, in one transaction.
// Revoking a revoked key succeeds, keeps the first revocation time and adds
// nothing; a key whose scheduled revocation is after at is revoked at at,
// its scheduled item replaced. It returns an error matching
// store.ErrNotFound for an unknown key and store.ErrInvalid for a zero at.
//
// The transaction locks the key's row, then the project's (the feed's
// lock), then the scheduled item: the order every transaction that takes
// more than one of them follows.
func (s *Store) RevokeAPIKey(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "revoke api key"
	at = dbTime(at)
	return s.inTx(ctx, op, func(tx *sql.Tx) error {
		k, err := scanAPIKey(tx.QueryRowContext(ctx, lockAPIKeySQL, projectID, id))
		if err != nil {
			return err // sql.ErrNoRows: not found
		}
		if k.RevokedBy(at) {
			return nil
		}
		m, err := lockFeed(ctx, tx, projectID)
		if err != nil {
			return err
		}
		if !k.RevokesAt.IsZero() {
			// Scheduled later: the revocation happens at at instead.
			if _, err := tx.ExecContext(ctx, unscheduleRevocationSQL, projectID, k.RevokesAt, id); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, revokeAPIKeySQL, at, projectID, id); err != nil {
			return err
		}
		return insertRevocation(ctx, tx, m, projectID, store.RevokedAPIKey, id, at)
	})
}

// RollAPIKey replaces the key id by next and revokes the old key at
// revokeAt, scheduled when that is after next.CreatedAt, in one transaction
// (see store.APIKeyStore). The transaction locks the old key's row first
// (a locking read, which reads the newest committed row), so concurrent
// rolls of one key, on any instances, run one after the other, and every
// one after the first finds the key rolled.
func (s *Store) RollAPIKey(ctx context.Context, projectID, id string, next store.APIKey, revokeAt time.Time) (store.APIKey, error) {
	const op = "roll api key"
	now, due := next.CreatedAt, dbTime(revokeAt)
	next.RolledFrom = id
	var old store.APIKey
	err := s.inTx(ctx, op, func(tx *sql.Tx) error {
		k, err := scanAPIKey(tx.QueryRowContext(ctx, lockAPIKeySQL, projectID, id))
		if err != nil {
			return err // sql.ErrNoRows: not found
		}
		if err := store.CheckRollable(k, next, now); err != nil {
			return fmt.Errorf("mysql: %s: %w", op, err)
		}
		// The feed's lock before the successor's insert, whose foreign
		// key check would take a shared lock on the project row first.
		m, err := lockFeed(ctx, tx, projectID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, createAPIKeySQL, createAPIKeyArgs(next)...); err != nil {
			return err
		}
		k.RolledTo = next.ID
		if !due.After(now) {
			if _, err := tx.ExecContext(ctx, rollAPIKeySQL, next.ID, nil, projectID, id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, revokeAPIKeySQL, due, projectID, id); err != nil {
				return err
			}
			k.RevokedAt = due
			old = k
			return insertRevocation(ctx, tx, m, projectID, store.RevokedAPIKey, id, due)
		}
		if _, err := tx.ExecContext(ctx, rollAPIKeySQL, next.ID, due, projectID, id); err != nil {
			return err
		}
		k.RevokesAt = due
		old = k
		return scheduleRevocation(ctx, tx, projectID, store.RevokedAPIKey, id, due)
	})
	if err != nil {
		return store.APIKey{}, err
	}
	return old, nil
}

// TouchAPIKey sets the key's LastUsedAt to at unless it is already at or
// after at. It returns an error matching store.ErrNotFound for an unknown key
// and store.ErrInvalid for a zero at.
func (s *Store) TouchAPIKey(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "touch api key"
	t := dbTime(at)
	n, err := s.execCount(ctx, op, touchAPIKeySQL, t, projectID, id, t)
	if err != nil || n > 0 {
		return err
	}
	return s.read(ctx, op, func(q querier) error {
		return existsOrNotFound(ctx, q, op, apiKeyExistsSQL, projectID, id)
	})
}

// createAPIKeyArgs returns the arguments of createAPIKeySQL for k.
func createAPIKeyArgs(k store.APIKey) []any {
	return []any{k.ProjectID, k.ID, k.Name, k.CreatedBy, k.SigningKeyID, dbTime(k.CreatedAt),
		strings.Join(k.Scopes, " "), nullTime(k.ExpiresAt), k.RolledFrom}
}

func scanAPIKey(row rowScanner) (store.APIKey, error) {
	var k store.APIKey
	var used, revoked, expires, revokes sql.NullTime
	var scopes string
	if err := row.Scan(&k.ProjectID, &k.ID, &k.Name, &k.CreatedBy, &k.SigningKeyID,
		&k.CreatedAt, &used, &revoked, &scopes, &expires, &k.RolledFrom, &k.RolledTo, &revokes); err != nil {
		return store.APIKey{}, err
	}
	k.CreatedAt = k.CreatedAt.UTC()
	k.LastUsedAt = fromNull(used)
	k.RevokedAt = fromNull(revoked)
	k.ExpiresAt = fromNull(expires)
	k.RevokesAt = fromNull(revokes)
	k.Scopes = store.ScopesOf(scopes)
	return k, nil
}
