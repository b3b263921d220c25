package contacts

import (
	"time"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// item is a contact as the list shows it. created_at is encoded in
// [paginate.TimeLayout]: RFC 3339, UTC, exactly six fractional digits.
type item struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

// viewOf is the item shown for c.
func viewOf(c store.Contact) item {
	return item{ID: c.ID, Name: c.Name, CreatedAt: c.CreatedAt}
}

// cursorOf is the position of c in the list.
func cursorOf(c store.Contact) paginate.Cursor {
	return paginate.Cursor{ID: c.ID, CreatedAt: c.CreatedAt}
}
