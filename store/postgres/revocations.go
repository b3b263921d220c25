package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

const (
	// lockFeedSQL locks the project row for the rest of the revoking
	// transaction and reads the floor of its feed. Every revoking
	// transaction of the project takes this lock before adding its item,
	// so the items of one project are placed, and commit, one after the
	// other in position order, whichever instance adds them: a reader that
	// has seen an item never later sees an item placed before it. FOR NO
	// KEY UPDATE does not block the foreign-key checks of other writes to
	// the project.
	lockFeedSQL = `SELECT revocations_last_at, revocations_last_id
	FROM projects WHERE id = $1 FOR NO KEY UPDATE`
	// addRevocationSQL inserts the item, raises the floor to it, and
	// queues the notification that the watchers of every instance receive
	// when the transaction commits (see watch.go).
	addRevocationSQL = `WITH item AS (
	  INSERT INTO revocations (project_id, id, kind, subject, revoked_at) VALUES ($1, $2, $3, $4, $5)
	), floor AS (
	  UPDATE projects SET revocations_last_at = $5, revocations_last_id = $2 WHERE id = $1
	)
	SELECT pg_notify('` + revocationChannel + `', $1)`

	listRevocationsFirstSQL = `SELECT id, kind, subject, revoked_at FROM revocations
	WHERE project_id = $1
	ORDER BY revoked_at, id LIMIT $2`
	listRevocationsAfterSQL = `SELECT id, kind, subject, revoked_at FROM revocations
	WHERE project_id = $1 AND (revoked_at, id) > ($2, $3)
	ORDER BY revoked_at, id LIMIT $4`

	pruneSessionRevocationsSQL = `DELETE FROM revocations
	WHERE kind = '` + string(store.RevokedSession) + `' AND revoked_at < $1`

	// Scheduled revocations (a roll's overlap) wait in
	// scheduled_revocations until they fall due; releaseDue moves them
	// into the feed under the feed's lock. Scheduling one notifies the
	// watchers, so that a waiting feed learns the new time.
	scheduleRevocationSQL = `WITH item AS (
	  INSERT INTO scheduled_revocations (project_id, due_at, subject, kind) VALUES ($1, $2, $3, $4)
	)
	SELECT pg_notify('` + revocationChannel + `', $1)`
	unscheduleRevocationSQL = `DELETE FROM scheduled_revocations WHERE project_id = $1 AND due_at = $2 AND subject = $3`
	releaseDueSQL           = `WITH due AS (
	  DELETE FROM scheduled_revocations WHERE project_id = $1 AND due_at <= $2 RETURNING due_at, subject, kind
	)
	SELECT due_at, subject, kind FROM due ORDER BY due_at, subject`
	anyDueSQL        = `SELECT EXISTS (SELECT 1 FROM scheduled_revocations WHERE project_id = $1 AND due_at <= $2)`
	nextScheduledSQL = `SELECT min(due_at) FROM scheduled_revocations WHERE project_id = $1`
)

// addRevocation adds one item to the project's feed within tx, the revoking
// transaction: it locks the project row, places the item at at raised past
// the floor (see mark.place), and queues the notification. pgx.ErrNoRows
// means that the project does not exist.
func addRevocation(ctx context.Context, tx pgx.Tx, projectID string, kind store.RevocationKind, subject string, at time.Time) error {
	m, err := lockFeed(ctx, tx, projectID)
	if err != nil {
		return err
	}
	return insertRevocation(ctx, tx, m, projectID, kind, subject, at)
}

// lockFeed locks the project row for the rest of tx and returns the floor
// of its feed.
func lockFeed(ctx context.Context, tx pgx.Tx, projectID string) (mark, error) {
	var at pgtype.Timestamptz
	var id pgtype.Text
	if err := tx.QueryRow(ctx, lockFeedSQL, projectID).Scan(&at, &id); err != nil {
		return mark{}, err
	}
	return markOf(at, id), nil
}

// insertRevocation adds the item after m, the floor lockFeed returned in
// the same transaction.
// Scheduled items due by at are placed first, at their own times.
func insertRevocation(ctx context.Context, tx pgx.Tx, m mark, projectID string, kind store.RevocationKind, subject string, at time.Time) error {
	m, err := releaseDue(ctx, tx, m, projectID, at)
	if err != nil {
		return err
	}
	_, err = placeRevocation(ctx, tx, m, projectID, kind, subject, at)
	return err
}

// placeRevocation adds the item after m and returns the floor after it.
func placeRevocation(ctx context.Context, tx pgx.Tx, m mark, projectID string, kind store.RevocationKind, subject string, at time.Time) (mark, error) {
	id := store.NewID(store.PrefixRevocation)
	pos := m.place(dbTime(at), id)
	if _, err := tx.Exec(ctx, addRevocationSQL, projectID, id, string(kind), subject, pos); err != nil {
		return m, err
	}
	return mark{at: pos, id: id, set: true}, nil
}

// releaseDue moves the project's scheduled revocations due at or before at
// into its feed, in (time, subject) order, each at its time raised past the
// floor m if needed, and returns the floor after them. The caller holds the
// feed's lock (lockFeed).
func releaseDue(ctx context.Context, tx pgx.Tx, m mark, projectID string, at time.Time) (mark, error) {
	type due struct {
		at            time.Time
		subject, kind string
	}
	rows, err := tx.Query(ctx, releaseDueSQL, projectID, dbTime(at))
	if err != nil {
		return m, err
	}
	ds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (due, error) {
		var d due
		err := r.Scan(&d.at, &d.subject, &d.kind)
		return d, err
	})
	if err != nil {
		return m, err
	}
	for _, d := range ds {
		if m, err = placeRevocation(ctx, tx, m, projectID, store.RevocationKind(d.kind), d.subject, d.at); err != nil {
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
		return q.QueryRow(ctx, anyDueSQL, projectID, now).Scan(&due)
	}); err != nil || !due {
		return err
	}
	return s.inTx(ctx, op, func(tx pgx.Tx) error {
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
// there is none (see store.RevocationScheduler).
func (s *Store) NextScheduledRevocation(ctx context.Context, projectID string) (time.Time, error) {
	const op = "next scheduled revocation"
	var next pgtype.Timestamptz
	err := s.read(ctx, op, func(q querier) error {
		return q.QueryRow(ctx, nextScheduledSQL, projectID).Scan(&next)
	})
	return fromNullDBTime(next), err
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
	sql, args := listRevocationsFirstSQL, []any{projectID, fetch}
	if !req.After.IsZero() {
		sql, args = listRevocationsAfterSQL, []any{projectID, dbTime(req.After.CreatedAt), req.After.ID, fetch}
	}
	return listPage(ctx, s, op, limit, sql, args, func(rows pgx.Rows) (store.Revocation, error) {
		r := store.Revocation{ProjectID: projectID}
		var kind string
		err := rows.Scan(&r.ID, &kind, &r.Subject, &r.RevokedAt)
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
