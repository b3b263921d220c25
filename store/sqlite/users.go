package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	createUserSQL = `INSERT INTO users (id, project_id, email, email_norm, password_hash, tags, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?)`
	userColumns       = `id, project_id, email, password_hash, tags, created_at`
	getUserSQL        = `SELECT ` + userColumns + ` FROM users WHERE id = ? AND project_id = ?`
	getUserByEmailSQL = `SELECT ` + userColumns + ` FROM users WHERE project_id = ? AND email_norm = ?`
	setPasswordSQL    = `UPDATE users SET password_hash = ? WHERE id = ? AND project_id = ?`
)

// CreateUser creates u. It returns an error matching store.ErrInvalid for an
// empty id or email or an invalid project id, store.ErrNotFound for an
// unknown project and store.ErrConflict when the id exists or another user
// of the project has the same email compared case-insensitively (see
// store.NormalizeEmail).
func (s *Store) CreateUser(ctx context.Context, u store.User) error {
	const op = "create user"
	norm := store.NormalizeEmail(u.Email)
	switch {
	case !store.ValidProjectID(u.ProjectID):
		return invalid(op, "project id is not a slug")
	case u.ID == "":
		return invalid(op, "empty id")
	case norm == "":
		return invalid(op, "empty email")
	}
	tags, err := encodeTags(u.Tags)
	if err != nil {
		return invalid(op, err.Error())
	}
	_, err = s.exec(ctx, createUserSQL, u.ID, u.ProjectID, u.Email, norm, u.PasswordHash, tags, micros(u.CreatedAt))
	return wrap(op, err)
}

// GetUser returns the project's user with the given id, or an error
// matching store.ErrNotFound.
func (s *Store) GetUser(ctx context.Context, projectID, id string) (store.User, error) {
	const op = "get user"
	if err := checkKey(op, projectID, id); err != nil {
		return store.User{}, err
	}
	row, err := s.queryRow(ctx, getUserSQL, id, projectID)
	if err != nil {
		return store.User{}, wrap(op, err)
	}
	u, err := scanUser(row)
	return u, wrap(op, err)
}

// GetUserByEmail returns the project's user whose email equals email
// case-insensitively, or an error matching store.ErrNotFound.
func (s *Store) GetUserByEmail(ctx context.Context, projectID, email string) (store.User, error) {
	const op = "get user by email"
	norm := store.NormalizeEmail(email)
	if !store.ValidProjectID(projectID) {
		return store.User{}, invalid(op, "project id is not a slug")
	}
	if norm == "" {
		return store.User{}, invalid(op, "empty email")
	}
	row, err := s.queryRow(ctx, getUserByEmailSQL, projectID, norm)
	if err != nil {
		return store.User{}, wrap(op, err)
	}
	u, err := scanUser(row)
	return u, wrap(op, err)
}

// SetPasswordHash replaces the user's password hash, or returns an error
// matching store.ErrNotFound.
func (s *Store) SetPasswordHash(ctx context.Context, projectID, id, hash string) error {
	const op = "set password hash"
	if err := checkKey(op, projectID, id); err != nil {
		return err
	}
	if hash == "" {
		return invalid(op, "empty hash")
	}
	res, err := s.exec(ctx, setPasswordSQL, hash, id, projectID)
	return wrap(op, mustAffect(res, err))
}

func scanUser(row *sql.Row) (store.User, error) {
	var u store.User
	var tags string
	var created int64
	if err := row.Scan(&u.ID, &u.ProjectID, &u.Email, &u.PasswordHash, &tags, &created); err != nil {
		return store.User{}, err
	}
	u.CreatedAt = fromMicros(created)
	var err error
	u.Tags, err = decodeTags(tags)
	return u, err
}

// encodeTags returns tags as stored: a JSON array of strings, "[]" for none.
func encodeTags(tags []string) (string, error) {
	if len(tags) == 0 {
		return "[]", nil
	}
	for _, t := range tags {
		// JSON would silently replace invalid UTF-8, and the tag would not
		// round-trip.
		if !utf8.ValidString(t) {
			return "", errors.New("tag is not valid UTF-8")
		}
	}
	b, err := json.Marshal(tags)
	if err != nil {
		return "", fmt.Errorf("tags: %w", err)
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

// checkKey validates the (project id, row id) pair every lookup takes.
func checkKey(op, projectID, id string) error {
	if !store.ValidProjectID(projectID) {
		return invalid(op, "project id is not a slug")
	}
	if id == "" {
		return invalid(op, "empty id")
	}
	return nil
}

// mustAffect turns an update or delete that matched no row into
// sql.ErrNoRows, which wrap reports as store.ErrNotFound.
func mustAffect(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return sql.ErrNoRows
	}
	return nil
}
