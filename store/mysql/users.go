package mysql

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

const (
	userColumns   = `project_id, id, email, password_hash, tags, created_at, disabled_at`
	createUserSQL = `INSERT INTO users
	(project_id, id, email, email_normalized, password_hash, tags, created_at)
	VALUES (?, ?, ?, ?, ?, ?, ?)`
	getUserSQL         = `SELECT ` + userColumns + ` FROM users WHERE project_id = ? AND id = ?`
	getUserByEmailSQL  = `SELECT ` + userColumns + ` FROM users WHERE project_id = ? AND email_normalized = ?`
	setPasswordSQL     = `UPDATE users SET password_hash = ? WHERE project_id = ? AND id = ?`
	replacePasswordSQL = `UPDATE users SET password_hash = ? WHERE project_id = ? AND id = ? AND password_hash = ?`
	setTagsSQL         = `UPDATE users SET tags = ? WHERE project_id = ? AND id = ?`

	// lockUserSQL takes the user row's exclusive lock: it waits for, and
	// then excludes, the shared lock CreateRefreshFamily holds on the user
	// until it commits, so that no family is added to a user being
	// disabled.
	lockUserSQL    = `SELECT disabled_at FROM users WHERE project_id = ? AND id = ? FOR UPDATE`
	disableUserSQL = `UPDATE users SET disabled_at = ? WHERE project_id = ? AND id = ?`
	// liveUserFamiliesSQL reads, and locks, the user's unrevoked
	// families, which revokeUserFamiliesSQL then revokes: MariaDB's UPDATE
	// has no RETURNING.
	liveUserFamiliesSQL = `SELECT id FROM refresh_families
	WHERE project_id = ? AND user_id = ? AND revoked_at IS NULL FOR UPDATE`
	revokeUserFamiliesSQL = `UPDATE refresh_families SET revoked_at = ?
	WHERE project_id = ? AND user_id = ? AND revoked_at IS NULL`
	deleteUserConsoleSessionsSQL = `DELETE FROM console_sessions WHERE project_id = ? AND user_id = ?`
	enableUserSQL                = `UPDATE users SET disabled_at = NULL WHERE project_id = ? AND id = ?`
)

// CreateUser creates u. It returns an error matching store.ErrInvalid when
// store.CheckUser refuses u, store.ErrNotFound for an unknown project, and
// store.ErrConflict when the id exists in the project or another user of the
// project has the same email compared case-insensitively (a UNIQUE key on
// the store.NormalizeEmail form).
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
	return getOne(ctx, s, op, getUserByEmailSQL, []any{projectID, []byte(norm)}, scanUser)
}

// ListUsers returns at most req.Limit users of the project whose normalized
// email starts with store.NormalizeEmail(emailPrefix) (every user when it is
// empty) and that sort strictly after req.After, in ascending (CreatedAt, ID)
// order with ids compared byte by byte, and whether more such users follow.
// An unknown project lists as empty.
//
// The prefix is matched literally as the byte range [prefix,
// store.PrefixEnd(prefix)) of email_normalized, a VARBINARY column: an index
// range on users_email_unique. Without a prefix the query is a keyset scan
// of users_list.
func (s *Store) ListUsers(ctx context.Context, projectID, emailPrefix string, req paginate.Request) (paginate.Page[store.User], error) {
	const op = "list users"
	prefix := store.NormalizeEmail(emailPrefix)
	if strings.ContainsRune(prefix, 0) {
		return paginate.Page[store.User]{}, invalid(op, "email prefix holds a NUL byte")
	}
	limit, fetch := pageSize(req)
	query, args := listUsersSQL(projectID, prefix, req.After, fetch)
	return listPage(ctx, s, op, limit, query, args, scanUser)
}

// listUsersSQL returns ListUsers' query and its arguments.
func listUsersSQL(projectID, prefix string, after paginate.Cursor, fetch int) (string, []any) {
	query, args := `SELECT `+userColumns+` FROM users WHERE project_id = ?`, []any{projectID}
	if prefix != "" {
		query += ` AND email_normalized >= ?`
		args = append(args, []byte(prefix))
		if end, ok := store.PrefixEnd(prefix); ok {
			query += ` AND email_normalized < ?`
			args = append(args, []byte(end))
		}
	}
	if !after.IsZero() {
		t := dbTime(after.CreatedAt)
		query += ` AND (created_at > ? OR (created_at = ? AND id > ?))`
		args = append(args, t, t, after.ID)
	}
	query += fmt.Sprintf(` ORDER BY created_at, id LIMIT %d`, fetch)
	return query, args
}

// SetPasswordHash replaces the user's password hash, or returns an error
// matching store.ErrNotFound; an empty hash is store.ErrInvalid.
func (s *Store) SetPasswordHash(ctx context.Context, projectID, id, hash string) error {
	const op = "set password hash"
	return s.execOne(ctx, op, setPasswordSQL, hash, projectID, id)
}

// ReplacePasswordHash implements [store.UserStore.ReplacePasswordHash]:
// one UPDATE conditional on the hash (InnoDB's row lock orders it with any
// other write of the user, and it compares the newest committed hash);
// when it matches no row, a read tells an unknown user from a changed
// hash.
func (s *Store) ReplacePasswordHash(ctx context.Context, projectID, id, old, hash string) error {
	const op = "replace password hash"
	n, err := s.execCount(ctx, op, replacePasswordSQL, hash, projectID, id, old)
	if err != nil || n > 0 {
		return err
	}
	if _, err := s.GetUser(ctx, projectID, id); err != nil {
		return err
	}
	return fmt.Errorf("mysql: %s: the hash changed: %w", op, store.ErrConflict)
}

// SetUserTags replaces the user's tags, or returns an error matching
// store.ErrNotFound; store.CheckTags refusing tags is store.ErrInvalid.
func (s *Store) SetUserTags(ctx context.Context, projectID, id string, tags []string) error {
	const op = "set user tags"
	return s.execOne(ctx, op, setTagsSQL, tagsArg(tags), projectID, id)
}

// DisableUser disables the user at at in one transaction: it locks the user
// row (FOR UPDATE), sets DisabledAt, revokes every unrevoked family of the
// user at at, deletes the user's console sessions, and adds one revocation
// of kind store.RevokedUser to the project's feed. A CreateRefreshFamily for
// the user either committed before the lock was granted (and its family is
// revoked here) or waits for this transaction and then finds the user
// disabled. A RotateRefresh either committed before the revoking UPDATE
// reached its family row (and is revoked here) or waits for that row and
// then finds it revoked. Disabling a disabled user changes nothing.
func (s *Store) DisableUser(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "disable user"
	at = dbTime(at)
	return s.inTx(ctx, op, func(tx *sql.Tx) error {
		var disabled sql.NullTime
		if err := tx.QueryRowContext(ctx, lockUserSQL, projectID, id).Scan(&disabled); err != nil {
			return err
		}
		if disabled.Valid {
			return nil
		}
		if _, err := tx.ExecContext(ctx, disableUserSQL, at, projectID, id); err != nil {
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
	return s.inTx(ctx, op, func(tx *sql.Tx) error {
		var disabled sql.NullTime
		if err := tx.QueryRowContext(ctx, lockUserSQL, projectID, id).Scan(&disabled); err != nil {
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
// of the families it revoked. The caller holds the user row's lock, so no
// family of the user is added meanwhile, and the families read are locked
// until tx ends, so none is revoked by another transaction in between.
func endUserSessions(ctx context.Context, tx *sql.Tx, projectID, id string, at time.Time) ([]string, error) {
	rows, err := tx.QueryContext(ctx, liveUserFamiliesSQL, projectID, id)
	if err != nil {
		return nil, err
	}
	var ended []string
	for rows.Next() {
		var fam string
		if err := rows.Scan(&fam); err != nil {
			rows.Close()
			return nil, err
		}
		ended = append(ended, fam)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, revokeUserFamiliesSQL, at, projectID, id); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, deleteUserConsoleSessionsSQL, projectID, id); err != nil {
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

// tagsArg returns tags as stored: a JSON array, never null.
func tagsArg(tags []string) string {
	if tags == nil {
		tags = []string{}
	}
	b, _ := json.Marshal(tags) // a []string always marshals
	return string(b)
}

// scanUser scans a row of userColumns.
func scanUser(row rowScanner) (store.User, error) {
	var r userRow
	if err := row.Scan(r.dest()...); err != nil {
		return store.User{}, err
	}
	return r.user()
}

// userRow is what a row's userColumns are scanned into.
type userRow struct {
	u        store.User
	tags     string
	disabled sql.NullTime
}

// dest returns the destinations of userColumns, in order.
func (r *userRow) dest() []any {
	return []any{&r.u.ProjectID, &r.u.ID, &r.u.Email, &r.u.PasswordHash, &r.tags, &r.u.CreatedAt, &r.disabled}
}

// user returns the user scanned.
func (r *userRow) user() (store.User, error) {
	u := r.u
	if err := json.Unmarshal([]byte(r.tags), &u.Tags); err != nil {
		return store.User{}, fmt.Errorf("user tags: %w", err)
	}
	if u.Tags == nil {
		u.Tags = []string{}
	}
	u.CreatedAt = u.CreatedAt.UTC()
	u.DisabledAt = fromNull(r.disabled)
	return u, nil
}
