package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// keysetList is one keyset-paged list method (ListContacts, ListUsers,
// ListRevocations, ListAudit) bound to its arguments, so that the rules
// every such list shares are checked in one place: a page holds at most
// limit items, in the list's order, each strictly past the cursor, of the
// project asked for, with times in UTC at microsecond precision; a page
// with HasMore true is full (limit+1 look-ahead); Items is never nil.
type keysetList[T any] struct {
	// call names the method and its fixed arguments, for messages.
	call string
	// project is the project the items must belong to.
	project string
	list    func(t *testing.T, req paginate.Request) (paginate.Page[T], error)
	// pos is an item's position: the id and time a cursor naming it holds.
	pos func(T) paginate.Cursor
	// projectOf is an item's ProjectID.
	projectOf func(T) string
	// newestFirst is set for a list in descending order (the audit log):
	// its pages hold the items strictly before the cursor.
	newestFirst bool
}

// posLess reports whether position a sorts before b: by time, then by id
// byte by byte (Go compares strings byte by byte).
func posLess(a, b paginate.Cursor) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.Before(b.CreatedAt)
	}
	return a.ID < b.ID
}

// inListOrder returns a copy of items in the order of a keyset list whose
// positions pos gives: by time truncated to the stores' microseconds, then
// by id byte by byte; newest first when newestFirst is set.
func inListOrder[T any](items []T, pos func(T) paginate.Cursor, newestFirst bool) []T {
	out := slices.Clone(items)
	slices.SortFunc(out, func(a, b T) int {
		pa, pb := pos(a), pos(b)
		pa.CreatedAt, pb.CreatedAt = store.Truncate(pa.CreatedAt), store.Truncate(pb.CreatedAt)
		if newestFirst {
			pa, pb = pb, pa
		}
		switch {
		case posLess(pa, pb):
			return -1
		case posLess(pb, pa):
			return 1
		}
		return 0
	})
	return out
}

// idsOf returns the ids of items, in order.
func idsOf[T any](items []T, id func(T) string) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = id(it)
	}
	return ids
}

// precedes reports whether a comes before b in the list's order.
func (l keysetList[T]) precedes(a, b paginate.Cursor) bool {
	if l.newestFirst {
		return posLess(b, a)
	}
	return posLess(a, b)
}

func fmtPos(p paginate.Cursor) string {
	return fmt.Sprintf("(%s, %q)", p.CreatedAt.Format(time.RFC3339Nano), p.ID)
}

// textCursor is the cursor of position p after a trip through its text
// form, exactly as an HTTP client passes it back.
func textCursor(t *testing.T, p paginate.Cursor) paginate.Cursor {
	t.Helper()
	text := p.String()
	cur, err := paginate.ParseCursor(text)
	require.NoErrorf(t, err, "ParseCursor(%q)", text)
	return cur
}

// page reads one page and checks it.
func (l keysetList[T]) page(t *testing.T, req paginate.Request) paginate.Page[T] {
	t.Helper()
	what := fmt.Sprintf("%s with limit %d after %q", l.call, req.Limit, req.After.String())
	page, err := l.list(t, req)
	require.NoErrorf(t, err, "%s", what)
	require.NotNilf(t, page.Items, "%s: Items = nil, want a non-nil slice", what)
	require.LessOrEqualf(t, len(page.Items), req.Limit, "%s: items returned", what)
	if page.HasMore {
		require.Lenf(t, page.Items, req.Limit, "%s: HasMore true with a page that is not full (want limit+1 look-ahead)", what)
	}
	for i, item := range page.Items {
		p := l.pos(item)
		require.Equalf(t, l.project, l.projectOf(item), "%s: ProjectID of item %q", what, p.ID)
		require.Samef(t, time.UTC, p.CreatedAt.Location(), "%s: time of item %q is in %q, want UTC", what, p.ID, p.CreatedAt.Location())
		require.Truef(t, p.CreatedAt.Equal(store.Truncate(p.CreatedAt)), "%s: time of item %q = %s, finer than microseconds",
			what, p.ID, p.CreatedAt.Format(time.RFC3339Nano))
		if !req.After.IsZero() {
			require.Truef(t, l.precedes(req.After, p), "%s: item %s is not strictly past the cursor", what, fmtPos(p))
		}
		if i > 0 {
			prev := l.pos(page.Items[i-1])
			require.Truef(t, l.precedes(prev, p), "%s: item %s comes after %s, out of order", what, fmtPos(p), fmtPos(prev))
		}
	}
	return page
}

// walk pages through the whole list with page size limit, checking every
// page, and returns the items in the order seen. Each cursor goes through
// its text form. between, if not nil, runs after each page but the last,
// with the page number (from 1) and the page's last item.
func (l keysetList[T]) walk(t *testing.T, limit int, between func(page int, last T)) []T {
	t.Helper()
	var all []T
	req := paginate.Request{Limit: limit}
	for n := 1; ; n++ {
		require.LessOrEqualf(t, n, 100000, "%s did not reach the end", l.call)
		page := l.page(t, req)
		for _, item := range page.Items {
			if len(all) > 0 {
				prev := l.pos(all[len(all)-1])
				require.Truef(t, l.precedes(prev, l.pos(item)), "page %d of %s with limit %d repeats or goes back: %s after %s",
					n, l.call, limit, fmtPos(l.pos(item)), fmtPos(prev))
			}
			all = append(all, item)
		}
		if !page.HasMore {
			return all
		}
		last := page.Items[len(page.Items)-1]
		if between != nil {
			between(n, last)
		}
		req.After = textCursor(t, l.pos(last))
	}
}

// all returns the whole list in one walk with the largest page size.
func (l keysetList[T]) all(t *testing.T) []T {
	t.Helper()
	return l.walk(t, paginate.MaxLimit, nil)
}

func contactPos(c store.Contact) paginate.Cursor {
	return paginate.Cursor{ID: c.ID, CreatedAt: c.CreatedAt}
}

func userPos(u store.User) paginate.Cursor {
	return paginate.Cursor{ID: u.ID, CreatedAt: u.CreatedAt}
}

func revocationPos(r store.Revocation) paginate.Cursor {
	return paginate.Cursor{ID: r.ID, CreatedAt: r.RevokedAt}
}

func auditPos(e store.AuditEntry) paginate.Cursor {
	return paginate.Cursor{ID: e.ID, CreatedAt: e.At}
}

func contactList(s store.ContactStore, project string) keysetList[store.Contact] {
	return keysetList[store.Contact]{
		call:    fmt.Sprintf("ListContacts(%q)", project),
		project: project,
		list: func(t *testing.T, req paginate.Request) (paginate.Page[store.Contact], error) {
			return s.ListContacts(t.Context(), project, req)
		},
		pos:       contactPos,
		projectOf: func(c store.Contact) string { return c.ProjectID },
	}
}

func userList(s store.UserStore, project, emailPrefix string) keysetList[store.User] {
	return keysetList[store.User]{
		call:    fmt.Sprintf("ListUsers(%q, %q)", project, emailPrefix),
		project: project,
		list: func(t *testing.T, req paginate.Request) (paginate.Page[store.User], error) {
			return s.ListUsers(t.Context(), project, emailPrefix, req)
		},
		pos:       userPos,
		projectOf: func(u store.User) string { return u.ProjectID },
	}
}

func feedList(s store.RevocationStore, project string) keysetList[store.Revocation] {
	return keysetList[store.Revocation]{
		call:    fmt.Sprintf("ListRevocations(%q)", project),
		project: project,
		list: func(t *testing.T, req paginate.Request) (paginate.Page[store.Revocation], error) {
			return s.ListRevocations(t.Context(), project, req)
		},
		pos:       revocationPos,
		projectOf: func(r store.Revocation) string { return r.ProjectID },
	}
}

func auditList(s store.AuditStore, project string, f store.AuditFilter) keysetList[store.AuditEntry] {
	return keysetList[store.AuditEntry]{
		call:    fmt.Sprintf("ListAudit(%q, %+v)", project, f),
		project: project,
		list: func(t *testing.T, req paginate.Request) (paginate.Page[store.AuditEntry], error) {
			return s.ListAudit(t.Context(), project, f, req)
		},
		pos:         auditPos,
		projectOf:   func(e store.AuditEntry) string { return e.ProjectID },
		newestFirst: true,
	}
}
