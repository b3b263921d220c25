package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// TestListUsers_LiteralPrefix checks that a prefix matches literally: '%'
// and '_' (LIKE's wildcards) match only themselves, case does not matter,
// characters beyond ASCII bound the range correctly, and paging with a
// prefix returns every match once, in (CreatedAt, ID) order.
func TestListUsers_LiteralPrefix(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.Check(newStore(t)) // as hosts use it: arguments checked
	mustProject(t, st, "p")
	mustProject(t, st, "q")
	emails := []string{
		"a_b@example.com", "axb@example.com", "a%c@example.com", "abc@example.com",
		"Ann@Example.com", "ann.b@example.com", "anna@example.com", "ano@example.com",
		"zoé@example.com", "zoe@example.com", "zof@example.com", "zoê@example.com",
	}
	byEmail := map[string]store.User{}
	for i, e := range emails {
		u := store.User{ID: store.NewID(store.PrefixUser), ProjectID: "p", Email: e, PasswordHash: "h",
			CreatedAt: t0.Add(time.Duration(len(emails)-i) * time.Second)}
		require.NoError(t, st.CreateUser(ctx, u), e)
		byEmail[e] = u
	}
	mustUser(t, st, "q", "ann@example.com") // another project's

	list := func(prefix string, limit int) []string {
		t.Helper()
		var got []string
		req := paginate.Request{Limit: limit}
		for {
			page, err := st.ListUsers(ctx, "p", prefix, req)
			require.NoError(t, err)
			for i, u := range page.Items {
				got = append(got, u.Email)
				if i > 0 {
					prev := page.Items[i-1]
					require.True(t, prev.CreatedAt.Before(u.CreatedAt) || prev.CreatedAt.Equal(u.CreatedAt) && prev.ID < u.ID, "order")
				}
			}
			if !page.HasMore {
				return got
			}
			last := page.Items[len(page.Items)-1]
			req.After = paginate.Cursor{ID: last.ID, CreatedAt: last.CreatedAt}
		}
	}
	// Users were created newest first, so the list is the reverse of emails.
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"a_", []string{"a_b@example.com"}},
		{"a%", []string{"a%c@example.com"}},
		{"ANN", []string{"anna@example.com", "ann.b@example.com", "Ann@Example.com"}},
		{"  ann", []string{"anna@example.com", "ann.b@example.com", "Ann@Example.com"}},
		{"ann@", []string{"Ann@Example.com"}},
		{"zo", []string{"zoê@example.com", "zof@example.com", "zoe@example.com", "zoé@example.com"}},
		{"zoé", []string{"zoé@example.com"}},
		{"zoe", []string{"zoe@example.com"}},
		{"nobody", nil},
		{"", reverse(emails)},
	} {
		for _, limit := range []int{1, 2, 100} {
			assert.Equal(t, tc.want, list(tc.prefix, limit), "prefix %q, limit %d", tc.prefix, limit)
		}
	}

	page, err := st.ListUsers(ctx, "nope", "", paginate.Request{Limit: 5})
	require.NoError(t, err, "an unknown project lists as empty")
	assert.Empty(t, page.Items)
	_, err = st.ListUsers(ctx, "p", "", paginate.Request{})
	assert.ErrorIs(t, err, store.ErrInvalid, "limit 0")
}

func reverse(s []string) []string {
	r := make([]string, len(s))
	for i, v := range s {
		r[len(s)-1-i] = v
	}
	return r
}
