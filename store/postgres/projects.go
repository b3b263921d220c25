package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	createProjectSQL = `INSERT INTO projects (id, created_at) VALUES ($1, $2)`
	getProjectSQL    = `SELECT id, created_at FROM projects WHERE id = $1`
	listProjectsSQL  = `SELECT id, created_at FROM projects ORDER BY id`
)

// CreateProject creates p. It returns an error matching store.ErrInvalid for
// an id that is not a slug and store.ErrConflict when the id exists.
func (s *Store) CreateProject(ctx context.Context, p store.Project) error {
	const op = "create project"
	if err := checkProject(op, p.ID); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, createProjectSQL, p.ID, ts(p.CreatedAt))
	return translate(op, err)
}

// GetProject returns the project, or an error matching store.ErrNotFound.
func (s *Store) GetProject(ctx context.Context, id string) (store.Project, error) {
	const op = "get project"
	if err := checkProject(op, id); err != nil {
		return store.Project{}, err
	}
	var p store.Project
	err := s.pool.QueryRow(ctx, getProjectSQL, id).Scan(&p.ID, &p.CreatedAt)
	if err != nil {
		return store.Project{}, translate(op, err)
	}
	p.CreatedAt = p.CreatedAt.UTC()
	return p, nil
}

// ListProjects returns every project ordered by id, byte by byte.
func (s *Store) ListProjects(ctx context.Context) ([]store.Project, error) {
	rows, _ := s.pool.Query(ctx, listProjectsSQL)
	ps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Project, error) {
		var p store.Project
		err := row.Scan(&p.ID, &p.CreatedAt)
		p.CreatedAt = p.CreatedAt.UTC()
		return p, err
	})
	if err != nil {
		return nil, translate("list projects", err)
	}
	if ps == nil {
		ps = []store.Project{}
	}
	return ps, nil
}
