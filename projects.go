package latchkey

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

// CreateProject creates project id with its first signing key, of the
// default algorithm (Options.Keyring's Algorithm: EdDSA unless set). It
// returns an error matching store.ErrInvalid for an id that is not a slug
// and store.ErrConflict for an existing project. It may run in another
// process than the servers: they serve the project from its first request.
func (l *Latchkey) CreateProject(ctx context.Context, id string) (store.Project, error) {
	return l.CreateProjectWith(ctx, id, nil)
}

// ProjectOptions are the choices made when a project is created. A nil
// *ProjectOptions and every zero field mean the documented default.
type ProjectOptions struct {
	// Algorithm is the signing algorithm of the project's first key:
	// keys.EdDSA, keys.ES256 or keys.RS256 (later rotations keep it unless
	// they name another; see keys.Keyring.RotateTo). "" means the default
	// of Options.Keyring (EdDSA unless set).
	Algorithm string
}

// CreateProjectWith is CreateProject with the choices of opts. An
// algorithm that is not EdDSA, ES256 or RS256 gives an error matching
// keys.ErrUnknownAlgorithm and store.ErrInvalid, and creates nothing.
func (l *Latchkey) CreateProjectWith(ctx context.Context, id string, opts *ProjectOptions) (store.Project, error) {
	o := valueOf(opts)
	if o.Algorithm != "" {
		if err := keys.CheckAlgorithm(o.Algorithm); err != nil {
			return store.Project{}, fmt.Errorf("latchkey: creating project %q: %w", id, err)
		}
	}
	p := store.Project{ID: id, CreatedAt: l.now()}
	if err := l.st.CreateProject(ctx, p); err != nil {
		return store.Project{}, fmt.Errorf("latchkey: creating project %q: %w", id, err)
	}
	if _, err := l.keyring.RotateTo(ctx, id, o.Algorithm); err != nil {
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
