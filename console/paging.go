package console

import (
	"net/http"
	"net/url"
	"strconv"

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

// readPage reads the limit and cursor parameters of c's query by the list
// rules. For a malformed one it answers 400 with a link to the first page
// of page (keeping the parameters in keep) and reports false.
func (h *Handler) readPage(c *call, page string, keep url.Values) (paginate.Request, bool) {
	req, err := paginate.ParseQuery(c.r.URL.RawQuery)
	if err != nil {
		h.errorPageLink(c.w, c.r, http.StatusBadRequest, "Invalid page link",
			"The link's limit or cursor is not one the console made, so the console cannot tell which page to show. The list's first page works.",
			pageLink(page, keep), "Go to the first page")
		return paginate.Request{}, false
	}
	return req, true
}

// newPager returns the pager of a page of n items of page, read with req,
// whose last item is at last; keep holds the list's other parameters (its
// filters), which every link keeps, as it keeps a limit that is not the
// default.
func newPager(page string, keep url.Values, req paginate.Request, n int, hasMore bool, last paginate.Cursor) pager {
	p := pager{Count: n, Limit: req.Limit, HasMore: hasMore && n > 0}
	base := url.Values{}
	for k, vs := range keep {
		base[k] = vs
	}
	if req.Limit != paginate.DefaultLimit {
		base.Set("limit", strconv.Itoa(req.Limit))
	}
	if !req.After.IsZero() {
		p.First = pageLink(page, base)
	}
	if p.HasMore {
		next := url.Values{}
		for k, vs := range base {
			next[k] = vs
		}
		next.Set("cursor", last.String())
		p.Next = pageLink(page, next)
	}
	return p
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
