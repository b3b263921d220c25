package sqlite

import (
	"context"
	"errors"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	createFamilySQL = `INSERT INTO refresh_families
(id, project_id, user_id, generation, issued_at, expires_at, created_at, ends_at)
VALUES (?, ?, ?, 0, ?, ?, ?, ?)`
	// familyUserStateSQL reads the user's disabled_at and password hash; no
	// row means no such user in the project.
	familyUserStateSQL = `SELECT disabled_at, password_hash FROM users WHERE id = ? AND project_id = ?`
	familyColumns      = `id, project_id, user_id, generation, issued_at, expires_at, created_at, ends_at, revoked_at`
	getFamilySQL       = `SELECT ` + familyColumns + ` FROM refresh_families WHERE id = ? AND project_id = ?`
	// rotateStateSQL reads the family (familyColumns), when it last
	// rotated and its user (userColumns, from column rotateUserColumn),
	// inside the rotation's write transaction.
	rotateStateSQL = `SELECT f.id, f.project_id, f.user_id, f.generation, f.issued_at, f.expires_at,
f.created_at, f.ends_at, f.revoked_at, f.rotated_at, u.*
FROM refresh_families AS f JOIN (SELECT ` + userColumns + ` FROM users) AS u ON u.id = f.user_id
WHERE f.id = ? AND f.project_id = ?`
	rotateUserColumn = 10
	// rotateFamilySQL is the compare-and-swap: it changes the row only if
	// the generation is still the one presented and the family is live.
	rotateFamilySQL = `UPDATE refresh_families
SET generation = generation + 1, issued_at = ?, expires_at = ?, rotated_at = ?
WHERE id = ? AND project_id = ? AND generation = ? AND revoked_at IS NULL`
	// familyRevokedSQL reads whether the family is revoked; no row means
	// no such family in the project.
	familyRevokedSQL = `SELECT revoked_at FROM refresh_families WHERE id = ? AND project_id = ?`
	revokeFamilySQL  = `UPDATE refresh_families SET revoked_at = ? WHERE id = ? AND project_id = ? AND revoked_at IS NULL`
	pruneFamiliesSQL = `DELETE FROM refresh_families WHERE revoked_at < ?1 OR expires_at < ?1 OR ends_at < ?1`
	// scheduleSessionEndSQL schedules a family's EndsAt in the feed; OR
	// IGNORE: a second call before it is due adds nothing.
	scheduleSessionEndSQL = `INSERT OR IGNORE INTO scheduled_revocations (project_id, due_at, subject, kind)
SELECT project_id, ends_at, id, '` + string(store.RevokedSession) + `' FROM refresh_families
WHERE id = ? AND project_id = ? AND ends_at IS NOT NULL`
)

// CreateRefreshFamily records f, which starts a session, while
// passwordHash is the user's hash. It returns an error matching
// store.ErrInvalid when store.CheckFamilyStart refuses f or passwordHash,
// store.ErrNotFound for an unknown project or a user unknown in the
// project, store.ErrDisabled for a disabled user and store.ErrConflict for
// an existing id or a hash that is no longer passwordHash. The user's state
// is read in the same write transaction as the insert, so a DisableUser or
// password change committed before it is always seen.
func (s *Store) CreateRefreshFamily(ctx context.Context, f store.RefreshFamily, passwordHash string) error {
	const op = "create refresh family"
	err := s.writeTx(ctx, func(t *wtx) error {
		var disabled bool
		var hash string
		err := t.queryRow(familyUserStateSQL, func(st *sqlite.Stmt) error {
			disabled, hash = !st.ColumnIsNull(0), st.ColumnText(1)
			return nil
		}, f.UserID, f.ProjectID)
		switch {
		case errors.Is(err, errNoRows):
			// Covers an unknown project too: it has no users.
			return notFound(op + ": user")
		case err != nil:
			return err
		case disabled:
			return errDisabled(op)
		case hash != passwordHash:
			return conflict(op, "the password hash changed")
		}
		_, err = t.exec(createFamilySQL, f.ID, f.ProjectID, f.UserID, dbTime(f.IssuedAt),
			dbTime(f.ExpiresAt), dbTime(f.CreatedAt), nullDBTime(f.EndsAt))
		return err
	})
	return wrap(op, err)
}

// GetRefreshFamily returns the family, or an error matching
// store.ErrNotFound.
func (s *Store) GetRefreshFamily(ctx context.Context, projectID, familyID string) (store.RefreshFamily, error) {
	const op = "get refresh family"
	var f store.RefreshFamily
	err := s.readRow(ctx, getFamilySQL, func(st *sqlite.Stmt) error {
		f = scanFamily(st)
		return nil
	}, familyID, projectID)
	if err != nil {
		return store.RefreshFamily{}, wrap(op, err)
	}
	return f, nil
}

// RevokeRefreshFamily ends the session: it revokes the family at at and adds
// one revocation of kind store.RevokedSession to the project's feed, in one
// write transaction. Revoking a revoked family succeeds, keeps the first
// time and adds nothing. It returns an error matching store.ErrNotFound for
// an unknown family and store.ErrInvalid for a zero at.
func (s *Store) RevokeRefreshFamily(ctx context.Context, projectID, familyID string, at time.Time) error {
	const op = "revoke refresh family"
	us := dbTime(at)
	err := s.writeTx(ctx, func(t *wtx) error {
		revoked, err := t.isSet(familyRevokedSQL, familyID, projectID)
		if err != nil || revoked {
			return err
		}
		return t.revokeFamily(projectID, familyID, us)
	})
	return wrap(op, err)
}

// ScheduleSessionEnd schedules the family's EndsAt as a feed item of kind
// store.RevokedSession, in one write transaction (see store.RefreshStore).
func (s *Store) ScheduleSessionEnd(ctx context.Context, projectID, familyID string) error {
	const op = "schedule session end"
	err := s.writeTx(ctx, func(t *wtx) error {
		n, err := t.exec(scheduleSessionEndSQL, familyID, projectID)
		if err != nil {
			return err
		}
		if n > 0 {
			t.revoked = true // a waiting feed learns the new time
			return nil
		}
		// Scheduled already, no EndsAt, or no such family.
		_, err = t.isSet(familyRevokedSQL, familyID, projectID)
		return err
	})
	return wrap(op, err)
}

// revokeFamily revokes a family that is not revoked at the microsecond at
// and adds its item to the feed.
func (t *wtx) revokeFamily(projectID, familyID string, at int64) error {
	if _, err := t.exec(revokeFamilySQL, at, familyID, projectID); err != nil {
		return err
	}
	return t.addRevocation(projectID, store.RevokedSession, familyID, at)
}

// RotateRefresh exchanges generation gen of the family for its successor as
// a compare-and-swap, in one write transaction that begins with BEGIN
// IMMEDIATE, so it holds across every handle and process on the database:
//
//   - gen is the current generation, unexpired (p.Now before ExpiresAt and
//     before EndsAt), family not revoked, user not disabled: the row's
//     generation becomes gen+1, issued at p.Now, expiring at p.Now+p.TTL or
//     at EndsAt if that is earlier, and the rotation time is kept in the
//     row; Reused is false. The UPDATE is conditional on the generation, so
//     of any number of concurrent calls exactly one succeeds.
//   - gen is the generation just before the current one, p.ReuseWindow is
//     positive and the last rotation happened no more than p.ReuseWindow
//     before p.Now: nothing changes and the result is the current family
//     with Reused true (or an error matching store.ErrExpired if that
//     generation has expired since).
//   - gen is any other earlier generation, or the predecessor after the
//     window: the family is revoked at p.Now and one revocation of kind
//     store.RevokedSession is added to the feed, both committed, and the
//     error matches store.ErrReplayed.
//
// A result carries the family's user, read with the family.
//
// It returns an error matching store.ErrNotFound for an unknown family, one
// of another project or a gen above the current one, store.ErrDisabled when
// the family's user is disabled, store.ErrRevoked for a revoked family,
// store.ErrExpired when the current generation has expired or p.Now is at or
// past EndsAt, and store.ErrInvalid when store.CheckRotate refuses gen or
// p.
func (s *Store) RotateRefresh(ctx context.Context, projectID, familyID string, gen int64, p store.RotateParams) (store.Rotation, error) {
	const op = "rotate refresh family"
	now := dbTime(p.Now)
	var rot store.Rotation
	err := s.writeTx(ctx, func(t *wtx) error {
		var f store.RefreshFamily
		var u store.User
		var rotated bool
		var rotatedAt int64
		err := t.queryRow(rotateStateSQL, func(st *sqlite.Stmt) (err error) {
			f = scanFamily(st)
			rotated, rotatedAt = !st.ColumnIsNull(9), st.ColumnInt64(9)
			u, err = scanUserAt(st, rotateUserColumn)
			return err
		}, familyID, projectID)
		if err != nil {
			return err
		}
		var rotatedAtTime time.Time
		if rotated {
			rotatedAtTime = fromDBTime(rotatedAt)
		}
		step, err := store.DecideRotation(store.RotationState{Family: f, RotatedAt: rotatedAtTime, UserDisabled: u.Disabled()}, gen, p)
		switch {
		case err != nil:
			return check(op, err)
		case step == store.RotateNext:
			exp := store.SuccessorExpiry(f, p)
			if err := mustAffect(t.exec(rotateFamilySQL, now, dbTime(exp), now, familyID, projectID, gen)); err != nil {
				// Cannot happen under BEGIN IMMEDIATE; never report a
				// lost race as success.
				return conflict(op, "generation changed")
			}
			f.Generation = gen + 1
			f.IssuedAt = fromDBTime(now)
			f.ExpiresAt = exp
			rot = store.Rotation{Family: f, User: u}
			return nil
		case step == store.RotateReuse:
			rot = store.Rotation{Family: f, Reused: true, User: u}
			return nil
		default:
			if err := t.revokeFamily(projectID, familyID, now); err != nil {
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

// PruneRefreshFamilies deletes every family, of every project, that was
// revoked before before, whose current generation expired before before, or
// whose EndsAt is before before, and returns how many it deleted. A deleted
// family's tokens stay refused: they name a family that is not found.
func (s *Store) PruneRefreshFamilies(ctx context.Context, before time.Time) (int, error) {
	const op = "prune refresh families"
	return s.prune(ctx, op, pruneFamiliesSQL, dbTime(before))
}

// scanFamily returns the family of a row of familyColumns.
func scanFamily(st *sqlite.Stmt) store.RefreshFamily {
	return store.RefreshFamily{
		ID:         st.ColumnText(0),
		ProjectID:  st.ColumnText(1),
		UserID:     st.ColumnText(2),
		Generation: st.ColumnInt64(3),
		IssuedAt:   columnTime(st, 4),
		ExpiresAt:  columnTime(st, 5),
		CreatedAt:  columnTime(st, 6),
		EndsAt:     columnNullTime(st, 7),
		RevokedAt:  columnNullTime(st, 8),
	}
}
