package postgres

import (
	"context"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	consoleSessionColumns   = `project_id, id, user_id, created_at, last_seen_at`
	createConsoleSessionSQL = `INSERT INTO console_sessions (` + consoleSessionColumns + `)
	VALUES ($1, $2, $3, $4, $5)`
	getConsoleSessionSQL = `SELECT ` + consoleSessionColumns + ` FROM console_sessions
	WHERE project_id = $1 AND id = $2`
	// touchConsoleSessionSQL writes only when it moves LastSeenAt forward.
	touchConsoleSessionSQL = `UPDATE console_sessions SET last_seen_at = $3
	WHERE project_id = $1 AND id = $2 AND last_seen_at < $3`
	consoleSessionExistsSQL = `SELECT EXISTS (SELECT 1 FROM console_sessions WHERE project_id = $1 AND id = $2)`
	deleteConsoleSessionSQL = `DELETE FROM console_sessions WHERE project_id = $1 AND id = $2`
	// pruneConsoleSessionsSQL runs on console_sessions_last_seen_at and
	// console_sessions_created_at.
	pruneConsoleSessionsSQL = `DELETE FROM console_sessions WHERE last_seen_at < $1 OR created_at < $2`
)

// CreateConsoleSession records cs. It returns an error matching
// store.ErrInvalid when store.CheckConsoleSession refuses cs,
// store.ErrNotFound for an unknown project and store.ErrConflict for an
// existing id.
func (s *Store) CreateConsoleSession(ctx context.Context, cs store.ConsoleSession) error {
	const op = "create console session"
	_, err := s.execCount(ctx, op, createConsoleSessionSQL, cs.ProjectID, cs.ID, cs.UserID,
		dbTime(cs.CreatedAt), dbTime(cs.LastSeenAt))
	return err
}

// GetConsoleSession returns the project's session with the given id, or an
// error matching store.ErrNotFound.
func (s *Store) GetConsoleSession(ctx context.Context, projectID, id string) (store.ConsoleSession, error) {
	const op = "get console session"
	return getOne(ctx, s, op, getConsoleSessionSQL, []any{projectID, id}, scanConsoleSession)
}

// TouchConsoleSession sets the session's LastSeenAt to at unless it is
// already at or after at, or returns an error matching store.ErrNotFound.
func (s *Store) TouchConsoleSession(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "touch console session"
	n, err := s.execCount(ctx, op, touchConsoleSessionSQL, projectID, id, dbTime(at))
	if err != nil || n > 0 {
		return err
	}
	return s.read(ctx, op, func(q querier) error {
		return existsOrNotFound(ctx, q, op, consoleSessionExistsSQL, projectID, id)
	})
}

// DeleteConsoleSession ends the session. Deleting an unknown session
// succeeds.
func (s *Store) DeleteConsoleSession(ctx context.Context, projectID, id string) error {
	const op = "delete console session"
	_, err := s.execCount(ctx, op, deleteConsoleSessionSQL, projectID, id)
	return err
}

// PruneConsoleSessions deletes every session, of every project, last seen
// before idleBefore or created before createdBefore, in one statement, and
// returns how many it deleted.
func (s *Store) PruneConsoleSessions(ctx context.Context, idleBefore, createdBefore time.Time) (int, error) {
	const op = "prune console sessions"
	return s.execCount(ctx, op, pruneConsoleSessionsSQL, dbTime(idleBefore), dbTime(createdBefore))
}

func scanConsoleSession(row rowScanner) (store.ConsoleSession, error) {
	var cs store.ConsoleSession
	err := row.Scan(&cs.ProjectID, &cs.ID, &cs.UserID, &cs.CreatedAt, &cs.LastSeenAt)
	cs.CreatedAt = cs.CreatedAt.UTC()
	cs.LastSeenAt = cs.LastSeenAt.UTC()
	return cs, err
}
