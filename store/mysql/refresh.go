package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	familyColumns = `f.project_id, f.id, f.user_id, f.generation, f.issued_at, f.expires_at, f.created_at, f.ends_at, f.rotated_at, f.revoked_at`

	// lockUserShareSQL takes a shared lock on the user row for the rest of
	// CreateRefreshFamily's transaction and reads, as a locking read, the
	// newest committed disabled_at and password hash. DisableUser,
	// EndUserSessions and a password change lock the row exclusively,
	// which waits for that lock: either the family commits before they
	// change the user or revoke the user's families (and is revoked with
	// them: a reset sets the hash, then ends the sessions), or this read
	// waits for them to commit and finds the user disabled or the hash
	// changed.
	lockUserShareSQL = `SELECT disabled_at, password_hash FROM users WHERE project_id = ? AND id = ? LOCK IN SHARE MODE`
	createFamilySQL  = `INSERT INTO refresh_families
	(project_id, id, user_id, generation, issued_at, expires_at, created_at, ends_at)
	VALUES (?, ?, ?, 0, ?, ?, ?, ?)`

	getFamilySQL = `SELECT ` + familyColumns + ` FROM refresh_families f
	WHERE f.project_id = ? AND f.id = ?`
	// familyAndUserSQL reads the family and its user in one statement (one
	// snapshot, one round trip). The join is LEFT so that a family whose
	// user is missing (it cannot be: a foreign key keeps it) still reads.
	familyAndUserSQL = `SELECT ` + familyColumns + `,
	u.project_id, u.id, u.email, u.password_hash, u.tags, u.created_at, u.disabled_at
	FROM refresh_families f LEFT JOIN users u ON u.project_id = f.project_id AND u.id = f.user_id
	WHERE f.project_id = ? AND f.id = ?`

	// rotateFamilySQL is the compare-and-swap of RotateRefresh: one
	// statement that moves the family from generation gen to gen+1 only if
	// gen is still current, the family unrevoked, its generation unexpired
	// and its end not reached at now. InnoDB runs an UPDATE on the newest
	// committed version of the row, under its exclusive lock: a
	// concurrent UPDATE of the same row makes this one wait for it to
	// commit and then evaluate the WHERE clause on the new version, where
	// generation = gen (or revoked_at IS NULL, after DisableUser or a
	// replay revoked it) no longer holds. Of any number of concurrent
	// calls, on any number of instances, exactly one matches the row.
	rotateFamilySQL = `UPDATE refresh_families
	SET generation = generation + 1, issued_at = ?,
	    expires_at = CASE WHEN ends_at IS NOT NULL AND ends_at < ? THEN ends_at ELSE ? END,
	    rotated_at = ?
	WHERE project_id = ? AND id = ? AND generation = ?
	  AND revoked_at IS NULL AND expires_at > ? AND (ends_at IS NULL OR ends_at > ?)`
	// revokeFamilySQL changes only an unrevoked family, so that a second
	// revocation keeps the first time and adds no feed item.
	revokeFamilySQL = `UPDATE refresh_families SET revoked_at = ?
	WHERE project_id = ? AND id = ? AND revoked_at IS NULL`
	familyExistsSQL = `SELECT EXISTS (SELECT 1 FROM refresh_families WHERE project_id = ? AND id = ?)`

	pruneFamiliesSQL = `DELETE FROM refresh_families
	WHERE revoked_at < ? OR expires_at < ? OR ends_at < ?`

	// scheduleSessionEndSQL schedules a family's EndsAt in the feed;
	// IGNORE: a second call before it is due adds nothing (the row comes
	// from the family, so no other error is there to ignore).
	scheduleSessionEndSQL = `INSERT IGNORE INTO scheduled_revocations (project_id, due_at, subject, kind)
	SELECT project_id, ends_at, id, '` + string(store.RevokedSession) + `' FROM refresh_families
	WHERE project_id = ? AND id = ? AND ends_at IS NOT NULL`
)

// CreateRefreshFamily records f, which starts a session, while
// passwordHash is the user's hash. It returns an error matching
// store.ErrInvalid when store.CheckFamilyStart refuses f or passwordHash,
// store.ErrNotFound for an unknown project or user, store.ErrDisabled for a
// disabled user and store.ErrConflict for an existing id or a hash that is
// no longer passwordHash. See lockUserShareSQL for how it stays consistent
// with a concurrent DisableUser or password reset.
func (s *Store) CreateRefreshFamily(ctx context.Context, f store.RefreshFamily, passwordHash string) error {
	const op = "create refresh family"
	return s.inTx(ctx, op, func(tx *sql.Tx) error {
		var disabled sql.NullTime
		var hash string
		if err := tx.QueryRowContext(ctx, lockUserShareSQL, f.ProjectID, f.UserID).Scan(&disabled, &hash); err != nil {
			return err // sql.ErrNoRows: an unknown project or user
		}
		switch {
		case disabled.Valid:
			return fmt.Errorf("mysql: %s: %w", op, store.ErrDisabled)
		case hash != passwordHash:
			return fmt.Errorf("mysql: %s: the password hash changed: %w", op, store.ErrConflict)
		}
		_, err := tx.ExecContext(ctx, createFamilySQL, f.ProjectID, f.ID, f.UserID,
			dbTime(f.IssuedAt), dbTime(f.ExpiresAt), dbTime(f.CreatedAt), nullTime(f.EndsAt))
		return err
	})
}

// RotateRefresh exchanges generation gen of the family for its successor,
// as documented on [store.RefreshStore], in two statements and no explicit
// transaction: a read of the family with its user, then, when gen is the
// current generation and the session live, the conditional UPDATE of
// rotateFamilySQL, the compare-and-swap, which holds across every handle
// on the database. The successor is the family read with the UPDATE's
// changes: a family's other columns never change, and the UPDATE matched
// only the unrevoked row at gen.
//
// When the read finds gen already behind, or the UPDATE matches no row, the
// call is classified on the newest read, in this order:
//
//   - no row: store.ErrNotFound;
//   - the user disabled: store.ErrDisabled;
//   - revoked: store.ErrRevoked;
//   - gen above the current generation: store.ErrNotFound;
//   - gen current (so expired or ended): store.ErrExpired;
//   - gen the predecessor of the current one, rotated no more than
//     p.ReuseWindow before p.Now: the current family with Reused true and
//     its user, or store.ErrExpired if the current generation has expired
//     or the session ended;
//   - any other earlier gen: in one transaction the family is revoked at
//     p.Now and one store.RevokedSession item is added to the feed (unless
//     it was revoked meanwhile), and the error matches store.ErrReplayed.
//
// Every classification stays true once made, because a family only moves
// forward (the generation grows, a revocation stays).
func (s *Store) RotateRefresh(ctx context.Context, projectID, familyID string, gen int64, p store.RotateParams) (store.Rotation, error) {
	const op = "rotate refresh"
	now := dbTime(p.Now)
	expires := dbTime(p.Now.Add(p.TTL))

	// The loop runs again only when the UPDATE lost a race the read did
	// not see: the next read then classifies the call.
	for range 3 {
		var f store.RefreshFamily
		var rotatedAt time.Time
		var u store.User
		var userFound bool
		err := s.read(ctx, op, func(q querier) error {
			var err error
			f, rotatedAt, u, userFound, err = scanFamilyAndUser(q.QueryRowContext(ctx, familyAndUserSQL, projectID, familyID))
			return err
		})
		if err != nil {
			return store.Rotation{}, err
		}
		step, err := store.DecideRotation(store.RotationState{Family: f, RotatedAt: rotatedAt, UserDisabled: !userFound || u.Disabled()}, gen, p)
		switch {
		case err != nil:
			return store.Rotation{}, check(op, err)
		case step == store.RotateNext:
			exp := store.SuccessorExpiry(f, p)
			n, err := s.execCount(ctx, op, rotateFamilySQL, now, expires, expires, now,
				projectID, familyID, gen, now, now)
			if err != nil {
				return store.Rotation{}, err
			}
			if n == 0 {
				continue // another call rotated or revoked it first
			}
			f.Generation = gen + 1
			f.IssuedAt = now
			f.ExpiresAt = exp
			return store.Rotation{Family: f, User: u}, nil
		case step == store.RotateReuse:
			return store.Rotation{Family: f, Reused: true, User: u}, nil
		}
		// RotateReplay: an older generation, or the predecessor after the window.
		if err := s.revokeFamily(ctx, op, projectID, familyID, now); err != nil && !errors.Is(err, store.ErrNotFound) {
			return store.Rotation{}, err
		}
		return store.Rotation{}, fmt.Errorf("mysql: %s: generation %d of %d: %w", op, gen, f.Generation, store.ErrReplayed)
	}
	return store.Rotation{}, fmt.Errorf("mysql: %s: the family changed during the call, try again", op)
}

// GetRefreshFamily returns the family, or an error matching
// store.ErrNotFound.
func (s *Store) GetRefreshFamily(ctx context.Context, projectID, familyID string) (store.RefreshFamily, error) {
	const op = "get refresh family"
	return getOne(ctx, s, op, getFamilySQL, []any{projectID, familyID}, scanFamily)
}

// RevokeRefreshFamily ends the session: it revokes the family at at and adds
// one revocation of kind store.RevokedSession to the feed, in one
// transaction. Revoking a revoked family succeeds, keeps the first time
// and adds nothing. It returns an error matching store.ErrNotFound for an
// unknown family and store.ErrInvalid for a zero at.
func (s *Store) RevokeRefreshFamily(ctx context.Context, projectID, familyID string, at time.Time) error {
	const op = "revoke refresh family"
	return s.revokeFamily(ctx, op, projectID, familyID, dbTime(at))
}

// revokeFamily revokes the family at at, adding its feed item, unless it is
// revoked already.
func (s *Store) revokeFamily(ctx context.Context, op, projectID, familyID string, at time.Time) error {
	return s.inTx(ctx, op, func(tx *sql.Tx) error {
		n, err := affected(tx.ExecContext(ctx, revokeFamilySQL, at, projectID, familyID))
		if err != nil {
			return err
		}
		if n == 0 {
			return existsOrNotFound(ctx, tx, op, familyExistsSQL, projectID, familyID)
		}
		return addRevocation(ctx, tx, projectID, store.RevokedSession, familyID, at)
	})
}

// ScheduleSessionEnd schedules the family's EndsAt as a feed item of kind
// store.RevokedSession, in one transaction that raises the project's feed
// count so that waiting feeds learn the new time (see store.RefreshStore).
func (s *Store) ScheduleSessionEnd(ctx context.Context, projectID, familyID string) error {
	const op = "schedule session end"
	return s.inTx(ctx, op, func(tx *sql.Tx) error {
		n, err := affected(tx.ExecContext(ctx, scheduleSessionEndSQL, projectID, familyID))
		if err != nil {
			return err
		}
		if n == 0 {
			// Scheduled already, no EndsAt, or no such family.
			return existsOrNotFound(ctx, tx, op, familyExistsSQL, projectID, familyID)
		}
		_, err = tx.ExecContext(ctx, countFeedChangeSQL, projectID)
		return err
	})
}

// PruneRefreshFamilies deletes every family, of every project, revoked,
// expired or ended before before, in one statement, and returns how many it
// deleted.
func (s *Store) PruneRefreshFamilies(ctx context.Context, before time.Time) (int, error) {
	const op = "prune refresh families"
	t := dbTime(before)
	return s.execCount(ctx, op, pruneFamiliesSQL, t, t, t)
}

func scanFamily(row rowScanner) (store.RefreshFamily, error) {
	f, _, err := scanFamilyRow(row)
	return f, err
}

// familyRow is what a row's familyColumns are scanned into.
type familyRow struct {
	f                      store.RefreshFamily
	ends, rotated, revoked sql.NullTime
}

func (r *familyRow) dest() []any {
	return []any{&r.f.ProjectID, &r.f.ID, &r.f.UserID, &r.f.Generation,
		&r.f.IssuedAt, &r.f.ExpiresAt, &r.f.CreatedAt, &r.ends, &r.rotated, &r.revoked}
}

// family returns the family scanned, and when its previous generation was
// rotated (the zero time at generation 0).
func (r *familyRow) family() (store.RefreshFamily, time.Time) {
	f := r.f
	f.IssuedAt = f.IssuedAt.UTC()
	f.ExpiresAt = f.ExpiresAt.UTC()
	f.CreatedAt = f.CreatedAt.UTC()
	f.EndsAt = fromNull(r.ends)
	f.RevokedAt = fromNull(r.revoked)
	return f, fromNull(r.rotated)
}

// scanFamilyRow scans familyColumns.
func scanFamilyRow(row rowScanner) (store.RefreshFamily, time.Time, error) {
	var r familyRow
	if err := row.Scan(r.dest()...); err != nil {
		return store.RefreshFamily{}, time.Time{}, err
	}
	f, rotated := r.family()
	return f, rotated, nil
}

// scanFamilyAndUser scans a row of familyAndUserSQL: the family, when its
// previous generation was rotated, its user, and whether the user was
// found.
func scanFamilyAndUser(row rowScanner) (store.RefreshFamily, time.Time, store.User, bool, error) {
	var r familyRow
	var u nullUserRow
	if err := row.Scan(append(r.dest(), u.dest()...)...); err != nil {
		return store.RefreshFamily{}, time.Time{}, store.User{}, false, err
	}
	f, rotated := r.family()
	user, ok, err := u.user()
	return f, rotated, user, ok, err
}

// nullUserRow is a userRow read through a LEFT JOIN: every column may be
// NULL.
type nullUserRow struct {
	projectID, id, email, hash, tags sql.NullString
	created, disabled                sql.NullTime
}

func (r *nullUserRow) dest() []any {
	return []any{&r.projectID, &r.id, &r.email, &r.hash, &r.tags, &r.created, &r.disabled}
}

func (r *nullUserRow) user() (store.User, bool, error) {
	if !r.id.Valid {
		return store.User{}, false, nil
	}
	ur := userRow{
		u:        store.User{ProjectID: r.projectID.String, ID: r.id.String, Email: r.email.String, PasswordHash: r.hash.String, CreatedAt: r.created.Time},
		tags:     r.tags.String,
		disabled: r.disabled,
	}
	u, err := ur.user()
	return u, err == nil, err
}
