package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

const (
	createAPIKeySQL = `INSERT INTO api_keys (id, project_id, name, created_by, signing_key_id, created_at, scopes, expires_at, rolled_from)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	apiKeyColumns = `id, project_id, name, created_by, signing_key_id, created_at, last_used_at, revoked_at,
scopes, expires_at, rolled_from, rolled_to, revokes_at`
	getAPIKeySQL  = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE id = ? AND project_id = ?`
	listAPIKeySQL = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE project_id = ?
ORDER BY created_at, id`
	// The ListAPIKeysPage query is listAPIKeysPageSQL, then the conditions
	// that apply (a cursor, a name prefix as a byte range, see
	// prefixEnd), then listAPIKeysOrderSQL.
	listAPIKeysPageSQL   = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE project_id = ?`
	listAPIKeysAfterSQL  = ` AND (created_at, id) > (?, ?)`
	listAPIKeysFromSQL   = ` AND name >= ?`
	listAPIKeysBeforeSQL = ` AND name < ?`
	listAPIKeysOrderSQL  = ` ORDER BY created_at, id LIMIT ?`
	// revokeAPIKeySQL revokes a key that is not revoked, or whose
	// revocation is scheduled after the time given; apiKeyRevokedSQL
	// tells a revoked key from an unknown one first.
	apiKeyRevokedSQL = `SELECT revoked_at, revokes_at FROM api_keys WHERE id = ? AND project_id = ?`
	revokeAPIKeySQL  = `UPDATE api_keys SET revoked_at = ?, revokes_at = NULL WHERE id = ? AND project_id = ?`
	// rollAPIKeySQL marks the rolled key, only if no roll did first.
	rollAPIKeySQL = `UPDATE api_keys SET rolled_to = ?, revokes_at = ?
WHERE id = ? AND project_id = ? AND rolled_to = ''`
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
	_, err := s.exec(ctx, createAPIKeySQL, createAPIKeyArgs(k)...)
	return wrap(op, err)
}

// GetAPIKey returns the key's record, or an error matching
// store.ErrNotFound. It reads the database on every call (nothing is
// cached), so a revocation committed by any handle, in any process, is seen
// by the next call.
func (s *Store) GetAPIKey(ctx context.Context, projectID, id string) (store.APIKey, error) {
	const op = "get api key"
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
	ks, err := readAll(ctx, s, listAPIKeySQL, func(st *sqlite.Stmt) (store.APIKey, error) {
		return scanAPIKey(st), nil
	}, projectID)
	if err != nil {
		return nil, wrap(op, err)
	}
	return ks, nil
}

// ListAPIKeysPage returns at most req.Limit keys of the project whose name
// starts with namePrefix (compared byte by byte; every key when it is
// empty), revoked ones included, that sort strictly after req.After, in
// ascending (CreatedAt, ID) order, and whether more such keys follow. An
// unknown project lists as empty.
func (s *Store) ListAPIKeysPage(ctx context.Context, projectID, namePrefix string, req paginate.Request) (paginate.Page[store.APIKey], error) {
	const op = "list api keys page"
	query, args := listAPIKeysPageSQL, []any{projectID}
	if !req.After.IsZero() {
		query += listAPIKeysAfterSQL
		args = append(args, dbTime(req.After.CreatedAt), req.After.ID)
	}
	if namePrefix != "" {
		query += listAPIKeysFromSQL
		args = append(args, namePrefix)
		if end, ok := store.PrefixEnd(namePrefix); ok {
			query += listAPIKeysBeforeSQL
			args = append(args, end)
		}
	}
	query += listAPIKeysOrderSQL
	args = append(args, req.Limit+1)
	ks, err := readAll(ctx, s, query, func(st *sqlite.Stmt) (store.APIKey, error) {
		return scanAPIKey(st), nil
	}, args...)
	if err != nil {
		return paginate.Page[store.APIKey]{}, wrap(op, err)
	}
	return paginate.PageOf(ks, req.Limit), nil
}

// RevokeAPIKey sets the key's RevokedAt to at and adds one revocation of
// kind store.RevokedAPIKey to the project's feed, in one write transaction.
// Revoking a revoked key succeeds, keeps the first revocation time and adds
// nothing; a key whose scheduled revocation is after at is revoked at at,
// its scheduled item replaced. It returns an error matching
// store.ErrNotFound for an unknown key and store.ErrInvalid for a zero at.
func (s *Store) RevokeAPIKey(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "revoke api key"
	us := dbTime(at)
	err := s.writeTx(ctx, func(t *wtx) error {
		var revoked, scheduled bool
		var revokesAt int64
		err := t.queryRow(apiKeyRevokedSQL, func(st *sqlite.Stmt) error {
			revoked, scheduled, revokesAt = !st.ColumnIsNull(0), !st.ColumnIsNull(1), st.ColumnInt64(1)
			return nil
		}, id, projectID)
		if err != nil || revoked || scheduled && revokesAt <= us {
			return err
		}
		if scheduled {
			// Scheduled later: the revocation happens at at instead.
			if _, err := t.exec(unscheduleRevocationSQL, projectID, revokesAt, id); err != nil {
				return err
			}
		}
		if _, err := t.exec(revokeAPIKeySQL, us, id, projectID); err != nil {
			return err
		}
		return t.addRevocation(projectID, store.RevokedAPIKey, id, us)
	})
	return wrap(op, err)
}

// RollAPIKey replaces the key id by next and revokes the old key at
// revokeAt, scheduled when that is after next.CreatedAt, in one write
// transaction (see store.APIKeyStore). SQLite runs write transactions one
// at a time across every handle, and the old key is marked only while no
// roll marked it, so of concurrent rolls exactly one succeeds.
func (s *Store) RollAPIKey(ctx context.Context, projectID, id string, next store.APIKey, revokeAt time.Time) (store.APIKey, error) {
	const op = "roll api key"
	now, due := next.CreatedAt, dbTime(revokeAt)
	var old store.APIKey
	err := s.writeTx(ctx, func(t *wtx) error {
		err := t.queryRow(getAPIKeySQL, func(st *sqlite.Stmt) error {
			old = scanAPIKey(st)
			return nil
		}, id, projectID)
		if err != nil {
			return err
		}
		if err := store.CheckRollable(old, next, now); err != nil {
			return err
		}
		next.RolledFrom = id
		if _, err := t.exec(createAPIKeySQL, createAPIKeyArgs(next)...); err != nil {
			return err
		}
		scheduled := due > dbTime(now)
		var revokesAt any
		if scheduled {
			revokesAt = due
		}
		if n, err := t.exec(rollAPIKeySQL, next.ID, revokesAt, id, projectID); err != nil || n == 0 {
			return errors.Join(err, fmt.Errorf("rolled already: %w", store.ErrConflict))
		}
		old.RolledTo = next.ID
		if !scheduled {
			if _, err := t.exec(revokeAPIKeySQL, due, id, projectID); err != nil {
				return err
			}
			old.RevokedAt = fromDBTime(due)
			return t.addRevocation(projectID, store.RevokedAPIKey, id, due)
		}
		old.RevokesAt = fromDBTime(due)
		if _, err := t.exec(scheduleRevocationSQL, projectID, due, id, string(store.RevokedAPIKey)); err != nil {
			return err
		}
		t.revoked = true // a waiting feed learns the new time
		return nil
	})
	if err != nil {
		return store.APIKey{}, wrap(op, err)
	}
	return old, nil
}

// TouchAPIKey sets the key's LastUsedAt to at unless it is already at or
// after at. It returns an error matching store.ErrNotFound for an unknown
// key and store.ErrInvalid for a zero at.
func (s *Store) TouchAPIKey(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "touch api key"
	us := dbTime(at)
	n, err := s.exec(ctx, touchAPIKeySQL, us, id, projectID, us)
	if err != nil || n > 0 {
		return wrap(op, err)
	}
	// Nothing changed: a newer use was recorded, or there is no such key.
	return wrap(op, s.readRow(ctx, existsAPIKeySQL, func(*sqlite.Stmt) error { return nil }, id, projectID))
}

// createAPIKeyArgs returns the arguments of createAPIKeySQL for k.
func createAPIKeyArgs(k store.APIKey) []any {
	return []any{k.ID, k.ProjectID, k.Name, k.CreatedBy, k.SigningKeyID, dbTime(k.CreatedAt),
		strings.Join(k.Scopes, " "), nullDBTime(k.ExpiresAt), k.RolledFrom}
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
		Scopes:       store.ScopesOf(st.ColumnText(8)),
		ExpiresAt:    columnNullTime(st, 9),
		RolledFrom:   st.ColumnText(10),
		RolledTo:     st.ColumnText(11),
		RevokesAt:    columnNullTime(st, 12),
	}
}
