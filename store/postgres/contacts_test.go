package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres"
)

// listAll pages through the project's contacts with the given limit.
func listAll(t testing.TB, st store.ContactStore, project string, limit int) []store.Contact {
	t.Helper()
	var all []store.Contact
	req := paginate.Request{Limit: limit}
	for {
		page, err := st.ListContacts(context.Background(), project, req)
		require.NoError(t, err)
		all = append(all, page.Items...)
		if !page.HasMore {
			return all
		}
		last := page.Items[len(page.Items)-1]
		req.After = paginate.Cursor{ID: last.ID, CreatedAt: last.CreatedAt}
	}
}

func ids(cs []store.Contact) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

// TestContacts_ByteOrder checks that ids sharing a timestamp sort byte by
// byte (digits, upper case, '_', lower case, '~') whatever the database's
// collation: the test database uses an ICU collation when the server has
// one, under which "a" < "B" and punctuation sorts before letters.
func TestContacts_ByteOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t, newICUDatabase(t))
	mustProject(t, st, "p")
	cs := []store.Contact{
		{ID: "ct_~"}, {ID: "ct_b"}, {ID: "ct_B"}, {ID: "ct_a"}, {ID: "ct_Z"}, {ID: "ct_A"}, {ID: "ct_0"}, {ID: "ct__"},
	}
	for i := range cs {
		cs[i].ProjectID, cs[i].Name, cs[i].CreatedAt = "p", cs[i].ID, t0
	}
	require.NoError(t, st.CreateContacts(ctx, "p", cs))
	want := []string{"ct_0", "ct_A", "ct_B", "ct_Z", "ct__", "ct_a", "ct_b", "ct_~"}
	for _, limit := range []int{1, 2, 3, 100} {
		assert.Equal(t, want, ids(listAll(t, st, "p", limit)), "limit %d", limit)
	}
	// A cursor between two ids that a linguistic collation would order
	// differently.
	page, err := st.ListContacts(ctx, "p", paginate.Request{Limit: 2, After: paginate.Cursor{ID: "ct_Z", CreatedAt: t0}})
	require.NoError(t, err)
	assert.Equal(t, []string{"ct__", "ct_a"}, ids(page.Items))
	assert.True(t, page.HasMore)
}

// TestContacts_Placement checks the CreatedAt rule: a new contact sorts
// after every contact the project has had, raised by the least amount, and
// a deleted contact's position still counts (its cursor stays valid).
func TestContacts_Placement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t)
	mustProject(t, st, "p")
	mustProject(t, st, "q")
	create := func(id string, at time.Time) time.Time {
		t.Helper()
		c, err := st.CreateContact(ctx, store.Contact{ID: id, ProjectID: "p", Name: id, CreatedAt: at})
		require.NoError(t, err, "CreateContact(%s)", id)
		assert.Equal(t, time.UTC, c.CreatedAt.Location())
		return c.CreatedAt
	}
	base := store.Truncate(t0)
	assert.Equal(t, base, create("ct_m", t0), "first contact keeps its time, truncated")
	assert.Equal(t, base, create("ct_n", t0), "same time, greater id: kept")
	assert.Equal(t, base.Add(time.Microsecond), create("ct_a", t0), "same time, smaller id: one microsecond later")
	assert.Equal(t, base.Add(time.Microsecond), create("ct_z", t0.Add(-time.Hour)), "earlier time, greater id: the mark's time")
	assert.Equal(t, base.Add(time.Hour), create("ct_b", t0.Add(time.Hour)), "later time: kept")

	// Another project has its own mark.
	c, err := st.CreateContact(ctx, store.Contact{ID: "ct_a", ProjectID: "q", Name: "a", CreatedAt: t0.Add(-time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, base.Add(-time.Hour), c.CreatedAt)

	// Deleting the last contact does not lower the mark.
	require.NoError(t, st.DeleteContact(ctx, "p", "ct_b"))
	assert.Equal(t, base.Add(time.Hour+time.Microsecond), create("ct_0", t0))

	// The bulk path places each contact against the marks before the call;
	// contacts of one batch may share a time.
	require.NoError(t, st.CreateContacts(ctx, "p", []store.Contact{
		{ID: "ct_y", Name: "y", CreatedAt: t0},
		{ID: "ct_x", Name: "x", CreatedAt: t0},
		{ID: "ct_w", ProjectID: "p", Name: "w", CreatedAt: t0.Add(2 * time.Hour)},
	}))
	all := listAll(t, st, "p", 100)
	assert.Equal(t, []string{"ct_m", "ct_n", "ct_a", "ct_z", "ct_0", "ct_x", "ct_y", "ct_w"}, ids(all))
	// ct_x and ct_y sort after ct_0 by id, so they share its time.
	assert.Equal(t, base.Add(time.Hour+time.Microsecond), all[5].CreatedAt)
	assert.Equal(t, base.Add(time.Hour+time.Microsecond), all[6].CreatedAt)
	assert.Equal(t, base.Add(2*time.Hour), all[7].CreatedAt)
}

// TestCreateContacts_Atomic checks that a failing batch inserts nothing.
func TestCreateContacts_Atomic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.Check(newStore(t)) // as hosts use it: arguments checked
	mustProject(t, st, "p")
	_, err := st.CreateContact(ctx, store.Contact{ID: "ct_1", ProjectID: "p", Name: "n", CreatedAt: t0})
	require.NoError(t, err)

	batch := func(ids ...string) []store.Contact {
		cs := make([]store.Contact, len(ids))
		for i, id := range ids {
			cs[i] = store.Contact{ID: id, Name: "n", CreatedAt: t0}
		}
		return cs
	}
	assert.ErrorIs(t, st.CreateContacts(ctx, "p", batch("ct_2", "ct_1")), store.ErrConflict, "existing id")
	assert.ErrorIs(t, st.CreateContacts(ctx, "p", batch("ct_2", "ct_3", "ct_2")), store.ErrConflict, "id twice")
	assert.ErrorIs(t, st.CreateContacts(ctx, "p", batch("ct_2", "")), store.ErrInvalid, "empty id")
	assert.ErrorIs(t, st.CreateContacts(ctx, "p", batch("ct_2", "ct_\x00")), store.ErrInvalid, "NUL in id")
	assert.ErrorIs(t, st.CreateContacts(ctx, "nope", batch("ct_2")), store.ErrNotFound, "unknown project")
	assert.ErrorIs(t, st.CreateContacts(ctx, "nope", nil), store.ErrNotFound, "unknown project, empty batch")
	assert.NoError(t, st.CreateContacts(ctx, "p", nil), "empty batch")
	other := batch("ct_2")
	other[0].ProjectID = "q"
	assert.ErrorIs(t, st.CreateContacts(ctx, "p", other), store.ErrInvalid, "contact of another project")
	assert.Equal(t, []string{"ct_1"}, ids(listAll(t, st, "p", 10)))
}

// TestContacts_ConcurrentPaging runs inserters on two pools (two
// instances) with random, often past, creation times while a reader pages
// through the list: every contact is seen exactly once, in order, because
// the per-project lock places each new contact after every earlier one.
func TestContacts_ConcurrentPaging(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b, _ := newShared(t)
	mustProject(t, a, "p")
	const writers, perWriter = 4, 40
	var created sync.Map
	var wg sync.WaitGroup
	var done atomic.Bool
	for w := range writers {
		st := []*postgres.Store{a, b}[w%2]
		wg.Go(func() {
			for i := range perWriter {
				id := fmt.Sprintf("ct_%d_%03d", w, i)
				at := time.Now().Add(-time.Duration(rand.IntN(1000)) * time.Millisecond)
				c, err := st.CreateContact(ctx, store.Contact{ID: id, ProjectID: "p", Name: id, CreatedAt: at})
				if !assert.NoError(t, err) {
					return
				}
				created.Store(id, c)
			}
		})
	}
	go func() { wg.Wait(); done.Store(true) }()

	seen := map[string]bool{}
	var last paginate.Cursor
	for {
		finished := done.Load() // read before the page, so a final empty page is final
		page, err := b.ListContacts(ctx, "p", paginate.Request{Limit: 3, After: last})
		require.NoError(t, err)
		for _, c := range page.Items {
			require.False(t, seen[c.ID], "contact %s listed twice", c.ID)
			seen[c.ID] = true
			cur := paginate.Cursor{ID: c.ID, CreatedAt: c.CreatedAt}
			if !last.IsZero() {
				require.True(t, c.CreatedAt.After(last.CreatedAt) ||
					(c.CreatedAt.Equal(last.CreatedAt) && c.ID > last.ID), "order")
			}
			last = cur
		}
		if len(page.Items) == 0 {
			if finished {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	assert.Len(t, seen, writers*perWriter, "every contact seen once")
}

// TestContacts_ListArguments covers list edge cases.
func TestContacts_ListArguments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.Check(newStore(t)) // as hosts use it: arguments checked
	page, err := st.ListContacts(ctx, "nope", paginate.Request{Limit: 10})
	require.NoError(t, err, "unknown project lists as empty")
	assert.NotNil(t, page.Items)
	assert.Empty(t, page.Items)
	assert.False(t, page.HasMore)

	_, err = st.ListContacts(ctx, "nope", paginate.Request{Limit: 0})
	assert.ErrorIs(t, err, store.ErrInvalid, "limit 0")
	_, err = st.ListContacts(ctx, "Not A Slug", paginate.Request{Limit: 1})
	assert.ErrorIs(t, err, store.ErrInvalid, "invalid project")
	_, err = st.ListContacts(ctx, "nope", paginate.Request{Limit: int(^uint(0) >> 1)})
	assert.NoError(t, err, "huge limit")

	mustProject(t, st, "p")
	_, err = st.CreateContact(ctx, store.Contact{ID: "ct_1", ProjectID: "p", Name: "bad \xff utf-8", CreatedAt: t0})
	assert.ErrorIs(t, err, store.ErrInvalid, "invalid UTF-8 name")
	_, err = st.CreateContact(ctx, store.Contact{ID: "ct_1", ProjectID: "nope", Name: "n", CreatedAt: t0})
	assert.ErrorIs(t, err, store.ErrNotFound, "unknown project")
	assert.ErrorIs(t, st.DeleteContact(ctx, "p", "ct_1"), store.ErrNotFound)
}
