package latchkey

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey-dev/latchkey/store"
)

// CreateProject creates project id with its first signing key. It returns
// an error matching store.ErrInvalid for an id that is not a slug and
// store.ErrConflict for an existing project. It may run in another process
// than the servers: they serve the project from its first request.
func (l *Latchkey) CreateProject(ctx context.Context, id string) (store.Project, error) {
	p := store.Project{ID: id, CreatedAt: l.now()}
	if err := l.st.CreateProject(ctx, p); err != nil {
		return store.Project{}, fmt.Errorf("latchkey: creating project %q: %w", id, err)
	}
	if _, err := l.keyring.Rotate(ctx, id); err != nil {
		return store.Project{}, fmt.Errorf("latchkey: creating the signing key of project %q: %w", id, err)
	}
	return l.st.GetProject(ctx, id)
}

// EnsureProject makes sure project id exists and has an active signing key,
// creating what is missing. It is safe to run concurrently from several
// processes: at worst the project gets two signing keys, the newer active.
// When nothing is missing it only reads, so that an instance can start on a
// database that cannot take writes now (a standby): it answers 503 to what
// needs a write until the database can take one.
func (l *Latchkey) EnsureProject(ctx context.Context, id string) error {
	_, err := l.st.GetProject(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		err = l.st.CreateProject(ctx, store.Project{ID: id, CreatedAt: l.now()})
		if errors.Is(err, store.ErrConflict) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("latchkey: creating project %q: %w", id, err)
	}
	_, err = l.st.ActiveSigningKey(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		_, err = l.keyring.Rotate(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("latchkey: signing key of project %q: %w", id, err)
	}
	return nil
}
