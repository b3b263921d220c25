package postgres

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

const (
	userColumns   = `project_id, id, email, password_hash, tags, created_at, disabled_at`
	createUserSQL = `INSERT INTO users
	(project_id, id, email, email_normalized, password_hash, tags, created_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7)`
	getUserSQL         = `SELECT ` + userColumns + ` FROM users WHERE project_id = $1 AND id = $2`
	getUserByEmailSQL  = `SELECT ` + userColumns + ` FROM users WHERE project_id = $1 AND email_normalized = $2`
	setPasswordSQL     = `UPDATE users SET password_hash = $3 WHERE project_id = $1 AND id = $2`
	replacePasswordSQL = `UPDATE users SET password_hash = $4 WHERE project_id = $1 AND id = $2 AND password_hash = $3`
	setTagsSQL         = `UPDATE users SET tags = $3 WHERE project_id = $1 AND id = $2`

	// The pieces of ListUsers' keyset query, see listUsersSQL; %s are
	// placeholders.
	listUsersBaseSQL  = `SELECT ` + userColumns + ` FROM users WHERE project_id = $1`
	listUsersFromSQL  = ` AND email_normalized >= %s`
	listUsersBelowSQL = ` AND email_normalized < %s`
	listUsersAfterSQL = ` AND (created_at, id) > (%s, %s)`
	listUsersOrderSQL = ` ORDER BY created_at, id LIMIT %s`

	// lockUserSQL takes the user row's strongest lock: it waits for, and
	// then excludes, the FOR SHARE lock CreateRefreshFamily holds on
	// the user until it commits, so that no family is added to a user
	// being disabled or whose sessions are being ended (see
	// createFamilySQL).
	lockUserSQL           = `SELECT disabled_at FROM users WHERE project_id = $1 AND id = $2 FOR UPDATE`
	disableUserSQL        = `UPDATE users SET disabled_at = $3 WHERE project_id = $1 AND id = $2`
	revokeUserFamiliesSQL = `UPDATE refresh_families SET revoked_at = $3
	WHERE project_id = $1 AND user_id = $2 AND revoked_at IS NULL RETURNING id`
	deleteUserConsoleSessionsSQL = `DELETE FROM console_sessions WHERE project_id = $1 AND user_id = $2`
	enableUserSQL                = `UPDATE users SET disabled_at = NULL WHERE project_id = $1 AND id = $2`
)

// CreateUser creates u. It returns an error matching store.ErrInvalid when
// store.CheckUser refuses u, store.ErrNotFound for an unknown project, and
// store.ErrConflict when the id exists in the project or another user of the
// project has the same email compared case-insensitively (a UNIQUE
// constraint on the store.NormalizeEmail form).
func (s *Store) CreateUser(ctx context.Context, u store.User) error {
	const op = "create user"
	_, err := s.execCount(ctx, op, createUserSQL, u.ProjectID, u.ID, u.Email,
		store.NormalizeEmail(u.Email), u.PasswordHash, tagsArg(u.Tags), dbTime(u.CreatedAt))
	return err
}

// GetUser returns the project's user with the given id, or an error matching
// store.ErrNotFound.
func (s *Store) GetUser(ctx context.Context, projectID, id string) (store.User, error) {
	const op = "get user"
	return getOne(ctx, s, op, getUserSQL, []any{projectID, id}, scanUser)
}

// GetUserByEmail returns the project's user whose email equals email
// case-insensitively, or an error matching store.ErrNotFound. An email that
// store.NormalizeEmail makes empty is store.ErrInvalid.
func (s *Store) GetUserByEmail(ctx context.Context, projectID, email string) (store.User, error) {
	const op = "get user by email"
	norm := store.NormalizeEmail(email)
	return getOne(ctx, s, op, getUserByEmailSQL, []any{projectID, norm}, scanUser)
}

// ListUsers returns at most req.Limit users of the project whose normalized
// email starts with store.NormalizeEmail(emailPrefix) (every user when it is
// empty) and that sort strictly after req.After, in ascending (CreatedAt, ID)
// order with ids compared byte by byte, and whether more such users follow.
// An unknown project lists as empty.
//
// The prefix is matched literally ('%' and '_' are plain characters) as the
// byte range [prefix, store.PrefixEnd(prefix)) of email_normalized, which is
// COLLATE "C": an index range on users_email_unique. Without a prefix the
// query is a keyset scan of users_list.
func (s *Store) ListUsers(ctx context.Context, projectID, emailPrefix string, req paginate.Request) (paginate.Page[store.User], error) {
	const op = "list users"
	limit, fetch := pageSize(req)
	sql, args := listUsersSQL(projectID, store.NormalizeEmail(emailPrefix), req.After, fetch)
	return listPage(ctx, s, op, limit, sql, args, func(rows pgx.Rows) (store.User, error) {
		return scanUser(rows)
	})
}

// listUsersSQL returns ListUsers' query and its arguments: the users of the
// project, within the prefix's range when prefix is not empty, after the
// cursor when it is set, at most fetch of them.
func listUsersSQL(projectID, prefix string, after paginate.Cursor, fetch int) (string, []any) {
	sql, args := listUsersBaseSQL, []any{projectID}
	ph := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if prefix != "" {
		sql += fmt.Sprintf(listUsersFromSQL, ph(prefix))
		if end, ok := store.PrefixEnd(prefix); ok {
			sql += fmt.Sprintf(listUsersBelowSQL, ph(end))
		}
	}
	if !after.IsZero() {
		sql += fmt.Sprintf(listUsersAfterSQL, ph(dbTime(after.CreatedAt)), ph(after.ID))
	}
	sql += fmt.Sprintf(listUsersOrderSQL, ph(fetch))
	return sql, args
}

// SetPasswordHash replaces the user's password hash, or returns an error
// matching store.ErrNotFound; an empty hash is store.ErrInvalid.
func (s *Store) SetPasswordHash(ctx context.Context, projectID, id, hash string) error {
	const op = "set password hash"
	return s.execOne(ctx, op, setPasswordSQL, projectID, id, hash)
}

// ReplacePasswordHash implements [store.UserStore.ReplacePasswordHash]:
// one UPDATE conditional on the hash (the row's lock orders it with any
// other write of the user); when it changes no row, a read tells an
// unknown user from a changed hash.
func (s *Store) ReplacePasswordHash(ctx context.Context, projectID, id, old, hash string) error {
	const op = "replace password hash"
	n, err := s.execCount(ctx, op, replacePasswordSQL, projectID, id, old, hash)
	if err != nil || n > 0 {
		return err
	}
	if _, err := s.GetUser(ctx, projectID, id); err != nil {
		return err
	}
	return fmt.Errorf("postgres: %s: the hash changed: %w", op, store.ErrConflict)
}

// SetUserTags replaces the user's tags, or returns an error matching
// store.ErrNotFound; store.CheckTags refusing tags is store.ErrInvalid.
func (s *Store) SetUserTags(ctx context.Context, projectID, id string, tags []string) error {
	const op = "set user tags"
	return s.execOne(ctx, op, setTagsSQL, projectID, id, tagsArg(tags))
}

// DisableUser disables the user at at in one transaction: it locks the user
// row (FOR UPDATE), sets DisabledAt, revokes every unrevoked family of the
// user at at, and adds one revocation of kind store.RevokedUser to the
// project's feed. A CreateRefreshFamily for the user either committed
// before the lock was granted (and its family is revoked here) or waits for
// this transaction and then finds the user disabled. A RotateRefresh either
// committed before the revoking UPDATE reached its family row (and is
// revoked here) or waits for that row and then finds it revoked. Disabling
// a disabled user changes nothing. It returns an error matching
// store.ErrNotFound for an unknown user and store.ErrInvalid for a zero at.
func (s *Store) DisableUser(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "disable user"
	at = dbTime(at)
	return s.inTx(ctx, op, func(tx pgx.Tx) error {
		var disabled pgtype.Timestamptz
		if err := tx.QueryRow(ctx, lockUserSQL, projectID, id).Scan(&disabled); err != nil {
			return err
		}
		if disabled.Valid {
			return nil
		}
		if _, err := tx.Exec(ctx, disableUserSQL, projectID, id, at); err != nil {
			return err
		}
		if _, err := endUserSessions(ctx, tx, projectID, id, at); err != nil {
			return err
		}
		return addRevocation(ctx, tx, projectID, store.RevokedUser, id, at)
	})
}

// EndUserSessions ends every session of the user at at in one
// transaction: it locks the user row (FOR UPDATE, as DisableUser does),
// revokes every unrevoked family of the user at at, deletes the user's
// console sessions and adds one revocation of kind store.RevokedSession to
// the project's feed for each family it revoked. The user stays as it is.
// It returns an error matching store.ErrNotFound for an unknown user and
// store.ErrInvalid for a zero at.
func (s *Store) EndUserSessions(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "end user sessions"
	at = dbTime(at)
	return s.inTx(ctx, op, func(tx pgx.Tx) error {
		var disabled pgtype.Timestamptz
		if err := tx.QueryRow(ctx, lockUserSQL, projectID, id).Scan(&disabled); err != nil {
			return err
		}
		ended, err := endUserSessions(ctx, tx, projectID, id, at)
		if err != nil {
			return err
		}
		for _, fam := range ended {
			if err := addRevocation(ctx, tx, projectID, store.RevokedSession, fam, at); err != nil {
				return err
			}
		}
		return nil
	})
}

// endUserSessions revokes, in tx, every unrevoked session of the project's
// user at at and deletes the user's console sessions. It returns the ids
// of the families it revoked.
func endUserSessions(ctx context.Context, tx pgx.Tx, projectID, id string, at time.Time) ([]string, error) {
	rows, err := tx.Query(ctx, revokeUserFamiliesSQL, projectID, id, at)
	if err != nil {
		return nil, err
	}
	ended, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, deleteUserConsoleSessionsSQL, projectID, id); err != nil {
		return nil, err
	}
	return ended, nil
}

// EnableUser clears the user's DisabledAt; sessions ended by DisableUser
// stay ended. It returns an error matching store.ErrNotFound for an unknown
// user.
func (s *Store) EnableUser(ctx context.Context, projectID, id string) error {
	const op = "enable user"
	return s.execOne(ctx, op, enableUserSQL, projectID, id)
}

// tagsArg returns tags as stored: never NULL.
func tagsArg(tags []string) []string {
	if tags == nil {
		return []string{}
	}
	return tags
}

// scanUser scans a row of userColumns.
func scanUser(row rowScanner) (store.User, error) {
	var r userRow
	if err := row.Scan(r.dest()...); err != nil {
		return store.User{}, err
	}
	return r.user(), nil
}

// userRow is what a row's userColumns are scanned into.
type userRow struct {
	u        store.User
	disabled pgtype.Timestamptz
}

// dest returns the destinations of userColumns, in order.
func (r *userRow) dest() []any {
	return []any{&r.u.ProjectID, &r.u.ID, &r.u.Email, &r.u.PasswordHash, &r.u.Tags, &r.u.CreatedAt, &r.disabled}
}

// user returns the user scanned.
func (r *userRow) user() store.User {
	u := r.u
	if u.Tags == nil {
		u.Tags = []string{}
	}
	u.CreatedAt = u.CreatedAt.UTC()
	u.DisabledAt = fromNullDBTime(r.disabled)
	return u
}
