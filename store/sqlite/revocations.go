package sqlite

import (
	"context"
	"errors"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

const (
	// revocationTopSQL reads the newest position the project's feed has
	// ever had (pruned items included), the floor for new items.
	revocationTopSQL    = `SELECT revocation_top_at, revocation_top_id FROM projects WHERE id = ?`
	setRevocationTopSQL = `UPDATE projects SET revocation_top_at = ?, revocation_top_id = ? WHERE id = ?`
	insertRevocationSQL = `INSERT INTO revocations (project_id, revoked_at, id, kind, subject) VALUES (?, ?, ?, ?, ?)`
	// The keyset queries read the primary key (project_id, revoked_at, id)
	// from the cursor on.
	listRevocationsFirstSQL = `SELECT revoked_at, id, kind, subject FROM revocations
WHERE project_id = ? ORDER BY revoked_at, id LIMIT ?`
	listRevocationsAfterSQL = `SELECT revoked_at, id, kind, subject FROM revocations
WHERE project_id = ? AND (revoked_at, id) > (?, ?) ORDER BY revoked_at, id LIMIT ?`
	pruneSessionRevocationsSQL = `DELETE FROM revocations WHERE kind = 'session' AND revoked_at < ?`

	// Scheduled revocations (a roll's overlap) wait in
	// scheduled_revocations until they fall due; releaseDue moves them
	// into the feed.
	scheduleRevocationSQL   = `INSERT INTO scheduled_revocations (project_id, due_at, subject, kind) VALUES (?, ?, ?, ?)`
	unscheduleRevocationSQL = `DELETE FROM scheduled_revocations WHERE project_id = ? AND due_at = ? AND subject = ?`
	dueRevocationsSQL       = `SELECT due_at, subject, kind FROM scheduled_revocations
WHERE project_id = ? AND due_at <= ? ORDER BY due_at, subject`
	anyDueRevocationSQL   = `SELECT 1 FROM scheduled_revocations WHERE project_id = ? AND due_at <= ? LIMIT 1`
	releaseRevocationsSQL = `DELETE FROM scheduled_revocations WHERE project_id = ? AND due_at <= ?`
	nextRevocationSQL     = `SELECT min(due_at) FROM scheduled_revocations WHERE project_id = ?`
)

// addRevocation adds one item of kind about subject, revoked at the
// microsecond at, to the project's feed, inside the write transaction of
// the revocation itself. The item's RevokedAt is at, raised if needed so
// that it sorts after every item the feed has ever had (see floor): the
// floor is read and moved in the same transaction, and SQLite runs write
// transactions one at a time across every handle, so an item is never
// added before one that a reader has seen.
func (t *wtx) addRevocation(projectID string, kind store.RevocationKind, subject string, at int64) error {
	f, err := t.readFloor(revocationTopSQL, projectID)
	if err != nil {
		return err
	}
	// Scheduled items due by at go first, at their own times.
	if f, err = t.releaseDue(projectID, at, f); err != nil {
		return err
	}
	_, err = t.insertRevocation(projectID, f, kind, subject, at)
	return err
}

// insertRevocation adds one item after the floor f, moves the floor to it
// and returns the new floor.
func (t *wtx) insertRevocation(projectID string, f floor, kind store.RevocationKind, subject string, at int64) (floor, error) {
	id := store.NewID(store.PrefixRevocation)
	at = f.place(at, id)
	if _, err := t.exec(insertRevocationSQL, projectID, at, id, string(kind), subject); err != nil {
		return f, err
	}
	if _, err := t.exec(setRevocationTopSQL, at, id, projectID); err != nil {
		return f, err
	}
	f.raise(at, id)
	t.revoked = true
	return f, nil
}

// releaseDue moves the project's scheduled revocations due at or before
// at into its feed, in (time, subject) order, each at its time raised past
// the floor f if needed, and returns the floor after them.
func (t *wtx) releaseDue(projectID string, at int64, f floor) (floor, error) {
	type due struct {
		at            int64
		subject, kind string
	}
	var ds []due
	err := queryRows(t.conn, dueRevocationsSQL, func(st *sqlite.Stmt) error {
		ds = append(ds, due{at: st.ColumnInt64(0), subject: st.ColumnText(1), kind: st.ColumnText(2)})
		return nil
	}, projectID, at)
	if err != nil || len(ds) == 0 {
		return f, err
	}
	for _, d := range ds {
		if f, err = t.insertRevocation(projectID, f, store.RevocationKind(d.kind), d.subject, d.at); err != nil {
			return f, err
		}
	}
	_, err = t.exec(releaseRevocationsSQL, projectID, at)
	return f, err
}

// releaseDueNow moves the project's scheduled revocations that are due by
// the clock of this process into its feed; it writes only when one is.
func (s *Store) releaseDueNow(ctx context.Context, projectID string) error {
	now := dbTime(time.Now())
	err := s.readRow(ctx, anyDueRevocationSQL, func(*sqlite.Stmt) error { return nil }, projectID, now)
	if errors.Is(err, errNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.writeTx(ctx, func(t *wtx) error {
		f, err := t.readFloor(revocationTopSQL, projectID)
		if err != nil {
			return err
		}
		_, err = t.releaseDue(projectID, now, f)
		return err
	})
}

// NextScheduledRevocation returns the time of the project's earliest
// scheduled revocation that is not in its feed yet, or the zero time when
// there is none (see store.RevocationScheduler).
func (s *Store) NextScheduledRevocation(ctx context.Context, projectID string) (time.Time, error) {
	const op = "next scheduled revocation"
	var next time.Time
	err := s.readRow(ctx, nextRevocationSQL, func(st *sqlite.Stmt) error {
		next = columnNullTime(st, 0)
		return nil
	}, projectID)
	return next, wrap(op, err)
}

// ListRevocations returns at most req.Limit revocations of the project that
// sort strictly after req.After, in ascending (RevokedAt, ID) order with ids
// compared byte by byte, and whether more follow. An unknown project lists
// as empty.
func (s *Store) ListRevocations(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[store.Revocation], error) {
	const op = "list revocations"
	if err := s.releaseDueNow(ctx, projectID); err != nil {
		return paginate.Page[store.Revocation]{}, wrap(op, err)
	}
	query, args := listRevocationsFirstSQL, []any{projectID, req.Limit + 1}
	if !req.After.IsZero() {
		query, args = listRevocationsAfterSQL, []any{projectID, dbTime(req.After.CreatedAt), req.After.ID, req.Limit + 1}
	}
	items, err := readAll(ctx, s, query, func(st *sqlite.Stmt) (store.Revocation, error) {
		return store.Revocation{
			ID:        st.ColumnText(1),
			ProjectID: projectID,
			Kind:      store.RevocationKind(st.ColumnText(2)),
			Subject:   st.ColumnText(3),
			RevokedAt: columnTime(st, 0),
		}, nil
	}, args...)
	if err != nil {
		return paginate.Page[store.Revocation]{}, wrap(op, err)
	}
	return paginate.PageOf(items, req.Limit), nil
}

// PruneSessionRevocations deletes every revocation of kind
// store.RevokedSession, of every project, whose RevokedAt is before before,
// and returns how many it deleted. The feeds' floors stay, so no later item
// is placed before a pruned one.
func (s *Store) PruneSessionRevocations(ctx context.Context, before time.Time) (int, error) {
	const op = "prune session revocations"
	return s.prune(ctx, op, pruneSessionRevocationsSQL, dbTime(before))
}
