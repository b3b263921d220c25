package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

const (
	apiKeyColumns = `project_id, id, name, created_by, signing_key_id, created_at, last_used_at, revoked_at,
	scopes, expires_at, rolled_from, rolled_to, revokes_at`
	createAPIKeySQL = `INSERT INTO api_keys (project_id, id, name, created_by, signing_key_id, created_at,
	scopes, expires_at, rolled_from)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`
	getAPIKeySQL = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE project_id = $1 AND id = $2`
	// lockAPIKeySQL reads the key and locks its row for the rest of the
	// transaction: concurrent rolls and revocations of one key queue on
	// it, and each sees what the one before committed.
	lockAPIKeySQL  = getAPIKeySQL + ` FOR UPDATE`
	listAPIKeysSQL = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE project_id = $1
	ORDER BY created_at, id`
	listAPIKeysBaseSQL  = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE project_id = $1`
	listAPIKeysFromSQL  = ` AND name >= %s COLLATE "C"`
	listAPIKeysBelowSQL = ` AND name < %s COLLATE "C"`
	listAPIKeysAfterSQL = ` AND (created_at, id) > (%s, %s)`
	listAPIKeysOrderSQL = ` ORDER BY created_at, id LIMIT %s`
	revokeAPIKeySQL     = `UPDATE api_keys SET revoked_at = $3, revokes_at = NULL WHERE project_id = $1 AND id = $2`
	rollAPIKeySQL       = `UPDATE api_keys SET rolled_to = $3, revokes_at = $4 WHERE project_id = $1 AND id = $2`
	// touchAPIKeySQL writes only when it moves LastUsedAt forward, so a
	// key used by many requests at once does not queue writes on its row.
	touchAPIKeySQL = `UPDATE api_keys SET last_used_at = $3
	WHERE project_id = $1 AND id = $2 AND (last_used_at IS NULL OR last_used_at < $3)`
	apiKeyExistsSQL = `SELECT EXISTS (SELECT 1 FROM api_keys WHERE project_id = $1 AND id = $2)`
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
// store.ErrNotFound. It reads the database on every call, so a revocation
// committed by any handle is visible to the next GetAPIKey of every handle.
func (s *Store) GetAPIKey(ctx context.Context, projectID, id string) (store.APIKey, error) {
	const op = "get api key"
	return getOne(ctx, s, op, getAPIKeySQL, []any{projectID, id}, scanAPIKey)
}

// ListAPIKeys returns the project's keys, revoked ones included, in
// ascending (CreatedAt, ID) order.
func (s *Store) ListAPIKeys(ctx context.Context, projectID string) ([]store.APIKey, error) {
	const op = "list api keys"
	return listAll(ctx, s, op, listAPIKeysSQL, []any{projectID}, func(rows pgx.Rows) (store.APIKey, error) {
		return scanAPIKey(rows)
	})
}

// ListAPIKeysPage returns at most req.Limit keys of the project whose name
// starts with namePrefix (compared byte by byte; every key when it is
// empty), revoked ones included, that sort strictly after req.After, in
// ascending (CreatedAt, ID) order, and whether more such keys follow. An
// unknown project lists as empty.
func (s *Store) ListAPIKeysPage(ctx context.Context, projectID, namePrefix string, req paginate.Request) (paginate.Page[store.APIKey], error) {
	const op = "list api keys page"
	limit, fetch := pageSize(req)
	sql, args := listAPIKeysBaseSQL, []any{projectID}
	ph := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if namePrefix != "" {
		sql += fmt.Sprintf(listAPIKeysFromSQL, ph(namePrefix))
		if end, ok := store.PrefixEnd(namePrefix); ok {
			sql += fmt.Sprintf(listAPIKeysBelowSQL, ph(end))
		}
	}
	if !req.After.IsZero() {
		sql += fmt.Sprintf(listAPIKeysAfterSQL, ph(dbTime(req.After.CreatedAt)), ph(req.After.ID))
	}
	sql += fmt.Sprintf(listAPIKeysOrderSQL, ph(fetch))
	return listPage(ctx, s, op, limit, sql, args, func(rows pgx.Rows) (store.APIKey, error) {
		return scanAPIKey(rows)
	})
}

// RevokeAPIKey sets the key's RevokedAt to at and adds one revocation of
// kind store.RevokedAPIKey to the project's feed, in one transaction.
// Revoking a revoked key succeeds, keeps the first revocation time and adds
// nothing; a key whose scheduled revocation is after at is revoked at at,
// its scheduled item replaced. It returns an error matching
// store.ErrNotFound for an unknown key and store.ErrInvalid for a zero at.
func (s *Store) RevokeAPIKey(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "revoke api key"
	at = dbTime(at)
	return s.inTx(ctx, op, func(tx pgx.Tx) error {
		k, err := scanAPIKey(tx.QueryRow(ctx, lockAPIKeySQL, projectID, id))
		if err != nil {
			return err // pgx.ErrNoRows: not found
		}
		if k.RevokedBy(at) {
			return nil
		}
		if !k.RevokesAt.IsZero() {
			// Scheduled later: the revocation happens at at instead.
			if _, err := tx.Exec(ctx, unscheduleRevocationSQL, projectID, k.RevokesAt, id); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, revokeAPIKeySQL, projectID, id, at); err != nil {
			return err
		}
		return addRevocation(ctx, tx, projectID, store.RevokedAPIKey, id, at)
	})
}

// RollAPIKey replaces the key id by next and revokes the old key at
// revokeAt, scheduled when that is after next.CreatedAt, in one transaction
// (see store.APIKeyStore). The transaction locks the old key's row first,
// so concurrent rolls of one key, on any instances, run one after the
// other, and every one after the first finds the key rolled.
func (s *Store) RollAPIKey(ctx context.Context, projectID, id string, next store.APIKey, revokeAt time.Time) (store.APIKey, error) {
	const op = "roll api key"
	now, due := next.CreatedAt, dbTime(revokeAt)
	var old store.APIKey
	err := s.inTx(ctx, op, func(tx pgx.Tx) error {
		k, err := scanAPIKey(tx.QueryRow(ctx, lockAPIKeySQL, projectID, id))
		if err != nil {
			return err // pgx.ErrNoRows: not found
		}
		if err := store.CheckRollable(k, next, now); err != nil {
			return fmt.Errorf("postgres: %s: %w", op, err)
		}
		next.RolledFrom = id
		if _, err := tx.Exec(ctx, createAPIKeySQL, createAPIKeyArgs(next)...); err != nil {
			return err
		}
		k.RolledTo = next.ID
		if !due.After(now) {
			if _, err := tx.Exec(ctx, rollAPIKeySQL, projectID, id, next.ID, nil); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, revokeAPIKeySQL, projectID, id, due); err != nil {
				return err
			}
			k.RevokedAt = due
			old = k
			return addRevocation(ctx, tx, projectID, store.RevokedAPIKey, id, due)
		}
		if _, err := tx.Exec(ctx, rollAPIKeySQL, projectID, id, next.ID, due); err != nil {
			return err
		}
		k.RevokesAt = due
		old = k
		_, err = tx.Exec(ctx, scheduleRevocationSQL, projectID, due, id, string(store.RevokedAPIKey))
		return err
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
	n, err := s.execCount(ctx, op, touchAPIKeySQL, projectID, id, dbTime(at))
	if err != nil || n > 0 {
		return err
	}
	return s.read(ctx, op, func(q querier) error {
		return existsOrNotFound(ctx, q, op, apiKeyExistsSQL, projectID, id)
	})
}

// existsOrNotFound runs sql, a SELECT EXISTS, and returns an error matching
// store.ErrNotFound when it is false.
func existsOrNotFound(ctx context.Context, q querier, op, sql string, args ...any) error {
	var ok bool
	if err := q.QueryRow(ctx, sql, args...).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return notFound(op)
	}
	return nil
}

// createAPIKeyArgs returns the arguments of createAPIKeySQL for k.
func createAPIKeyArgs(k store.APIKey) []any {
	return []any{k.ProjectID, k.ID, k.Name, k.CreatedBy, k.SigningKeyID, dbTime(k.CreatedAt),
		strings.Join(k.Scopes, " "), nullDBTime(k.ExpiresAt), k.RolledFrom}
}

func scanAPIKey(row rowScanner) (store.APIKey, error) {
	var k store.APIKey
	var used, revoked, expires, revokes pgtype.Timestamptz
	var scopes string
	if err := row.Scan(&k.ProjectID, &k.ID, &k.Name, &k.CreatedBy, &k.SigningKeyID,
		&k.CreatedAt, &used, &revoked, &scopes, &expires, &k.RolledFrom, &k.RolledTo, &revokes); err != nil {
		return store.APIKey{}, err
	}
	k.CreatedAt = k.CreatedAt.UTC()
	k.LastUsedAt = fromNullDBTime(used)
	k.RevokedAt = fromNullDBTime(revoked)
	k.ExpiresAt = fromNullDBTime(expires)
	k.RevokesAt = fromNullDBTime(revokes)
	k.Scopes = store.ScopesOf(scopes)
	return k, nil
}
