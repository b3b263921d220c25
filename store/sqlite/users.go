package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

const (
	createUserSQL = `INSERT INTO users (id, project_id, email, email_norm, password_hash, tags, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?)`
	userColumns        = `id, project_id, email, password_hash, tags, created_at, disabled_at`
	getUserSQL         = `SELECT ` + userColumns + ` FROM users WHERE id = ? AND project_id = ?`
	getUserByEmailSQL  = `SELECT ` + userColumns + ` FROM users WHERE project_id = ? AND email_norm = ?`
	setPasswordSQL     = `UPDATE users SET password_hash = ? WHERE id = ? AND project_id = ?`
	replacePasswordSQL = `UPDATE users SET password_hash = ? WHERE id = ? AND project_id = ? AND password_hash = ?`
	setTagsSQL         = `UPDATE users SET tags = ? WHERE id = ? AND project_id = ?`
	// userDisabledSQL reads whether the user is disabled; no row means no
	// such user in the project.
	userDisabledSQL = `SELECT disabled_at FROM users WHERE id = ? AND project_id = ?`
	disableUserSQL  = `UPDATE users SET disabled_at = ? WHERE id = ? AND project_id = ? AND disabled_at IS NULL`
	enableUserSQL   = `UPDATE users SET disabled_at = NULL WHERE id = ? AND project_id = ?`
	// revokeUserFamiliesSQL ends every live session of a user.
	revokeUserFamiliesSQL = `UPDATE refresh_families SET revoked_at = ?
WHERE user_id = ? AND project_id = ? AND revoked_at IS NULL RETURNING id`
	deleteUserConsoleSessionsSQL = `DELETE FROM console_sessions WHERE user_id = ? AND project_id = ?`

	// The ListUsers query is listUsersSQL, then the conditions that apply
	// (a cursor, an email prefix), then listUsersOrderSQL. It reads the
	// (project_id, created_at, id) index from the cursor on. An email
	// prefix is the range email_norm >= prefix AND email_norm < the
	// prefix's successor (see store.PrefixEnd), compared byte by byte, so that
	// every character of the prefix, % and _ included, matches itself.
	listUsersSQL       = `SELECT ` + userColumns + ` FROM users WHERE project_id = ?`
	listUsersAfterSQL  = ` AND (created_at, id) > (?, ?)`
	listUsersFromSQL   = ` AND email_norm >= ?`
	listUsersBeforeSQL = ` AND email_norm < ?`
	listUsersOrderSQL  = ` ORDER BY created_at, id LIMIT ?`
)

// CreateUser creates u. It returns an error matching store.ErrInvalid when
// store.CheckUser refuses u, store.ErrNotFound for an unknown project and
// store.ErrConflict when the id exists or another user of the project has
// the same email compared case-insensitively (see store.NormalizeEmail).
func (s *Store) CreateUser(ctx context.Context, u store.User) error {
	const op = "create user"
	tags, err := encodeTags(u.Tags)
	if err != nil {
		return check(op, err)
	}
	_, err = s.exec(ctx, createUserSQL, u.ID, u.ProjectID, u.Email, store.NormalizeEmail(u.Email),
		u.PasswordHash, tags, dbTime(u.CreatedAt))
	return wrap(op, err)
}

// GetUser returns the project's user with the given id, or an error
// matching store.ErrNotFound.
func (s *Store) GetUser(ctx context.Context, projectID, id string) (store.User, error) {
	const op = "get user"
	var u store.User
	err := s.readRow(ctx, getUserSQL, func(st *sqlite.Stmt) (err error) {
		u, err = scanUser(st)
		return err
	}, id, projectID)
	if err != nil {
		return store.User{}, wrap(op, err)
	}
	return u, nil
}

// GetUserByEmail returns the project's user whose email equals email
// case-insensitively, or an error matching store.ErrNotFound. An email
// that store.NormalizeEmail makes empty is store.ErrInvalid.
func (s *Store) GetUserByEmail(ctx context.Context, projectID, email string) (store.User, error) {
	const op = "get user by email"
	norm := store.NormalizeEmail(email)
	var u store.User
	err := s.readRow(ctx, getUserByEmailSQL, func(st *sqlite.Stmt) (err error) {
		u, err = scanUser(st)
		return err
	}, projectID, norm)
	if err != nil {
		return store.User{}, wrap(op, err)
	}
	return u, nil
}

// ListUsers returns at most req.Limit users of the project whose normalized
// email starts with store.NormalizeEmail(emailPrefix), every character
// matching itself (every user for an empty prefix), that sort strictly
// after req.After, in ascending (CreatedAt, ID) order, and whether more
// follow. An unknown project lists as empty.
func (s *Store) ListUsers(ctx context.Context, projectID, emailPrefix string, req paginate.Request) (paginate.Page[store.User], error) {
	const op = "list users"
	query, args := listUsersSQL, []any{projectID}
	if !req.After.IsZero() {
		query += listUsersAfterSQL
		args = append(args, dbTime(req.After.CreatedAt), req.After.ID)
	}
	if p := store.NormalizeEmail(emailPrefix); p != "" {
		query += listUsersFromSQL
		args = append(args, p)
		if end, ok := store.PrefixEnd(p); ok {
			query += listUsersBeforeSQL
			args = append(args, end)
		}
	}
	query += listUsersOrderSQL
	args = append(args, req.Limit+1)
	users, err := readAll(ctx, s, query, scanUser, args...)
	if err != nil {
		return paginate.Page[store.User]{}, wrap(op, err)
	}
	return paginate.PageOf(users, req.Limit), nil
}

// SetPasswordHash replaces the user's password hash, or returns an error
// matching store.ErrNotFound; an empty hash is store.ErrInvalid.
func (s *Store) SetPasswordHash(ctx context.Context, projectID, id, hash string) error {
	const op = "set password hash"
	return wrap(op, mustAffect(s.exec(ctx, setPasswordSQL, hash, id, projectID)))
}

// ReplacePasswordHash implements [store.UserStore.ReplacePasswordHash]:
// one UPDATE conditional on the hash (writes are serialized by the
// database's write lock); when it changes no row, a read tells an unknown
// user from a changed hash.
func (s *Store) ReplacePasswordHash(ctx context.Context, projectID, id, old, hash string) error {
	const op = "replace password hash"
	n, err := s.exec(ctx, replacePasswordSQL, hash, id, projectID, old)
	if err != nil || n > 0 {
		return wrap(op, err)
	}
	if _, err := s.GetUser(ctx, projectID, id); err != nil {
		return err
	}
	return conflict(op, "the hash changed")
}

// SetUserTags replaces the user's tags, or returns an error matching
// store.ErrNotFound. It returns an error matching store.ErrInvalid when
// store.CheckTags refuses tags.
func (s *Store) SetUserTags(ctx context.Context, projectID, id string, tags []string) error {
	const op = "set user tags"
	enc, err := encodeTags(tags)
	if err != nil {
		return check(op, err)
	}
	return wrap(op, mustAffect(s.exec(ctx, setTagsSQL, enc, id, projectID)))
}

// DisableUser disables the user at at in one write transaction: DisabledAt
// becomes at, every session of the user that is not revoked is revoked at
// at, and one revocation of kind store.RevokedUser is added to the
// project's feed. Disabling a disabled user succeeds and changes nothing.
// It returns an error matching store.ErrNotFound for an unknown user and
// store.ErrInvalid for a zero at. CreateRefreshFamily and RotateRefresh
// read the user's state in their own write transactions, which SQLite runs
// one at a time, so none of them leaves a live session behind.
func (s *Store) DisableUser(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "disable user"
	us := dbTime(at)
	err := s.writeTx(ctx, func(t *wtx) error {
		disabled, err := t.userDisabled(id, projectID)
		if err != nil || disabled {
			return err
		}
		if _, err := t.exec(disableUserSQL, us, id, projectID); err != nil {
			return err
		}
		if _, err := t.endUserSessions(projectID, id, us); err != nil {
			return err
		}
		return t.addRevocation(projectID, store.RevokedUser, id, us)
	})
	return wrap(op, err)
}

// EnableUser clears the user's DisabledAt; sessions ended by DisableUser
// stay ended. Enabling an enabled user succeeds. It returns an error
// matching store.ErrNotFound for an unknown user.
func (s *Store) EnableUser(ctx context.Context, projectID, id string) error {
	const op = "enable user"
	return wrap(op, mustAffect(s.exec(ctx, enableUserSQL, id, projectID)))
}

// EndUserSessions ends every session of the user at at in one write
// transaction: every session of the user that is not revoked is revoked at
// at, the user's console sessions are deleted, and one revocation of kind
// store.RevokedSession is added to the project's feed for each session it
// revoked. The user stays as it is. It returns an error matching
// store.ErrNotFound for an unknown user and store.ErrInvalid for a zero at.
func (s *Store) EndUserSessions(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "end user sessions"
	us := dbTime(at)
	err := s.writeTx(ctx, func(t *wtx) error {
		if _, err := t.userDisabled(id, projectID); err != nil {
			return err
		}
		ended, err := t.endUserSessions(projectID, id, us)
		if err != nil {
			return err
		}
		for _, fam := range ended {
			if err := t.addRevocation(projectID, store.RevokedSession, fam, us); err != nil {
				return err
			}
		}
		return nil
	})
	return wrap(op, err)
}

// endUserSessions revokes, in the transaction, every unrevoked session of
// the project's user at us and deletes the user's console sessions. It
// returns the ids of the sessions it revoked.
func (t *wtx) endUserSessions(projectID, id string, us int64) ([]string, error) {
	var ended []string
	err := queryRows(t.conn, revokeUserFamiliesSQL, func(st *sqlite.Stmt) error {
		ended = append(ended, st.ColumnText(0))
		return nil
	}, us, id, projectID)
	if err != nil {
		return nil, err
	}
	if _, err := t.exec(deleteUserConsoleSessionsSQL, id, projectID); err != nil {
		return nil, err
	}
	return ended, nil
}

// userDisabled reads in the transaction whether the project's user is
// disabled, or returns errNoRows when there is no such user.
func (t *wtx) userDisabled(id, projectID string) (bool, error) {
	return t.isSet(userDisabledSQL, id, projectID)
}

// scanUser returns the user of a row of userColumns.
func scanUser(st *sqlite.Stmt) (store.User, error) { return scanUserAt(st, 0) }

// scanUserAt returns the user of a row whose userColumns start at column
// first.
func scanUserAt(st *sqlite.Stmt, first int) (store.User, error) {
	tags, err := decodeTags(st.ColumnText(first + 4))
	if err != nil {
		return store.User{}, err
	}
	return store.User{
		ID:           st.ColumnText(first),
		ProjectID:    st.ColumnText(first + 1),
		Email:        st.ColumnText(first + 2),
		PasswordHash: st.ColumnText(first + 3),
		Tags:         tags,
		CreatedAt:    columnTime(st, first+5),
		DisabledAt:   columnNullTime(st, first+6),
	}, nil
}

// encodeTags returns tags as stored: a JSON array of strings, "[]" for none.
// store.CheckTags has accepted them, so they are valid UTF-8 and round-trip.
func encodeTags(tags []string) (string, error) {
	if len(tags) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(tags)
	if err != nil {
		return "", fmt.Errorf("tags: %w: %w", store.ErrInvalid, err)
	}
	return string(b), nil
}

// decodeTags returns stored tags as a non-nil slice, in their order.
func decodeTags(s string) ([]string, error) {
	tags := []string{}
	if err := json.Unmarshal([]byte(s), &tags); err != nil {
		return nil, fmt.Errorf("decode tags: %w", err)
	}
	if tags == nil {
		tags = []string{}
	}
	return tags, nil
}
