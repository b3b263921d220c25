package mysql_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/mysql/mytest"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 123456000, time.UTC)

func mustProject(t testing.TB, st store.ProjectStore, id string) {
	t.Helper()
	require.NoError(t, st.CreateProject(context.Background(), store.Project{ID: id, CreatedAt: t0}))
}

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
// byte (digits, upper case, '_', lower case, '~') on a database whose
// default collation is case-insensitive (utf8mb4_general_ci, under which
// "ct_a" < "ct_B"), and that a cursor between such ids keeps that order.
func TestContacts_ByteOrder(t *testing.T) {
	ctx := context.Background()
	url := mytest.NewDatabase(t)
	name := dbName(t, url)
	require.NoError(t, mytest.Exec(mytest.AdminURL(t), "ALTER DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"))
	st := openStore(t, url)
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
	// "ct_B" sorts before "ct_a" byte by byte; a case-insensitive
	// collation would put "ct_a" first.
	page, err := st.ListContacts(ctx, "p", paginate.Request{Limit: 2, After: paginate.Cursor{ID: "ct_B", CreatedAt: t0}})
	require.NoError(t, err)
	assert.Equal(t, []string{"ct_Z", "ct__"}, ids(page.Items))
	assert.True(t, page.HasMore)
	_, checked, err := st.ListContactsChecked(ctx, "p", store.TokenRecordIDs{}, paginate.Request{Limit: 3, After: paginate.Cursor{ID: "ct_B", CreatedAt: t0}})
	require.NoError(t, err)
	assert.Equal(t, []string{"ct_Z", "ct__", "ct_a"}, ids(checked.Items), "ListContactsChecked")
}

// TestContacts_Placement checks the CreatedAt rule: a new contact sorts
// after every contact the project has had, raised by the least amount, and
// a deleted contact's position still counts.
func TestContacts_Placement(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, mytest.NewDatabase(t))
	mustProject(t, st, "p")
	create := func(id string, at time.Time) time.Time {
		c, err := st.CreateContact(ctx, store.Contact{ID: id, ProjectID: "p", Name: id, CreatedAt: at})
		require.NoError(t, err)
		return c.CreatedAt
	}
	assert.Equal(t, t0, create("ct_m", t0))
	assert.Equal(t, t0, create("ct_n", t0), "a greater id at the same time keeps the time")
	assert.Equal(t, t0.Add(time.Microsecond), create("ct_a", t0), "a smaller id is raised by 1 µs")
	assert.Equal(t, t0.Add(time.Microsecond), create("ct_b", t0.Add(-time.Hour)), "an earlier time is raised to the mark")
	require.NoError(t, st.DeleteContact(ctx, "p", "ct_b"))
	assert.Equal(t, t0.Add(2*time.Microsecond), create("ct_a2", t0), "a deleted contact's position still counts")
}

func dbName(t testing.TB, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	name := strings.TrimPrefix(u.Path, "/")
	require.Regexp(t, "^"+mytest.DatabasePrefix+"[0-9a-f]+$", name)
	return name
}
