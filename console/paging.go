package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/paginate"
)

// pager is what a paged list shows under its table, by the list rules of
// package paginate: a page of at most limit items after a cursor, and a link
// to the next page while has_more is true.
type pager struct {
	// Count is the number of items on this page.
	Count int
	// Limit is the page size in effect.
	Limit int
	// HasMore reports that more items follow this page.
	HasMore bool
	// Next links to the next page; "" on the last one.
	Next string
	// First links to the first page; "" on the first one.
	First string
}

// listFailed answers the error of httpapi.ReadList for the list page: a
// malformed limit or cursor gets a 400 page with a link to the list's first
// page (keeping the parameters in keep); another error the failure page,
// with what the console was doing.
func (h *Handler) listFailed(c *call, page string, keep url.Values, doing string, err error) {
	if httpapi.BadPage(err) {
		h.errorPageLink(c.w, c.r, http.StatusBadRequest, "Invalid page link",
			"The link's limit or cursor is not one the console made, so the console cannot tell which page to show. The list's first page works.",
			pageLink(page, keep), "Go to the first page")
		return
	}
	h.fail(c.w, c.r, fmt.Errorf("console: %s: %w", doing, err))
}

// pagerOf returns the pager of p, a page of the list page read with req
// (paginate.ResponseOf gives its next cursor, from the position cursorOf
// gives its last item); keep holds the list's other parameters (its
// filters), which every link keeps, as it keeps a limit that is not the
// default.
func pagerOf[T any](page string, keep url.Values, req paginate.Request, p paginate.Page[T], cursorOf func(T) paginate.Cursor) pager {
	pg := paginate.ResponseOf(p, req, cursorOf).Pagination
	pr := pager{Count: len(p.Items), Limit: pg.Limit, HasMore: pg.HasMore}
	base := url.Values{}
	for k, vs := range keep {
		base[k] = vs
	}
	if req.Limit != paginate.DefaultLimit {
		base.Set("limit", strconv.Itoa(req.Limit))
	}
	if !req.After.IsZero() {
		pr.First = pageLink(page, base)
	}
	if pr.HasMore {
		next := url.Values{}
		for k, vs := range base {
			next[k] = vs
		}
		next.Set("cursor", pg.NextCursor)
		pr.Next = pageLink(page, next)
	}
	return pr
}

// pageLink returns page with the query q, leaving out empty values.
func pageLink(page string, q url.Values) string {
	v := url.Values{}
	for k, vs := range q {
		for _, s := range vs {
			if s != "" {
				v.Add(k, s)
			}
		}
	}
	if len(v) == 0 {
		return page
	}
	return page + "?" + v.Encode()
}
