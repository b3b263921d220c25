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
	id := store.NewID(store.PrefixRevocation)
	at = f.place(at, id)
	if _, err := t.exec(insertRevocationSQL, projectID, at, id, string(kind), subject); err != nil {
		return err
	}
	if _, err := t.exec(setRevocationTopSQL, at, id, projectID); err != nil {
		return err
	}
	t.revoked = true
	return nil
}

// ListRevocations returns at most req.Limit revocations of the project that
// sort strictly after req.After, in ascending (RevokedAt, ID) order with ids
// compared byte by byte, and whether more follow. An unknown project lists
// as empty.
func (s *Store) ListRevocations(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[store.Revocation], error) {
	const op = "list revocations"
	if err := errors.Join(store.CheckProjectID(projectID), store.CheckPage(req)); err != nil {
		return paginate.Page[store.Revocation]{}, check(op, err)
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
	if err := store.CheckTime("before", before); err != nil {
		return 0, check(op, err)
	}
	return s.prune(ctx, op, pruneSessionRevocationsSQL, dbTime(before))
}
