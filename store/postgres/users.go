package postgres

import (
	"context"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	userColumns   = `project_id, id, email, password_hash, tags, created_at`
	createUserSQL = `INSERT INTO users
	(project_id, id, email, email_normalized, password_hash, tags, created_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7)`
	getUserSQL        = `SELECT ` + userColumns + ` FROM users WHERE project_id = $1 AND id = $2`
	getUserByEmailSQL = `SELECT ` + userColumns + ` FROM users WHERE project_id = $1 AND email_normalized = $2`
	setPasswordSQL    = `UPDATE users SET password_hash = $3 WHERE project_id = $1 AND id = $2`
)

// CreateUser creates u. It returns an error matching store.ErrInvalid for an
// empty id or email, store.ErrNotFound for an unknown project, and
// store.ErrConflict when the id exists in the project or another user of the
// project has the same email compared case-insensitively (a UNIQUE
// constraint on the store.NormalizeEmail form).
func (s *Store) CreateUser(ctx context.Context, u store.User) error {
	const op = "create user"
	if err := checkProject(op, u.ProjectID); err != nil {
		return err
	}
	if err := checkID(op, "id", u.ID); err != nil {
		return err
	}
	norm := store.NormalizeEmail(u.Email)
	if norm == "" {
		return invalid(op, "empty email")
	}
	tags := u.Tags
	if tags == nil {
		tags = []string{}
	}
	_, err := s.pool.Exec(ctx, createUserSQL,
		u.ProjectID, u.ID, u.Email, norm, u.PasswordHash, tags, ts(u.CreatedAt))
	return translate(op, err)
}

// GetUser returns the project's user with the given id, or an error matching
// store.ErrNotFound.
func (s *Store) GetUser(ctx context.Context, projectID, id string) (store.User, error) {
	const op = "get user"
	if err := checkProject(op, projectID); err != nil {
		return store.User{}, err
	}
	if err := checkID(op, "id", id); err != nil {
		return store.User{}, err
	}
	return s.scanUser(op, s.pool.QueryRow(ctx, getUserSQL, projectID, id))
}

// GetUserByEmail returns the project's user whose email equals email
// case-insensitively, or an error matching store.ErrNotFound.
func (s *Store) GetUserByEmail(ctx context.Context, projectID, email string) (store.User, error) {
	const op = "get user by email"
	if err := checkProject(op, projectID); err != nil {
		return store.User{}, err
	}
	norm := store.NormalizeEmail(email)
	if norm == "" {
		return store.User{}, invalid(op, "empty email")
	}
	return s.scanUser(op, s.pool.QueryRow(ctx, getUserByEmailSQL, projectID, norm))
}

// SetPasswordHash replaces the user's password hash, or returns an error
// matching store.ErrNotFound.
func (s *Store) SetPasswordHash(ctx context.Context, projectID, id, hash string) error {
	const op = "set password hash"
	if err := checkProject(op, projectID); err != nil {
		return err
	}
	if err := checkID(op, "id", id); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, setPasswordSQL, projectID, id, hash)
	if err != nil {
		return translate(op, err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(op)
	}
	return nil
}

type rowScanner interface {
	Scan(dest ...any) error
}

func (s *Store) scanUser(op string, row rowScanner) (store.User, error) {
	var u store.User
	if err := row.Scan(&u.ProjectID, &u.ID, &u.Email, &u.PasswordHash, &u.Tags, &u.CreatedAt); err != nil {
		return store.User{}, translate(op, err)
	}
	if u.Tags == nil {
		u.Tags = []string{}
	}
	u.CreatedAt = u.CreatedAt.UTC()
	return u, nil
}
