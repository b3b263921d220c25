package sqlite

import (
	"context"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

const (
	appendAuditSQL = `INSERT INTO audit_log (id, project_id, at, actor, action, target, client_addr)
VALUES (?, ?, ?, ?, ?, ?, ?)`
	// The ListAudit query is listAuditSQL, then the conditions that apply
	// (an action, a target, a cursor), then listAuditOrderSQL: newest
	// first, read backwards from the cursor on the index of the filter
	// (audit_log_project, _action or _target).
	listAuditSQL       = `SELECT id, at, actor, action, target, client_addr FROM audit_log WHERE project_id = ?`
	listAuditActionSQL = ` AND action = ?`
	listAuditTargetSQL = ` AND target = ?`
	listAuditBeforeSQL = ` AND (at, id) < (?, ?)`
	listAuditOrderSQL  = ` ORDER BY at DESC, id DESC LIMIT ?`
	pruneAuditSQL      = `DELETE FROM audit_log WHERE at < ?`
)

// AppendAudit records e. It returns an error matching store.ErrInvalid when
// store.CheckAudit refuses e, store.ErrNotFound for an unknown project and
// store.ErrConflict for an existing id.
func (s *Store) AppendAudit(ctx context.Context, e store.AuditEntry) error {
	const op = "append audit"
	_, err := s.exec(ctx, appendAuditSQL, e.ID, e.ProjectID, dbTime(e.At), e.Actor, e.Action, e.Target, e.ClientAddr)
	return wrap(op, err)
}

// ListAudit returns at most req.Limit entries of the project that match f
// and sort strictly before req.After (or from the newest, for the zero
// cursor), in descending (At, ID) order with ids compared byte by byte, and
// whether more follow. An unknown project lists as empty.
func (s *Store) ListAudit(ctx context.Context, projectID string, f store.AuditFilter, req paginate.Request) (paginate.Page[store.AuditEntry], error) {
	const op = "list audit"
	query, args := listAuditSQL, []any{projectID}
	if f.Action != "" {
		query += listAuditActionSQL
		args = append(args, f.Action)
	}
	if f.Target != "" {
		query += listAuditTargetSQL
		args = append(args, f.Target)
	}
	if !req.After.IsZero() {
		query += listAuditBeforeSQL
		args = append(args, dbTime(req.After.CreatedAt), req.After.ID)
	}
	query += listAuditOrderSQL
	args = append(args, req.Limit+1)
	items, err := readAll(ctx, s, query, func(st *sqlite.Stmt) (store.AuditEntry, error) {
		return store.AuditEntry{
			ID:         st.ColumnText(0),
			ProjectID:  projectID,
			At:         columnTime(st, 1),
			Actor:      st.ColumnText(2),
			Action:     st.ColumnText(3),
			Target:     st.ColumnText(4),
			ClientAddr: st.ColumnText(5),
		}, nil
	}, args...)
	if err != nil {
		return paginate.Page[store.AuditEntry]{}, wrap(op, err)
	}
	return paginate.PageOf(items, req.Limit), nil
}

// PruneAudit deletes every entry, of every project, whose At is before
// before, and returns how many it deleted.
func (s *Store) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	const op = "prune audit"
	return s.prune(ctx, op, pruneAuditSQL, dbTime(before))
}
