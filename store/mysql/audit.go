package mysql

import (
	"context"
	"time"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

const (
	auditColumns   = `id, occurred_at, actor, action, target, client_addr`
	appendAuditSQL = `INSERT INTO audit_log (project_id, ` + auditColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?)`
	pruneAuditSQL = `DELETE FROM audit_log WHERE occurred_at < ?`
)

// AppendAudit records e. It returns an error matching store.ErrInvalid when
// store.CheckAudit refuses e, store.ErrNotFound for an unknown project and
// store.ErrConflict for an existing id.
func (s *Store) AppendAudit(ctx context.Context, e store.AuditEntry) error {
	const op = "append audit"
	_, err := s.execCount(ctx, op, appendAuditSQL, e.ProjectID, e.ID, dbTime(e.At),
		[]byte(e.Actor), []byte(e.Action), []byte(e.Target), []byte(e.ClientAddr))
	return err
}

// ListAudit returns at most req.Limit entries of the project that match f
// and sort strictly before req.After (or from the newest, for the zero
// cursor), newest first: descending (At, ID) order with ids compared byte by
// byte; and whether more follow. It reads audit_log_newest,
// audit_log_action or audit_log_target backwards from the cursor. An unknown
// project lists as empty.
func (s *Store) ListAudit(ctx context.Context, projectID string, f store.AuditFilter, req paginate.Request) (paginate.Page[store.AuditEntry], error) {
	const op = "list audit"
	limit, fetch := pageSize(req)
	query, args := `SELECT `+auditColumns+` FROM audit_log WHERE project_id = ?`, []any{projectID}
	if f.Action != "" {
		query += ` AND action = ?`
		args = append(args, []byte(f.Action))
	}
	if f.Target != "" {
		query += ` AND target = ?`
		args = append(args, []byte(f.Target))
	}
	if !req.After.IsZero() {
		t := dbTime(req.After.CreatedAt)
		query += ` AND (occurred_at < ? OR (occurred_at = ? AND id < ?))`
		args = append(args, t, t, req.After.ID)
	}
	query += sprintf(` ORDER BY occurred_at DESC, id DESC LIMIT %d`, fetch)
	return listPage(ctx, s, op, limit, query, args, func(row rowScanner) (store.AuditEntry, error) {
		e := store.AuditEntry{ProjectID: projectID}
		err := row.Scan(&e.ID, &e.At, &e.Actor, &e.Action, &e.Target, &e.ClientAddr)
		e.At = e.At.UTC()
		return e, err
	})
}

// PruneAudit deletes every entry, of every project, whose At is before
// before, in one statement, and returns how many it deleted.
func (s *Store) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	const op = "prune audit"
	return s.execCount(ctx, op, pruneAuditSQL, dbTime(before))
}
