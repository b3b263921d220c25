package postgres

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

const (
	auditColumns   = `id, occurred_at, actor, action, target, client_addr`
	appendAuditSQL = `INSERT INTO audit_log (project_id, ` + auditColumns + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7)`

	// The pieces of ListAudit's keyset query, see listAuditSQL; %s are
	// placeholders. It reads audit_log_newest, audit_log_action or
	// audit_log_target backwards from the cursor.
	listAuditBaseSQL   = `SELECT ` + auditColumns + ` FROM audit_log WHERE project_id = $1`
	listAuditActionSQL = ` AND action = %s`
	listAuditTargetSQL = ` AND target = %s`
	listAuditBeforeSQL = ` AND (occurred_at, id) < (%s, %s)`
	listAuditOrderSQL  = ` ORDER BY occurred_at DESC, id DESC LIMIT %s`

	pruneAuditSQL = `DELETE FROM audit_log WHERE occurred_at < $1`
)

// AppendAudit records e. It returns an error matching store.ErrInvalid when
// store.CheckAudit refuses e, store.ErrNotFound for an unknown project and
// store.ErrConflict for an existing id.
func (s *Store) AppendAudit(ctx context.Context, e store.AuditEntry) error {
	const op = "append audit"
	_, err := s.execCount(ctx, op, appendAuditSQL, e.ProjectID, e.ID, dbTime(e.At),
		e.Actor, e.Action, e.Target, e.ClientAddr)
	return err
}

// ListAudit returns at most req.Limit entries of the project that match f
// and sort strictly before req.After (or from the newest, for the zero
// cursor), newest first: descending (At, ID) order with ids compared byte by
// byte; and whether more follow. An unknown project lists as empty.
func (s *Store) ListAudit(ctx context.Context, projectID string, f store.AuditFilter, req paginate.Request) (paginate.Page[store.AuditEntry], error) {
	const op = "list audit"
	limit, fetch := pageSize(req)
	sql, args := listAuditSQL(projectID, f, req.After, fetch)
	return listPage(ctx, s, op, limit, sql, args, func(rows pgx.Rows) (store.AuditEntry, error) {
		e := store.AuditEntry{ProjectID: projectID}
		err := rows.Scan(&e.ID, &e.At, &e.Actor, &e.Action, &e.Target, &e.ClientAddr)
		e.At = e.At.UTC()
		return e, err
	})
}

// listAuditSQL returns ListAudit's query and its arguments.
func listAuditSQL(projectID string, f store.AuditFilter, before paginate.Cursor, fetch int) (string, []any) {
	sql, args := listAuditBaseSQL, []any{projectID}
	ph := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.Action != "" {
		sql += fmt.Sprintf(listAuditActionSQL, ph(f.Action))
	}
	if f.Target != "" {
		sql += fmt.Sprintf(listAuditTargetSQL, ph(f.Target))
	}
	if !before.IsZero() {
		sql += fmt.Sprintf(listAuditBeforeSQL, ph(dbTime(before.CreatedAt)), ph(before.ID))
	}
	sql += fmt.Sprintf(listAuditOrderSQL, ph(fetch))
	return sql, args
}

// PruneAudit deletes every entry, of every project, whose At is before
// before, in one statement, and returns how many it deleted.
func (s *Store) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	const op = "prune audit"
	return s.execCount(ctx, op, pruneAuditSQL, dbTime(before))
}
