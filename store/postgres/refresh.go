package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	familyColumns   = `project_id, id, user_id, generation, issued_at, expires_at, created_at, rotated_at, revoked_at`
	createFamilySQL = `INSERT INTO refresh_families
	(project_id, id, user_id, generation, issued_at, expires_at, created_at, revoked_at)
	VALUES ($1, $2, $3, 0, $4, $5, $6, $7)`
	getFamilySQL = `SELECT ` + familyColumns + ` FROM refresh_families
	WHERE project_id = $1 AND id = $2`

	// rotateFamilySQL is the compare-and-swap of RotateRefresh: one
	// statement that moves the family from generation $3 to $3+1 only if
	// $3 is still current, the family unrevoked and the generation
	// unexpired at $4. Under READ COMMITTED a concurrent UPDATE of the same
	// row makes this one wait for it to commit and then re-evaluate the
	// WHERE clause on the new row version, where generation = $3 no longer
	// holds: of any number of concurrent calls, exactly one updates a row.
	rotateFamilySQL = `UPDATE refresh_families
	SET generation = generation + 1, issued_at = $4, expires_at = $5, rotated_at = $4
	WHERE project_id = $1 AND id = $2 AND generation = $3
	  AND revoked_at IS NULL AND expires_at > $4
	RETURNING ` + familyColumns
	revokeFamilySQL = `UPDATE refresh_families SET revoked_at = coalesce(revoked_at, $3)
	WHERE project_id = $1 AND id = $2`
)

// CreateRefreshFamily records f, whose Generation must be 0. It returns an
// error matching store.ErrInvalid for an empty id or user id or a non-zero
// generation, store.ErrNotFound for an unknown project or user (a foreign
// key to the project's users) and store.ErrConflict for an existing id.
func (s *Store) CreateRefreshFamily(ctx context.Context, f store.RefreshFamily) error {
	const op = "create refresh family"
	if err := checkProject(op, f.ProjectID); err != nil {
		return err
	}
	if err := checkID(op, "id", f.ID); err != nil {
		return err
	}
	if err := checkID(op, "user id", f.UserID); err != nil {
		return err
	}
	if f.Generation != 0 {
		return invalid(op, "generation is not 0")
	}
	_, err := s.pool.Exec(ctx, createFamilySQL, f.ProjectID, f.ID, f.UserID,
		ts(f.IssuedAt), ts(f.ExpiresAt), ts(f.CreatedAt), nullTS(f.RevokedAt))
	return translate(op, err)
}

// RotateRefresh exchanges generation gen of the family for its successor,
// as documented on [store.RefreshStore]. The exchange is a single
// conditional UPDATE ... RETURNING (see rotateFamilySQL), so it is atomic
// across every handle on the database without explicit locks. When it
// changes no row, one read of the family classifies the call:
//
//   - no row: store.ErrNotFound;
//   - revoked: store.ErrRevoked;
//   - gen above the current generation: store.ErrNotFound;
//   - gen current (so expired): store.ErrExpired;
//   - gen the predecessor of the current one, rotated no more than
//     p.ReuseWindow before p.Now (p.ReuseWindow > 0): the current family
//     with Reused true;
//   - any other earlier gen: the family is revoked at p.Now with one UPDATE
//     and the error matches store.ErrReplayed.
//
// Every classification stays true once made, because a family only moves
// forward (the generation grows, a revocation stays). It returns
// store.ErrInvalid for a negative gen, a zero p.Now, a non-positive p.TTL
// or a negative p.ReuseWindow.
func (s *Store) RotateRefresh(ctx context.Context, projectID, familyID string, gen int64, p store.RotateParams) (store.Rotation, error) {
	const op = "rotate refresh"
	if err := checkProject(op, projectID); err != nil {
		return store.Rotation{}, err
	}
	if err := checkID(op, "family id", familyID); err != nil {
		return store.Rotation{}, err
	}
	switch {
	case gen < 0:
		return store.Rotation{}, invalid(op, "negative generation")
	case p.Now.IsZero():
		return store.Rotation{}, invalid(op, "zero Now")
	case p.TTL <= 0:
		return store.Rotation{}, invalid(op, "non-positive TTL")
	case p.ReuseWindow < 0:
		return store.Rotation{}, invalid(op, "negative ReuseWindow")
	}
	now := ts(p.Now)
	expires := ts(p.Now.Add(p.TTL))

	// The loop runs again only if the family appeared, or a concurrent
	// transaction holding its row rolled back, between the UPDATE and the
	// read: the read then finds gen current and valid.
	for range 3 {
		f, err := scanFamily(s.pool.QueryRow(ctx, rotateFamilySQL, projectID, familyID, gen, now, expires))
		if err == nil {
			return store.Rotation{Family: f}, nil
		}
		if err = translate(op, err); !isNotFound(err) {
			return store.Rotation{}, err
		}

		f, rotatedAt, err := scanFamilyRow(s.pool.QueryRow(ctx, getFamilySQL, projectID, familyID))
		if err != nil {
			return store.Rotation{}, translate(op, err)
		}
		switch {
		case !f.RevokedAt.IsZero():
			return store.Rotation{}, fmt.Errorf("postgres: %s: %w", op, store.ErrRevoked)
		case gen > f.Generation:
			return store.Rotation{}, notFound(op)
		case gen == f.Generation:
			if !f.ExpiresAt.After(now) {
				return store.Rotation{}, fmt.Errorf("postgres: %s: %w", op, store.ErrExpired)
			}
			continue
		case gen == f.Generation-1 && withinWindow(rotatedAt, now, p.ReuseWindow):
			return store.Rotation{Family: f, Reused: true}, nil
		}
		// An older generation, or the predecessor after the window.
		if _, err := s.pool.Exec(ctx, revokeFamilySQL, projectID, familyID, now); err != nil {
			return store.Rotation{}, translate(op, err)
		}
		return store.Rotation{}, fmt.Errorf("postgres: %s: generation %d of %d: %w", op, gen, f.Generation, store.ErrReplayed)
	}
	return store.Rotation{}, fmt.Errorf("postgres: %s: family changed during rotation, try again", op)
}

// withinWindow reports whether a rotation at rotatedAt (the zero time for
// none) happened no more than window before now. A zero window makes every
// reuse a replay.
func withinWindow(rotatedAt, now time.Time, window time.Duration) bool {
	if window <= 0 || rotatedAt.IsZero() {
		return false
	}
	return now.Sub(rotatedAt) <= window
}

// GetRefreshFamily returns the family, or an error matching
// store.ErrNotFound.
func (s *Store) GetRefreshFamily(ctx context.Context, projectID, familyID string) (store.RefreshFamily, error) {
	const op = "get refresh family"
	if err := checkProject(op, projectID); err != nil {
		return store.RefreshFamily{}, err
	}
	if err := checkID(op, "family id", familyID); err != nil {
		return store.RefreshFamily{}, err
	}
	f, err := scanFamily(s.pool.QueryRow(ctx, getFamilySQL, projectID, familyID))
	return f, translate(op, err)
}

// RevokeRefreshFamily revokes the family at at, keeping an earlier
// revocation time, or returns an error matching store.ErrNotFound. A zero at
// returns an error matching store.ErrInvalid.
func (s *Store) RevokeRefreshFamily(ctx context.Context, projectID, familyID string, at time.Time) error {
	const op = "revoke refresh family"
	if err := checkKeyArgs(op, projectID, familyID, at); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, revokeFamilySQL, projectID, familyID, ts(at))
	if err != nil {
		return translate(op, err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(op)
	}
	return nil
}

func scanFamily(row rowScanner) (store.RefreshFamily, error) {
	f, _, err := scanFamilyRow(row)
	return f, err
}

// scanFamilyRow scans familyColumns: the family, and when its previous
// generation was rotated (the zero time at generation 0).
func scanFamilyRow(row rowScanner) (store.RefreshFamily, time.Time, error) {
	var f store.RefreshFamily
	var rotated, revoked pgtype.Timestamptz
	err := row.Scan(&f.ProjectID, &f.ID, &f.UserID, &f.Generation,
		&f.IssuedAt, &f.ExpiresAt, &f.CreatedAt, &rotated, &revoked)
	if err != nil {
		return store.RefreshFamily{}, time.Time{}, err
	}
	f.IssuedAt = f.IssuedAt.UTC()
	f.ExpiresAt = f.ExpiresAt.UTC()
	f.CreatedAt = f.CreatedAt.UTC()
	f.RevokedAt = fromNullTS(revoked)
	return f, fromNullTS(rotated), nil
}
