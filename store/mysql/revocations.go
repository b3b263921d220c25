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
// the same transaction, and raises the floor.
func insertRevocation(ctx context.Context, tx *sql.Tx, m mark, projectID string, kind store.RevocationKind, subject string, at time.Time) error {
	id := store.NewID(store.PrefixRevocation)
	placed := m.place(dbTime(at), id)
	if _, err := tx.ExecContext(ctx, insertRevocationSQL, projectID, id, string(kind), subject, placed); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, raiseFloorSQL, placed, id, projectID)
	return err
}

// ListRevocations returns at most req.Limit revocations of the project that
// sort strictly after req.After, in ascending (RevokedAt, ID) order with ids
// compared byte by byte, and whether more follow: a keyset query on
// revocations_keyset. An unknown project lists as empty.
func (s *Store) ListRevocations(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[store.Revocation], error) {
	const op = "list revocations"
	if err := checkList(projectID, req); err != nil {
		return paginate.Page[store.Revocation]{}, check(op, err)
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
	if err := store.CheckTime("before", before); err != nil {
		return 0, check(op, err)
	}
	return s.execCount(ctx, op, pruneSessionRevocationsSQL, dbTime(before))
}
