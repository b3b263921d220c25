package sqlite

import (
	"context"

	"zombiezen.com/go/sqlite"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	createProjectSQL = `INSERT INTO projects (id, created_at) VALUES (?, ?)`
	getProjectSQL    = `SELECT created_at FROM projects WHERE id = ?`
	listProjectsSQL  = `SELECT id, created_at FROM projects ORDER BY id`
)

// CreateProject creates p. It returns an error matching store.ErrInvalid for
// an id that is not a slug or a zero CreatedAt, and store.ErrConflict when
// the id exists.
func (s *Store) CreateProject(ctx context.Context, p store.Project) error {
	const op = "create project"
	_, err := s.exec(ctx, createProjectSQL, p.ID, dbTime(p.CreatedAt))
	return wrap(op, err)
}

// GetProject returns the project, or an error matching store.ErrNotFound.
func (s *Store) GetProject(ctx context.Context, id string) (store.Project, error) {
	const op = "get project"
	p := store.Project{ID: id}
	err := s.readRow(ctx, getProjectSQL, func(st *sqlite.Stmt) error {
		p.CreatedAt = columnTime(st, 0)
		return nil
	}, id)
	if err != nil {
		return store.Project{}, wrap(op, err)
	}
	return p, nil
}

// ListProjects returns every project ordered by id.
func (s *Store) ListProjects(ctx context.Context) ([]store.Project, error) {
	const op = "list projects"
	ps, err := readAll(ctx, s, listProjectsSQL, func(st *sqlite.Stmt) (store.Project, error) {
		return store.Project{ID: st.ColumnText(0), CreatedAt: columnTime(st, 1)}, nil
	})
	if err != nil {
		return nil, wrap(op, err)
	}
	return ps, nil
}
