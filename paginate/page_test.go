package paginate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/latchkey-dev/latchkey/paginate"
)

// PageOf keeps at most limit items, and HasMore says whether the read
// found the one item past them.
func TestPageOf(t *testing.T) {
	for _, tc := range []struct {
		items   []int
		limit   int
		want    []int
		hasMore bool
	}{
		{nil, 3, nil, false},
		{[]int{1, 2}, 3, []int{1, 2}, false},
		{[]int{1, 2, 3}, 3, []int{1, 2, 3}, false},
		{[]int{1, 2, 3, 4}, 3, []int{1, 2, 3}, true},
	} {
		p := paginate.PageOf(tc.items, tc.limit)
		assert.Equal(t, tc.want, p.Items, "items of %v, limit %d", tc.items, tc.limit)
		assert.Equal(t, tc.hasMore, p.HasMore, "has_more of %v, limit %d", tc.items, tc.limit)
	}
}
