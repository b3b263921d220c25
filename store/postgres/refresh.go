package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/latchkey-dev/latchkey/store"
)

const (
	familyColumns = `project_id, id, user_id, generation, issued_at, expires_at, created_at, ends_at, rotated_at, revoked_at`

	// createFamilySQL inserts the family only for an existing user that is
	// not disabled and whose password hash is still $8, and holds a FOR
	// SHARE lock on the user row until the transaction ends. Every write
	// of the user row waits for that lock, and the lock waits for every
	// uncommitted one: DisableUser and EndUserSessions lock the row FOR
	// UPDATE first, so either this insert commits before they revoke the
	// user's families (and is revoked with them), or it waits for them to
	// commit; a password change (an UPDATE of the row) either waits for
	// this insert to commit (and the EndUserSessions after it revokes the
	// family) or commits first. Under READ COMMITTED, a row changed by a
	// transaction that committed after this statement's snapshot makes the
	// lock re-check the newest version, where the user is disabled or the
	// hash changed, and nothing is inserted. (A FOR KEY SHARE lock would
	// not: it ignores updates that leave the key alone, and so would let
	// a session start on a hash changed meanwhile.)
	createFamilySQL = `INSERT INTO refresh_families
	(project_id, id, user_id, generation, issued_at, expires_at, created_at, ends_at)
	SELECT $1::text, $2::text, u.id, 0, $4::timestamptz, $5::timestamptz, $6::timestamptz, $7::timestamptz
	FROM users u
	WHERE u.project_id = $1 AND u.id = $3 AND u.disabled_at IS NULL AND u.password_hash = $8
	FOR SHARE OF u`
	// familyUserStateSQL reads whether the user is disabled and whether
	// its password hash is still $3.
	familyUserStateSQL = `SELECT disabled_at IS NOT NULL, password_hash = $3 FROM users WHERE project_id = $1 AND id = $2`

	getFamilySQL = `SELECT ` + familyColumns + ` FROM refresh_families
	WHERE project_id = $1 AND id = $2`
	// classifyFamilySQL reads the family and whether its user is disabled.
	classifyFamilySQL = `SELECT ` + familyColumns + `, coalesce(
	  (SELECT u.disabled_at IS NOT NULL FROM users u WHERE u.project_id = f.project_id AND u.id = f.user_id),
	  false)
	FROM refresh_families f WHERE f.project_id = $1 AND f.id = $2`

	// rotateFamilySQL is the compare-and-swap of RotateRefresh: one
	// statement that moves the family from generation $3 to $3+1 only if
	// $3 is still current, the family unrevoked, its generation unexpired
	// and its end not reached at $4, and its user not disabled. The new
	// generation expires at $5 or at the end, whichever is first.
	//
	// Under READ COMMITTED a concurrent UPDATE of the same row makes this
	// one wait for it to commit and then re-evaluate the WHERE clause on
	// the new row version, where generation = $3 (or revoked_at IS NULL,
	// after DisableUser or a replay revoked it) no longer holds: of any
	// number of concurrent calls, exactly one updates the row, and none
	// after DisableUser's revocation of the row. (A rotation that updates
	// the row first makes DisableUser's revoking UPDATE wait for it and
	// then revoke the new version.) Under SERIALIZABLE the loser gets a
	// serialization failure instead and runs again (see Store.run).
	//
	// The rotated row comes back with its user's userColumns, read in the
	// statement's snapshot, so that the caller minting the successor's
	// access token needs no second round trip. The join is LEFT so that a
	// rotation never commits without its row coming back (a user cannot be
	// missing, the family's foreign key keeps it; were it, the NULLs would
	// fail the scan).
	rotateFamilySQL = `WITH rotated AS (UPDATE refresh_families f
	SET generation = generation + 1, issued_at = $4,
	    expires_at = CASE WHEN f.ends_at < $5 THEN f.ends_at ELSE $5 END,
	    rotated_at = $4
	WHERE f.project_id = $1 AND f.id = $2 AND f.generation = $3
	  AND f.revoked_at IS NULL AND f.expires_at > $4 AND (f.ends_at IS NULL OR f.ends_at > $4)
	  AND NOT EXISTS (SELECT 1 FROM users u
	    WHERE u.project_id = f.project_id AND u.id = f.user_id AND u.disabled_at IS NOT NULL)
	RETURNING ` + familyColumns + `)
	SELECT rotated.*, u.* FROM rotated LEFT JOIN LATERAL (SELECT ` + userColumns + ` FROM users
	  WHERE project_id = rotated.project_id AND id = rotated.user_id) u ON true`
	// revokeFamilySQL changes only an unrevoked family, so that a second
	// revocation keeps the first time and adds no feed item.
	revokeFamilySQL = `UPDATE refresh_families SET revoked_at = $3
	WHERE project_id = $1 AND id = $2 AND revoked_at IS NULL`
	familyExistsSQL = `SELECT EXISTS (SELECT 1 FROM refresh_families WHERE project_id = $1 AND id = $2)`

	// scheduleSessionEndSQL schedules a family's EndsAt in the feed (ON
	// CONFLICT: a second call before it is due adds nothing), notifies
	// the feed's watchers, and reads whether the family exists.
	scheduleSessionEndSQL = `WITH f AS (
	  SELECT project_id, id, ends_at FROM refresh_families WHERE project_id = $1 AND id = $2
	), item AS (
	  INSERT INTO scheduled_revocations (project_id, due_at, subject, kind)
	  SELECT project_id, ends_at, id, '` + string(store.RevokedSession) + `' FROM f WHERE ends_at IS NOT NULL
	  ON CONFLICT DO NOTHING
	)
	SELECT EXISTS (SELECT 1 FROM f) FROM pg_notify('` + revocationChannel + `', $1)`

	// pruneFamiliesSQL runs on refresh_families_revoked_at and
	// refresh_families_ends_at and reads the table for the expiry test
	// (see the migration).
	pruneFamiliesSQL = `DELETE FROM refresh_families
	WHERE revoked_at < $1 OR expires_at < $1 OR ends_at < $1`
)

// CreateRefreshFamily records f, which starts a session, while
// passwordHash is the user's hash. It returns an error matching
// store.ErrInvalid when store.CheckFamilyStart refuses f or passwordHash,
// store.ErrNotFound for an unknown project or user, store.ErrDisabled for a
// disabled user and store.ErrConflict for an existing id or a hash that is
// no longer passwordHash. See createFamilySQL for how it stays consistent
// with a concurrent DisableUser or password reset.
func (s *Store) CreateRefreshFamily(ctx context.Context, f store.RefreshFamily, passwordHash string) error {
	const op = "create refresh family"
	// The loop runs again only if the user was enabled, or its hash set
	// back, between the INSERT and the read that explains why it inserted
	// nothing.
	for range 3 {
		n, err := s.execCount(ctx, op, createFamilySQL, f.ProjectID, f.ID, f.UserID,
			dbTime(f.IssuedAt), dbTime(f.ExpiresAt), dbTime(f.CreatedAt), nullDBTime(f.EndsAt), passwordHash)
		if err != nil || n == 1 {
			return err
		}
		var disabled, sameHash bool
		err = s.read(ctx, op, func(q querier) error {
			return q.QueryRow(ctx, familyUserStateSQL, f.ProjectID, f.UserID, passwordHash).Scan(&disabled, &sameHash)
		})
		switch {
		case err != nil:
			return err // no row: store.ErrNotFound, an unknown project or user
		case disabled:
			return fmt.Errorf("postgres: %s: %w", op, store.ErrDisabled)
		case !sameHash:
			return fmt.Errorf("postgres: %s: the password hash changed: %w", op, store.ErrConflict)
		}
	}
	return fmt.Errorf("postgres: %s: the user changed during the call, try again", op)
}

// RotateRefresh exchanges generation gen of the family for its successor,
// as documented on [store.RefreshStore]. The exchange is a single
// conditional UPDATE ... RETURNING (see rotateFamilySQL), so it is atomic
// across every handle on the database without explicit locks; the same
// statement returns the family's user. When it changes no row, one read of
// the family classifies the call, in this order:
//
//   - no row: store.ErrNotFound;
//   - the user disabled: store.ErrDisabled;
//   - revoked: store.ErrRevoked;
//   - gen above the current generation: store.ErrNotFound;
//   - gen current (so expired or ended): store.ErrExpired;
//   - gen the predecessor of the current one, rotated no more than
//     p.ReuseWindow before p.Now: the current family with Reused true
//     and its user (read by GetUser), or store.ErrExpired if the current
//     generation has expired or the session ended;
//   - any other earlier gen: in one transaction the family is revoked at
//     p.Now and one store.RevokedSession item is added to the feed (unless
//     it was revoked meanwhile), and the error matches store.ErrReplayed.
//
// Every classification stays true once made, because a family only moves
// forward (the generation grows, a revocation stays). It returns
// store.ErrInvalid when store.CheckRotate refuses gen or p.
func (s *Store) RotateRefresh(ctx context.Context, projectID, familyID string, gen int64, p store.RotateParams) (store.Rotation, error) {
	const op = "rotate refresh"
	now := dbTime(p.Now)
	expires := dbTime(p.Now.Add(p.TTL))

	// The loop runs again only if the family appeared, or a concurrent
	// transaction holding its row rolled back, between the UPDATE and the
	// read: the read then finds gen current and valid.
	for range 3 {
		var f store.RefreshFamily
		var u userRow
		err := s.write(ctx, op, func(q querier) error {
			var err error
			f, _, err = scanFamilyRow(q.QueryRow(ctx, rotateFamilySQL, projectID, familyID, gen, now, expires), u.dest()...)
			return err
		})
		if err == nil {
			return store.Rotation{Family: f, User: u.user()}, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return store.Rotation{}, err
		}

		var rotatedAt time.Time
		var disabled bool
		err = s.read(ctx, op, func(q querier) error {
			var err error
			f, rotatedAt, err = scanFamilyRow(q.QueryRow(ctx, classifyFamilySQL, projectID, familyID), &disabled)
			return err
		})
		if err != nil {
			return store.Rotation{}, err
		}
		step, err := store.DecideRotation(store.RotationState{Family: f, RotatedAt: rotatedAt, UserDisabled: disabled}, gen, p)
		switch {
		case err != nil:
			return store.Rotation{}, check(op, err)
		case step == store.RotateNext:
			continue // the UPDATE above lost a race the read did not see
		case step == store.RotateReuse:
			u, err := s.GetUser(ctx, projectID, f.UserID)
			switch {
			case err != nil:
				return store.Rotation{}, err
			case u.Disabled():
				return store.Rotation{}, fmt.Errorf("postgres: %s: %w", op, store.ErrDisabled)
			}
			return store.Rotation{Family: f, Reused: true, User: u}, nil
		}
		// RotateReplay: an older generation, or the predecessor after the window.
		if err := s.revokeFamily(ctx, op, projectID, familyID, now); err != nil && !errors.Is(err, store.ErrNotFound) {
			return store.Rotation{}, err
		}
		return store.Rotation{}, fmt.Errorf("postgres: %s: generation %d of %d: %w", op, gen, f.Generation, store.ErrReplayed)
	}
	return store.Rotation{}, fmt.Errorf("postgres: %s: the family changed during the call, try again", op)
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
	return s.inTx(ctx, op, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, revokeFamilySQL, projectID, familyID, at)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return existsOrNotFound(ctx, tx, op, familyExistsSQL, projectID, familyID)
		}
		return addRevocation(ctx, tx, projectID, store.RevokedSession, familyID, at)
	})
}

// ScheduleSessionEnd schedules the family's EndsAt as a feed item of kind
// store.RevokedSession, in one statement that notifies the feed's
// watchers (see store.RefreshStore).
func (s *Store) ScheduleSessionEnd(ctx context.Context, projectID, familyID string) error {
	const op = "schedule session end"
	var found bool
	err := s.write(ctx, op, func(q querier) error {
		return q.QueryRow(ctx, scheduleSessionEndSQL, projectID, familyID).Scan(&found)
	})
	if err == nil && !found {
		err = notFound(op)
	}
	return err
}

// PruneRefreshFamilies deletes every family, of every project, revoked,
// expired or ended before before, in one statement, and returns how many it
// deleted.
func (s *Store) PruneRefreshFamilies(ctx context.Context, before time.Time) (int, error) {
	const op = "prune refresh families"
	return s.execCount(ctx, op, pruneFamiliesSQL, dbTime(before))
}

func scanFamily(row rowScanner) (store.RefreshFamily, error) {
	f, _, err := scanFamilyRow(row)
	return f, err
}

// scanFamilyRow scans familyColumns, then into extra: the family, and when
// its previous generation was rotated (the zero time at generation 0).
func scanFamilyRow(row rowScanner, extra ...any) (store.RefreshFamily, time.Time, error) {
	var f store.RefreshFamily
	var ends, rotated, revoked pgtype.Timestamptz
	dest := append([]any{&f.ProjectID, &f.ID, &f.UserID, &f.Generation,
		&f.IssuedAt, &f.ExpiresAt, &f.CreatedAt, &ends, &rotated, &revoked}, extra...)
	if err := row.Scan(dest...); err != nil {
		return store.RefreshFamily{}, time.Time{}, err
	}
	f.IssuedAt = f.IssuedAt.UTC()
	f.ExpiresAt = f.ExpiresAt.UTC()
	f.CreatedAt = f.CreatedAt.UTC()
	f.EndsAt = fromNullDBTime(ends)
	f.RevokedAt = fromNullDBTime(revoked)
	return f, fromNullDBTime(rotated), nil
}
