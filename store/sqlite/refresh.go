package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	createFamilySQL = `INSERT INTO refresh_families
(id, project_id, user_id, generation, issued_at, expires_at, created_at, rotated_at, revoked_at)
VALUES (?, ?, ?, 0, ?, ?, ?, NULL, ?)`
	userExistsSQL = `SELECT COUNT(*) FROM users WHERE id = ? AND project_id = ?`
	familyColumns = `id, project_id, user_id, generation, issued_at, expires_at, created_at, rotated_at, revoked_at`
	getFamilySQL  = `SELECT ` + familyColumns + ` FROM refresh_families WHERE id = ? AND project_id = ?`
	// rotateFamilySQL is the compare-and-swap: it changes the row only if
	// the generation is still the one presented and the family is live.
	rotateFamilySQL = `UPDATE refresh_families
SET generation = generation + 1, issued_at = ?, expires_at = ?, rotated_at = ?
WHERE id = ? AND project_id = ? AND generation = ? AND revoked_at IS NULL`
	revokeFamilySQL = `UPDATE refresh_families SET revoked_at = COALESCE(revoked_at, ?)
WHERE id = ? AND project_id = ?`
)

// CreateRefreshFamily records f, whose Generation must be 0. It returns an
// error matching store.ErrInvalid for an empty id or user id, an invalid
// project id or a non-zero generation, store.ErrNotFound for an unknown
// project or a user unknown in the project, and store.ErrConflict for an
// existing id.
func (s *Store) CreateRefreshFamily(ctx context.Context, f store.RefreshFamily) error {
	const op = "create refresh family"
	if err := checkKey(op, f.ProjectID, f.ID); err != nil {
		return err
	}
	switch {
	case f.UserID == "":
		return invalid(op, "empty user id")
	case f.Generation != 0:
		return invalid(op, "generation is not 0")
	}
	err := s.writeTx(ctx, func(t *wtx) error {
		row, err := t.queryRow(userExistsSQL, f.UserID, f.ProjectID)
		if err != nil {
			return err
		}
		var n int
		if err := row.Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			// Covers an unknown project too: it has no users.
			return notFound(op + ": user")
		}
		_, err = t.exec(createFamilySQL, f.ID, f.ProjectID, f.UserID, micros(f.IssuedAt),
			micros(f.ExpiresAt), micros(f.CreatedAt), nullMicros(f.RevokedAt))
		return err
	})
	return wrap(op, err)
}

// GetRefreshFamily returns the family, or an error matching
// store.ErrNotFound.
func (s *Store) GetRefreshFamily(ctx context.Context, projectID, familyID string) (store.RefreshFamily, error) {
	const op = "get refresh family"
	if err := checkKey(op, projectID, familyID); err != nil {
		return store.RefreshFamily{}, err
	}
	row, err := s.queryRow(ctx, getFamilySQL, familyID, projectID)
	if err != nil {
		return store.RefreshFamily{}, wrap(op, err)
	}
	f, _, err := scanFamily(row)
	return f, wrap(op, err)
}

// RevokeRefreshFamily revokes the family at at, keeping an earlier
// revocation time, or returns an error matching store.ErrNotFound. A zero
// at returns an error matching store.ErrInvalid.
func (s *Store) RevokeRefreshFamily(ctx context.Context, projectID, familyID string, at time.Time) error {
	const op = "revoke refresh family"
	if err := checkKey(op, projectID, familyID); err != nil {
		return err
	}
	if at.IsZero() {
		return invalid(op, "zero time")
	}
	res, err := s.exec(ctx, revokeFamilySQL, micros(at), familyID, projectID)
	return wrap(op, mustAffect(res, err))
}

// RotateRefresh exchanges generation gen of the family for its successor as
// a compare-and-swap, in one write transaction that begins with BEGIN
// IMMEDIATE, so it holds across every handle and process on the database:
//
//   - gen is the current generation, unexpired (p.Now before ExpiresAt),
//     family not revoked: the row's generation becomes gen+1, issued at
//     p.Now, expiring at p.Now+p.TTL, and the rotation time is kept in the
//     row; Reused is false. The UPDATE is conditional on the generation, so
//     of any number of concurrent calls exactly one succeeds.
//   - gen is the generation just before the current one, p.ReuseWindow is
//     positive and the last rotation happened no more than p.ReuseWindow
//     before p.Now: nothing changes and the result is the current family
//     with Reused true (or an error matching store.ErrExpired if that
//     generation has expired since).
//   - gen is any other earlier generation, or the predecessor after the
//     window: the family is revoked at p.Now, the revocation is committed,
//     and the error matches store.ErrReplayed.
//
// It returns an error matching store.ErrNotFound for an unknown family, one
// of another project or a gen above the current one, store.ErrRevoked for a
// revoked family, store.ErrExpired when the current generation has expired,
// and store.ErrInvalid for a negative gen, a zero p.Now, a non-positive
// p.TTL or a negative p.ReuseWindow.
func (s *Store) RotateRefresh(ctx context.Context, projectID, familyID string, gen int64, p store.RotateParams) (store.Rotation, error) {
	const op = "rotate refresh family"
	if err := checkKey(op, projectID, familyID); err != nil {
		return store.Rotation{}, err
	}
	switch {
	case gen < 0:
		return store.Rotation{}, invalid(op, "negative generation")
	case p.Now.IsZero():
		return store.Rotation{}, invalid(op, "zero time")
	case p.TTL <= 0:
		return store.Rotation{}, invalid(op, "ttl not positive")
	case p.ReuseWindow < 0:
		return store.Rotation{}, invalid(op, "negative reuse window")
	}
	now := micros(p.Now)
	var rot store.Rotation
	err := s.writeTx(ctx, func(t *wtx) error {
		row, err := t.queryRow(getFamilySQL, familyID, projectID)
		if err != nil {
			return err
		}
		f, rotatedAt, err := scanFamily(row)
		if err != nil {
			return err
		}
		expired := now >= micros(f.ExpiresAt)
		switch {
		case !f.RevokedAt.IsZero():
			return errRevoked(op)
		case gen > f.Generation:
			return notFound(op + ": generation")
		case gen == f.Generation:
			if expired {
				return errExpired(op)
			}
			exp := micros(p.Now.Add(p.TTL))
			res, err := t.exec(rotateFamilySQL, now, exp, now, familyID, projectID, gen)
			if err := mustAffect(res, err); err != nil {
				// Cannot happen under BEGIN IMMEDIATE; never report a
				// lost race as success.
				return conflict(op, "generation changed")
			}
			f.Generation = gen + 1
			f.IssuedAt = fromMicros(now)
			f.ExpiresAt = fromMicros(exp)
			rot = store.Rotation{Family: f}
			return nil
		case gen == f.Generation-1 && p.ReuseWindow > 0 && rotatedAt.Valid &&
			now-rotatedAt.Int64 <= p.ReuseWindow.Microseconds():
			if expired {
				return errExpired(op)
			}
			rot = store.Rotation{Family: f, Reused: true}
			return nil
		default:
			if _, err := t.exec(revokeFamilySQL, now, familyID, projectID); err != nil {
				return err
			}
			return commitAnyway{errReplayed(op)}
		}
	})
	if err != nil {
		return store.Rotation{}, wrap(op, err)
	}
	return rot, nil
}

func scanFamily(r scanner) (store.RefreshFamily, sql.NullInt64, error) {
	var f store.RefreshFamily
	var issued, expires, created int64
	var rotated, revoked sql.NullInt64
	if err := r.Scan(&f.ID, &f.ProjectID, &f.UserID, &f.Generation, &issued, &expires, &created, &rotated, &revoked); err != nil {
		return store.RefreshFamily{}, sql.NullInt64{}, err
	}
	f.IssuedAt = fromMicros(issued)
	f.ExpiresAt = fromMicros(expires)
	f.CreatedAt = fromMicros(created)
	f.RevokedAt = fromNullMicros(revoked)
	return f, rotated, nil
}
