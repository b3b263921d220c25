package sqlite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestQueryPlans_UseIndexes checks that the lists of the second stage read
// an index from their cursor on, and that the Prune methods find their rows
// through an index: no query scans a whole table.
func TestQueryPlans_UseIndexes(t *testing.T) {
	t.Parallel()
	s := openFile(t, filepath.Join(t.TempDir(), "q.db"), nil)
	for _, q := range []struct {
		sql   string
		args  []any
		index string // an index the plan names
	}{
		{listUsersSQL + listUsersOrderSQL, []any{"p", 26}, "users_project_created (project_id=?)"},
		{listUsersSQL + listUsersAfterSQL + listUsersOrderSQL, []any{"p", 1, "x", 26},
			"users_project_created (project_id=? AND (created_at,id)>(?,?))"},
		{listUsersSQL + listUsersFromSQL + listUsersBeforeSQL + listUsersOrderSQL, []any{"p", "a", "b", 26},
			"(project_id=? AND email_norm>? AND email_norm<?)"},
		{listAuditSQL + listAuditOrderSQL, []any{"p", 26}, "audit_log_project (project_id=?)"},
		{listAuditSQL + listAuditBeforeSQL + listAuditOrderSQL, []any{"p", 1, "x", 26},
			"audit_log_project (project_id=? AND (at,id)<(?,?))"},
		{listAuditSQL + listAuditActionSQL + listAuditBeforeSQL + listAuditOrderSQL, []any{"p", "a", 1, "x", 26},
			"audit_log_action (project_id=? AND action=? AND (at,id)<(?,?))"},
		{listAuditSQL + listAuditTargetSQL + listAuditBeforeSQL + listAuditOrderSQL, []any{"p", "a", 1, "x", 26},
			"audit_log_target (project_id=? AND target=? AND (at,id)<(?,?))"},
		{listRevocationsFirstSQL, []any{"p", 26}, "PRIMARY KEY (project_id=?)"},
		{listRevocationsAfterSQL, []any{"p", 1, "x", 26}, "PRIMARY KEY (project_id=? AND (revoked_at,id)>(?,?))"},
		{pruneFamiliesSQL, []any{1}, "refresh_families_ends (ends_at<?)"},
		{pruneSessionRevocationsSQL, []any{1}, "revocations_kind_revoked (kind=? AND revoked_at<?)"},
		{pruneAuditSQL, []any{1}, "audit_log_at (at<?)"},
		{pruneConsoleSessionsSQL, []any{1, 2}, "console_sessions_created (created_at<?)"},
		{pruneThrottleSQL, []any{1}, "throttle_windows_reset (reset_at<?)"},
		{revokeUserFamiliesSQL, []any{1, "u", "p"}, "refresh_families_user (user_id=?)"},
	} {
		plan := queryPlan(t, s, q.sql, q.args...)
		require.Contains(t, plan, q.index, "%s\n=> %s", q.sql, plan)
		require.NotContains(t, plan, "SCAN", "%s\n=> %s", q.sql, plan)
		if strings.Contains(q.sql, "(created_at, id) >") || strings.Contains(q.sql, "(at, id) <") ||
			strings.Contains(q.sql, "(revoked_at, id) >") {
			require.NotContains(t, plan, "TEMP B-TREE", "a keyset page is read in index order: %s", q.sql)
		}
	}
}
