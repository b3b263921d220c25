package console

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// auditActions are the actions of the audit log, in the order the filter
// offers them, with what the log page calls them.
var auditActions = []struct{ Action, Label string }{
	{store.ActionSignIn, "Console sign-in"},
	{store.ActionSignInFailed, "Console sign-in failed"},
	{store.ActionSignOut, "Console sign-out"},
	{store.ActionAPIKeyCreate, "API key created"},
	{store.ActionAPIKeyRevoke, "API key revoked"},
	{store.ActionAPIKeyRoll, "API key rolled"},
	{store.ActionSigningCreate, "Signing key created"},
	{store.ActionSigningRotate, "Signing key rotated"},
	{store.ActionSigningRetire, "Signing key retired"},
	{store.ActionUserCreate, "User created"},
	{store.ActionUserUpdate, "User changed"},
	{store.ActionUserPassword, "Password set"},
	{store.ActionUserDisable, "User disabled"},
	{store.ActionUserEnable, "User enabled"},
	{store.ActionSessionLogout, "Logout"},
	{store.ActionSessionReplayed, "Refresh token replayed"},
}

// actionLabel returns what the log page calls action: its label, or the
// action itself when it is not one of auditActions.
func actionLabel(action string) (string, bool) {
	for _, a := range auditActions {
		if a.Action == action {
			return a.Label, true
		}
	}
	return action, false
}

// auditData is the audit log page's data.
type auditData struct {
	// Entries are newest first.
	Entries []auditRow
	// Action and Target are the filters in effect ("" for none).
	Action, Target string
	// Actions are the choices of the action filter.
	Actions []actionOption
	Pager   pager
}

// actionOption is one choice of the action filter.
type actionOption struct {
	Value, Label string
	Selected     bool
}

// auditRow is one entry as the log page shows it.
type auditRow struct {
	store.AuditEntry
	// What names the action.
	What string
	// Who is the actor; Whom the target.
	Who, Whom who
	// ActionLink and TargetLink filter the log by the entry's action and
	// target.
	ActionLink, TargetLink string
}

// auditList serves GET audit?action=&target=&limit=&cursor=: the project's
// audit log, newest first, by the list rules of package paginate.
func (h *Handler) auditList(c *call) {
	q := c.r.URL.Query()
	f := store.AuditFilter{Action: q.Get("action"), Target: strings.TrimSpace(q.Get("target"))}
	if _, ok := actionLabel(f.Action); f.Action != "" && !ok {
		h.errorPageLink(c.w, c.r, http.StatusBadRequest, "Unknown action",
			"The audit log has no such action. Choose one from the list.", "audit", "Show the whole log")
		return
	}
	if f.Target != "" {
		if err := store.CheckID("target id", f.Target); err != nil {
			h.errorPageLink(c.w, c.r, http.StatusBadRequest, "Invalid target",
				argReason(err)+" A target is an id such as usr_… or key_….", "audit", "Show the whole log")
			return
		}
	}
	keep := url.Values{"action": {f.Action}, "target": {f.Target}}
	page, req, err := httpapi.ReadList(c.r, func(ctx context.Context, project string, req paginate.Request) (paginate.Page[store.AuditEntry], error) {
		return h.deps.AuditLog.ListAudit(ctx, project, f, req)
	})
	if err != nil {
		h.listFailed(c, "audit", keep, "listing the audit log", err)
		return
	}
	d := auditData{Action: f.Action, Target: f.Target}
	for _, a := range auditActions {
		d.Actions = append(d.Actions, actionOption{Value: a.Action, Label: a.Label, Selected: a.Action == f.Action})
	}
	n := h.newNamer(c)
	for _, e := range page.Items {
		what, _ := actionLabel(e.Action)
		row := auditRow{
			AuditEntry: e,
			What:       what,
			Who:        n.name(e.Actor, "Nobody signed in"),
			Whom:       n.name(e.Target, "—"),
			ActionLink: pageLink("audit", url.Values{"action": {e.Action}, "target": {f.Target}}),
		}
		if e.Target != "" {
			row.TargetLink = pageLink("audit", url.Values{"action": {f.Action}, "target": {e.Target}})
		}
		d.Entries = append(d.Entries, row)
	}
	d.Pager = pagerOf("audit", keep, req, page, auditCursor)
	h.render(c.w, c.r, http.StatusOK, pageAudit, h.page(c, "Audit log", "audit", d))
}

// auditCursor is the position of e in the audit log.
func auditCursor(e store.AuditEntry) paginate.Cursor {
	return paginate.Cursor{ID: e.ID, CreatedAt: e.At}
}
