package mysql

import (
	"context"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	createProjectSQL = `INSERT INTO projects (id, created_at) VALUES (?, ?)`
	getProjectSQL    = `SELECT id, created_at FROM projects WHERE id = ?`
	listProjectsSQL  = `SELECT id, created_at FROM projects ORDER BY id`
	projectExistsSQL = `SELECT EXISTS (SELECT 1 FROM projects WHERE id = ?)`
)

// CreateProject creates p. It returns an error matching store.ErrInvalid for
// an id that is not a slug and store.ErrConflict when the id exists.
func (s *Store) CreateProject(ctx context.Context, p store.Project) error {
	const op = "create project"
	_, err := s.execCount(ctx, op, createProjectSQL, p.ID, dbTime(p.CreatedAt))
	return err
}

// GetProject returns the project, or an error matching store.ErrNotFound.
func (s *Store) GetProject(ctx context.Context, id string) (store.Project, error) {
	const op = "get project"
	return getOne(ctx, s, op, getProjectSQL, []any{id}, scanProject)
}

// ListProjects returns every project ordered by id, byte by byte.
func (s *Store) ListProjects(ctx context.Context) ([]store.Project, error) {
	return listAll(ctx, s, "list projects", listProjectsSQL, nil, scanProject)
}

func scanProject(row rowScanner) (store.Project, error) {
	var p store.Project
	err := row.Scan(&p.ID, &p.CreatedAt)
	p.CreatedAt = p.CreatedAt.UTC()
	return p, err
}
