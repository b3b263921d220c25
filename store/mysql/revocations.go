package mysql

import (
	"context"
	"database/sql"
	"time"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

const (
	// lockFeedSQL locks the project row for the rest of the revoking
	// transaction and reads the floor of its feed. Every revoking
	// transaction of the project takes this lock before adding its item,
	// so the items of one project are placed, and commit, one after the
	// other in position order, whichever instance adds them: a reader that
	// has seen an item never later sees an item placed before it.
	lockFeedSQL = `SELECT revocations_last_at, revocations_last_id
	FROM projects WHERE id = ? FOR UPDATE`
	insertRevocationSQL = `INSERT INTO revocations (project_id, id, kind, subject, revoked_at)
	VALUES (?, ?, ?, ?, ?)`
	// raiseFloorSQL raises the floor to the new item and counts it: the
	// revocation watchers of every instance poll the sum of the counts
	// (see watch.go).
	raiseFloorSQL = `UPDATE projects
	SET revocations_last_at = ?, revocations_last_id = ?, revocations_count = revocations_count + 1
	WHERE id = ?`

	listRevocationsSQL      = `SELECT id, kind, subject, revoked_at FROM revocations WHERE project_id = ?`
	listRevocationsAfterSQL = ` AND (revoked_at > ? OR (revoked_at = ? AND id > ?))`
	listRevocationsOrderSQL = ` ORDER BY revoked_at, id LIMIT %d`

	pruneSessionRevocationsSQL = `DELETE FROM revocations
	WHERE kind = '` + string(store.RevokedSession) + `' AND revoked_at < ?`

	// Scheduled revocations (a roll's overlap) wait in
	// scheduled_revocations (migration 0003) until they fall due;
	// releaseDue moves them into the feed under the feed's lock.
	// Scheduling one raises the project's count, so that the revocation
	// watchers wake and a waiting feed learns the new time.
	scheduleRevocationSQL = `INSERT INTO scheduled_revocations (project_id, due_at, subject, kind)
	VALUES (?, ?, ?, ?)`
	countFeedChangeSQL      = `UPDATE projects SET revocations_count = revocations_count + 1 WHERE id = ?`
	unscheduleRevocationSQL = `DELETE FROM scheduled_revocations WHERE project_id = ? AND due_at = ? AND subject = ?`
	// dueSQL reads, and locks, the items due; releaseDue deletes each by
	// its key (another transaction may schedule one due by then between
	// the two statements: READ COMMITTED takes no gap locks).
	dueSQL = `SELECT due_at, subject, kind FROM scheduled_revocations
	WHERE project_id = ? AND due_at <= ? ORDER BY due_at, subject FOR UPDATE`
	anyDueSQL        = `SELECT EXISTS (SELECT 1 FROM scheduled_revocations WHERE project_id = ? AND due_at <= ?)`
	nextScheduledSQL = `SELECT MIN(due_at) FROM scheduled_revocations WHERE project_id = ?`
)

// addRevocation adds one item to the project's feed within tx, the revoking
// transaction: it locks the project row and places the item at at raised
// past the floor (see mark.place). sql.ErrNoRows means that the project
// does not exist.
func addRevocation(ctx context.Context, tx *sql.Tx, projectID string, kind store.RevocationKind, subject string, at time.Time) error {
	m, err := lockFeed(ctx, tx, projectID)
	if err != nil {
		return err
	}
	return insertRevocation(ctx, tx, m, projectID, kind, subject, at)
}

// lockFeed locks the project row for the rest of tx and returns the floor
// of its feed.
func lockFeed(ctx context.Context, tx *sql.Tx, projectID string) (mark, error) {
	var at sql.NullTime
	var id sql.NullString
	if err := tx.QueryRowContext(ctx, lockFeedSQL, projectID).Scan(&at, &id); err != nil {
		return mark{}, err
	}
	return markOf(at, id), nil
}

// insertRevocation adds the item after m, the floor lockFeed returned in
// the same transaction, and raises the floor. Scheduled items due by at are
// placed first, at their own times.
func insertRevocation(ctx context.Context, tx *sql.Tx, m mark, projectID string, kind store.RevocationKind, subject string, at time.Time) error {
	m, err := releaseDue(ctx, tx, m, projectID, at)
	if err != nil {
		return err
	}
	_, err = placeRevocation(ctx, tx, m, projectID, kind, subject, at)
	return err
}

// placeRevocation adds the item after m, raises the floor to it and
// returns the new floor.
func placeRevocation(ctx context.Context, tx *sql.Tx, m mark, projectID string, kind store.RevocationKind, subject string, at time.Time) (mark, error) {
	id := store.NewID(store.PrefixRevocation)
	placed := m.place(dbTime(at), id)
	if _, err := tx.ExecContext(ctx, insertRevocationSQL, projectID, id, string(kind), subject, placed); err != nil {
		return m, err
	}
	if _, err := tx.ExecContext(ctx, raiseFloorSQL, placed, id, projectID); err != nil {
		return m, err
	}
	return mark{at: placed, id: id, set: true}, nil
}

// scheduleRevocation records a revocation of the feed due at due, within
// tx, which holds the feed's lock (lockFeed), and raises the project's
// count for the watchers.
func scheduleRevocation(ctx context.Context, tx *sql.Tx, projectID string, kind store.RevocationKind, subject string, due time.Time) error {
	if _, err := tx.ExecContext(ctx, scheduleRevocationSQL, projectID, due, subject, string(kind)); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, countFeedChangeSQL, projectID)
	return err
}

// releaseDue moves the project's scheduled revocations due at or before at
// into its feed, in (time, subject) order, each at its time raised past the
// floor m if needed, and returns the floor after them. The caller holds the
// feed's lock (lockFeed).
func releaseDue(ctx context.Context, tx *sql.Tx, m mark, projectID string, at time.Time) (mark, error) {
	type due struct {
		at            time.Time
		subject, kind string
	}
	rows, err := tx.QueryContext(ctx, dueSQL, projectID, dbTime(at))
	if err != nil {
		return m, err
	}
	var ds []due
	for rows.Next() {
		var d due
		if err := rows.Scan(&d.at, &d.subject, &d.kind); err != nil {
			rows.Close()
			return m, err
		}
		ds = append(ds, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return m, err
	}
	for _, d := range ds {
		if _, err := tx.ExecContext(ctx, unscheduleRevocationSQL, projectID, d.at, d.subject); err != nil {
			return m, err
		}
		if m, err = placeRevocation(ctx, tx, m, projectID, store.RevocationKind(d.kind), d.subject, d.at.UTC()); err != nil {
			return m, err
		}
	}
	return m, nil
}

// releaseDueNow moves the project's scheduled revocations that are due by
// the clock of this process into its feed; it writes only when one is.
func (s *Store) releaseDueNow(ctx context.Context, op, projectID string) error {
	now := dbTime(time.Now())
	var due bool
	if err := s.read(ctx, op, func(q querier) error {
		return q.QueryRowContext(ctx, anyDueSQL, projectID, now).Scan(&due)
	}); err != nil || !due {
		return err
	}
	return s.inTx(ctx, op, func(tx *sql.Tx) error {
		m, err := lockFeed(ctx, tx, projectID)
		if err != nil {
			return err
		}
		_, err = releaseDue(ctx, tx, m, projectID, now)
		return err
	})
}

// NextScheduledRevocation returns the time of the project's earliest
// scheduled revocation that is not in its feed yet, or the zero time when
// there is none (see store.RevocationStore). A roll raises the project's
// count, so the revocation watchers of every handle wake on it.
func (s *Store) NextScheduledRevocation(ctx context.Context, projectID string) (time.Time, error) {
	const op = "next scheduled revocation"
	var next sql.NullTime
	err := s.read(ctx, op, func(q querier) error {
		return q.QueryRowContext(ctx, nextScheduledSQL, projectID).Scan(&next)
	})
	return fromNull(next), err
}

// ListRevocations returns at most req.Limit revocations of the project that
// sort strictly after req.After, in ascending (RevokedAt, ID) order with ids
// compared byte by byte, and whether more follow: a keyset query on
// revocations_keyset. An unknown project lists as empty.
func (s *Store) ListRevocations(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[store.Revocation], error) {
	const op = "list revocations"
	if err := s.releaseDueNow(ctx, op, projectID); err != nil {
		return paginate.Page[store.Revocation]{}, err
	}
	limit, fetch := pageSize(req)
	query, args := listRevocationsSQL, []any{projectID}
	if !req.After.IsZero() {
		t := dbTime(req.After.CreatedAt)
		query += listRevocationsAfterSQL
		args = append(args, t, t, req.After.ID)
	}
	query += sprintf(listRevocationsOrderSQL, fetch)
	return listPage(ctx, s, op, limit, query, args, func(row rowScanner) (store.Revocation, error) {
		r := store.Revocation{ProjectID: projectID}
		var kind string
		err := row.Scan(&r.ID, &kind, &r.Subject, &r.RevokedAt)
		r.Kind = store.RevocationKind(kind)
		r.RevokedAt = r.RevokedAt.UTC()
		return r, err
	})
}

// PruneSessionRevocations deletes every revocation of kind
// store.RevokedSession, of every project, whose RevokedAt is before before,
// in one statement, and returns how many it deleted. The feed's floor stays,
// so later items still sort after the pruned ones.
func (s *Store) PruneSessionRevocations(ctx context.Context, before time.Time) (int, error) {
	const op = "prune session revocations"
	return s.execCount(ctx, op, pruneSessionRevocationsSQL, dbTime(before))
}
