package sqlite

import (
	"context"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	createProjectSQL = `INSERT INTO projects (id, created_at) VALUES (?, ?)`
	getProjectSQL    = `SELECT created_at FROM projects WHERE id = ?`
	listProjectsSQL  = `SELECT id, created_at FROM projects ORDER BY id`
)

// CreateProject creates p. It returns an error matching store.ErrInvalid for
// an id that is not a slug and store.ErrConflict when the id exists.
func (s *Store) CreateProject(ctx context.Context, p store.Project) error {
	const op = "create project"
	if !store.ValidProjectID(p.ID) {
		return invalid(op, "project id is not a slug")
	}
	_, err := s.exec(ctx, createProjectSQL, p.ID, micros(p.CreatedAt))
	return wrap(op, err)
}

// GetProject returns the project, or an error matching store.ErrNotFound.
func (s *Store) GetProject(ctx context.Context, id string) (store.Project, error) {
	const op = "get project"
	if !store.ValidProjectID(id) {
		return store.Project{}, invalid(op, "project id is not a slug")
	}
	row, err := s.queryRow(ctx, getProjectSQL, id)
	if err != nil {
		return store.Project{}, wrap(op, err)
	}
	var created int64
	if err := row.Scan(&created); err != nil {
		return store.Project{}, wrap(op, err)
	}
	return store.Project{ID: id, CreatedAt: fromMicros(created)}, nil
}

// ListProjects returns every project ordered by id.
func (s *Store) ListProjects(ctx context.Context) ([]store.Project, error) {
	const op = "list projects"
	rows, err := s.query(ctx, listProjectsSQL)
	if err != nil {
		return nil, wrap(op, err)
	}
	defer rows.Close()
	ps := []store.Project{}
	for rows.Next() {
		var p store.Project
		var created int64
		if err := rows.Scan(&p.ID, &created); err != nil {
			return nil, wrap(op, err)
		}
		p.CreatedAt = fromMicros(created)
		ps = append(ps, p)
	}
	return ps, wrap(op, rows.Err())
}
