package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/tenant"
)

func TestReadList(t *testing.T) {
	var called struct {
		project string
		req     paginate.Request
		n       int
	}
	list := func(_ context.Context, project string, req paginate.Request) (paginate.Page[string], error) {
		called.project, called.req = project, req
		called.n++
		return paginate.Page[string]{Items: []string{"a"}, HasMore: true}, nil
	}
	get := func(target, project string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		if project != "" {
			r = r.WithContext(tenant.NewContext(r.Context(), project))
		}
		return r
	}

	t.Run("page", func(t *testing.T) {
		page, req, err := ReadList(get("/v1/things?limit=7", "acme"), list)
		require.NoError(t, err)
		assert.Equal(t, paginate.Request{Limit: 7}, req)
		assert.Equal(t, []string{"a"}, page.Items)
		assert.True(t, page.HasMore)
		assert.Equal(t, "acme", called.project)
		assert.Equal(t, req, called.req)
	})

	called.n = 0
	for _, tc := range []struct {
		name, query, code string
	}{
		{"bad limit", "limit=0", problem.CodeInvalidParameter},
		{"limit twice", "limit=1&limit=2", problem.CodeInvalidParameter},
		{"bad cursor", "cursor=nope", problem.CodeInvalidCursor},
		{"malformed cursor pair", "cursor=%zz", problem.CodeInvalidCursor},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadList(get("/v1/things?"+tc.query, "acme"), list)
			var pe *problem.Error
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, http.StatusBadRequest, pe.Status)
			assert.Equal(t, tc.code, pe.Code)
			assert.True(t, BadPage(err), "BadPage(%v)", err)
		})
	}
	assert.Zero(t, called.n, "a bad query lists nothing")

	t.Run("no project", func(t *testing.T) {
		_, _, err := ReadList(get("/v1/things", ""), list)
		require.Error(t, err)
		assert.False(t, BadPage(err))
		assert.Zero(t, called.n)
	})

	t.Run("list error", func(t *testing.T) {
		boom := errors.New("boom")
		_, _, err := ReadList(get("/v1/things", "acme"), func(context.Context, string, paginate.Request) (paginate.Page[string], error) {
			return paginate.Page[string]{}, boom
		})
		assert.ErrorIs(t, err, boom)
		assert.False(t, BadPage(err))
	})
}
