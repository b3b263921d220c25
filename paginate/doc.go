// Package paginate parses the limit and cursor parameters shared by every
// Latchkey list endpoint and shapes the page they return.
//
// Every list is ordered ascending by (created_at, id), ids compared byte by
// byte. A client asks for the first page without a cursor, then passes back
// pagination.next_cursor unchanged while pagination.has_more is true.
//
// # Cursor
//
// A cursor is the position of the last item of a page,
// "<last_item_id>:<created_at>", with the time in RFC 3339 UTC with exactly
// six fractional digits, for example "ct_0a1b2c:2026-11-21T10:15:30.123456Z".
// It is produced by [Cursor.String] and parsed by [ParseCursor]; nothing else
// in Latchkey builds or takes one apart.
//
// # Usage
//
//	req, err := paginate.ParseQuery(r.URL.RawQuery)
//	if err != nil {
//		// err matches ErrInvalidLimit or ErrInvalidCursor: answer 400.
//	}
//	page, err := contacts.ListContacts(ctx, project, req)
//	resp := paginate.NewResponse(page, req,
//		func(c store.Contact) contactJSON { return contactJSON{c.ID, c.Name, c.CreatedAt} },
//		func(c store.Contact) paginate.Cursor {
//			return paginate.Cursor{ID: c.ID, CreatedAt: c.CreatedAt}
//		})
//
// [ResponseOf] shapes the same response around the page's own items, for an
// endpoint that shows them as they are or encodes them itself.
//
// The package depends only on the standard library (and internal/utcmicro,
// which formats the cursor's time), so store and handler packages alike can
// depend on it.
package paginate
