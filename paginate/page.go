package paginate

// Page is what a store returns for a Request: at most Request.Limit items in
// list order, and whether more follow them.
type Page[T any] struct {
	// Items holds the page's items in ascending (created_at, id) order.
	Items []T
	// HasMore reports whether at least one item follows the last of Items.
	HasMore bool
}

// PageOf returns the page of at most limit items that starts items, where
// items was read asking for one item more than the page holds: HasMore
// reports whether that extra item was there.
func PageOf[T any](items []T, limit int) Page[T] {
	if len(items) > limit {
		return Page[T]{Items: items[:limit], HasMore: true}
	}
	return Page[T]{Items: items}
}

// Response is the JSON body of every list endpoint:
// {"data": [...], "pagination": {...}}.
type Response[T any] struct {
	// Data holds the page's items; it encodes as [] when empty, never null.
	Data []T `json:"data"`
	// Pagination describes the page.
	Pagination Pagination `json:"pagination"`
}

// Pagination is the pagination object of a list response.
type Pagination struct {
	// Limit is the page size in effect after defaulting and clamping.
	Limit int `json:"limit"`
	// HasMore is true while more pages follow.
	HasMore bool `json:"has_more"`
	// NextCursor is the cursor of the page's last item while HasMore is true,
	// and "" when it is false.
	NextCursor string `json:"next_cursor"`
}

// NewResponse shapes page as the list response for req, converting each item
// with view and taking the next cursor from the last item with cursorOf.
func NewResponse[T, V any](page Page[T], req Request, view func(T) V, cursorOf func(T) Cursor) Response[V] {
	resp := ResponseOf(page, req, cursorOf)
	data := make([]V, len(resp.Data))
	for i, it := range resp.Data {
		data[i] = view(it)
	}
	return Response[V]{Data: data, Pagination: resp.Pagination}
}

// ResponseOf is NewResponse for a page whose items are shown as they are:
// its data is page.Items itself, not a copy (an empty slice when nil).
func ResponseOf[T any](page Page[T], req Request, cursorOf func(T) Cursor) Response[T] {
	data := page.Items
	if data == nil {
		data = []T{}
	}
	p := Pagination{Limit: req.Limit, HasMore: page.HasMore && len(data) > 0}
	if p.HasMore {
		p.NextCursor = cursorOf(data[len(data)-1]).String()
	}
	return Response[T]{Data: data, Pagination: p}
}
