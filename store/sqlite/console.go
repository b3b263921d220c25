package sqlite

import (
	"context"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	createConsoleSessionSQL = `INSERT INTO console_sessions (id, project_id, user_id, created_at, last_seen_at)
VALUES (?, ?, ?, ?, ?)`
	getConsoleSessionSQL = `SELECT user_id, created_at, last_seen_at FROM console_sessions
WHERE id = ? AND project_id = ?`
	// touchConsoleSessionSQL keeps the later of the stored and the given
	// time. It matches the session's row whether or not that changes it,
	// so no row matched means no such session.
	touchConsoleSessionSQL = `UPDATE console_sessions SET last_seen_at = max(last_seen_at, ?)
WHERE id = ? AND project_id = ?`
	deleteConsoleSessionSQL = `DELETE FROM console_sessions WHERE id = ? AND project_id = ?`
	pruneConsoleSessionsSQL = `DELETE FROM console_sessions WHERE last_seen_at < ? OR created_at < ?`
)

// CreateConsoleSession records cs. It returns an error matching
// store.ErrInvalid when store.CheckConsoleSession refuses cs,
// store.ErrNotFound for an unknown project and store.ErrConflict for an
// existing id.
func (s *Store) CreateConsoleSession(ctx context.Context, cs store.ConsoleSession) error {
	const op = "create console session"
	_, err := s.exec(ctx, createConsoleSessionSQL, cs.ID, cs.ProjectID, cs.UserID, dbTime(cs.CreatedAt), dbTime(cs.LastSeenAt))
	return wrap(op, err)
}

// GetConsoleSession returns the project's session with the given id, or an
// error matching store.ErrNotFound.
func (s *Store) GetConsoleSession(ctx context.Context, projectID, id string) (store.ConsoleSession, error) {
	const op = "get console session"
	cs := store.ConsoleSession{ID: id, ProjectID: projectID}
	err := s.readRow(ctx, getConsoleSessionSQL, func(st *sqlite.Stmt) error {
		cs.UserID = st.ColumnText(0)
		cs.CreatedAt = columnTime(st, 1)
		cs.LastSeenAt = columnTime(st, 2)
		return nil
	}, id, projectID)
	if err != nil {
		return store.ConsoleSession{}, wrap(op, err)
	}
	return cs, nil
}

// TouchConsoleSession sets the session's LastSeenAt to at unless it is
// already at or after at, or returns an error matching store.ErrNotFound.
// It returns an error matching store.ErrInvalid for a zero at.
func (s *Store) TouchConsoleSession(ctx context.Context, projectID, id string, at time.Time) error {
	const op = "touch console session"
	return wrap(op, mustAffect(s.exec(ctx, touchConsoleSessionSQL, dbTime(at), id, projectID)))
}

// DeleteConsoleSession ends the session. Deleting an unknown session
// succeeds.
func (s *Store) DeleteConsoleSession(ctx context.Context, projectID, id string) error {
	const op = "delete console session"
	_, err := s.exec(ctx, deleteConsoleSessionSQL, id, projectID)
	return wrap(op, err)
}

// PruneConsoleSessions deletes every session, of every project, last seen
// before idleBefore or created before createdBefore, and returns how many it
// deleted.
func (s *Store) PruneConsoleSessions(ctx context.Context, idleBefore, createdBefore time.Time) (int, error) {
	const op = "prune console sessions"
	return s.prune(ctx, op, pruneConsoleSessionsSQL, dbTime(idleBefore), dbTime(createdBefore))
}
