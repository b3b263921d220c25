package paginate

import (
	"testing"
	"time"
)

// benchCursor is a cursor as GET /v1/contacts hands it out.
var benchCursor = Cursor{
	ID:        "ct_01jd9x6x0k3v8m2q4r5t6w7y8z",
	CreatedAt: time.Date(2026, 11, 21, 10, 15, 30, 123456789, time.UTC),
}

func BenchmarkParseCursor(b *testing.B) {
	s := benchCursor.String()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseCursor(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCursorString(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if benchCursor.String() == "" {
			b.Fatal("empty cursor")
		}
	}
}

func BenchmarkNewResponse(b *testing.B) {
	items := make([]item, 25)
	for i := range items {
		items[i] = item{ID: benchCursor.ID, At: benchCursor.CreatedAt.Add(time.Duration(i) * time.Millisecond)}
	}
	page := Page[item]{Items: items, HasMore: true}
	req := Request{Limit: 25}
	b.ReportAllocs()
	for b.Loop() {
		if resp := NewResponse(page, req, view, cursorOf); resp.Pagination.NextCursor == "" {
			b.Fatal("no next cursor")
		}
	}
}

func BenchmarkAppendTime(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendTime(buf[:0], benchCursor.CreatedAt)
	}
}
