package paginate

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseQuery_Limit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		query string
		want  int
	}{
		{"default", "", DefaultLimit},
		{"one", "limit=1", 1},
		{"max", "limit=100", 100},
		{"clamped", "limit=101", MaxLimit},
		{"clamped huge", "limit=1000000", MaxLimit},
		{"clamped overflow", "limit=99999999999999999999", MaxLimit},
		{"clamped very long", "limit=999999999999999999999999999999999999", MaxLimit},
		{"leading zero", "limit=007", 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := ParseQuery(tc.query)
			require.NoError(t, err)
			assert.Equal(t, tc.want, req.Limit)
			assert.True(t, req.After.IsZero())
		})
	}
}

func TestParseQuery_BadLimit(t *testing.T) {
	for _, query := range []string{
		"limit=0", "limit=-1", "limit=abc", "limit=", "limit=1.5", "limit=+5",
		"limit=1e2", "limit=%201", "limit=0x10", "limit=5&limit=5", "limit=00",
	} {
		t.Run(query, func(t *testing.T) {
			_, err := ParseQuery(query)
			assert.ErrorIs(t, err, ErrInvalidLimit, "ParseQuery(%q)", query)
		})
	}
}

func TestParseQuery_Cursor(t *testing.T) {
	q := url.Values{"cursor": {"ct_9:2026-11-21T10:15:30.123456Z"}, "limit": {"10"}}
	req, err := ParseQuery(q.Encode())
	require.NoError(t, err)
	assert.Equal(t, 10, req.Limit)
	assert.Equal(t, "ct_9", req.After.ID)
	assert.True(t, req.After.CreatedAt.Equal(time.Date(2026, 11, 21, 10, 15, 30, 123456000, time.UTC)))
}

func TestParseQuery_BadCursor(t *testing.T) {
	for name, q := range map[string]url.Values{
		"garbage":  {"cursor": {"nope"}},
		"empty":    {"cursor": {""}},
		"repeated": {"cursor": {"ct_1:2026-11-21T10:15:30.123456Z", "ct_1:2026-11-21T10:15:30.123456Z"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseQuery(q.Encode())
			assert.ErrorIs(t, err, ErrInvalidCursor)
		})
	}
}

type item struct {
	ID string
	At time.Time
}

func cursorOf(it item) Cursor { return Cursor{ID: it.ID, CreatedAt: it.At} }
func view(it item) string     { return it.ID }

func TestNewResponse_Shape(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 15, 30, 123456000, time.UTC)
	page := Page[item]{Items: []item{{"ct_1", at}, {"ct_2", at}}, HasMore: true}
	resp := NewResponse(page, Request{Limit: 2}, view, cursorOf)
	b, err := json.Marshal(resp)
	require.NoError(t, err)
	assert.JSONEq(t, `{"data":["ct_1","ct_2"],"pagination":{"limit":2,"has_more":true,"next_cursor":"ct_2:2026-11-21T10:15:30.123456Z"}}`, string(b))
}

func TestNewResponse_LastPage(t *testing.T) {
	resp := NewResponse(Page[item]{Items: []item{{"ct_1", time.Now()}}}, Request{Limit: 25}, view, cursorOf)
	assert.False(t, resp.Pagination.HasMore)
	assert.Equal(t, "", resp.Pagination.NextCursor)
}

func TestNewResponse_EmptyDataIsArray(t *testing.T) {
	resp := NewResponse(Page[item]{}, Request{Limit: 25}, view, cursorOf)
	b, err := json.Marshal(resp)
	require.NoError(t, err)
	assert.JSONEq(t, `{"data":[],"pagination":{"limit":25,"has_more":false,"next_cursor":""}}`, string(b))
}

func TestResponseOf_SharesItems(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 15, 30, 123456000, time.UTC)
	items := []item{{"ct_1", at}, {"ct_2", at}}
	resp := ResponseOf(Page[item]{Items: items, HasMore: true}, Request{Limit: 2}, cursorOf)
	assert.Same(t, &items[0], &resp.Data[0])
	assert.Len(t, resp.Data, 2)
	assert.Equal(t, Pagination{Limit: 2, HasMore: true, NextCursor: "ct_2:2026-11-21T10:15:30.123456Z"}, resp.Pagination)
}

func TestResponseOf_EmptyDataIsArray(t *testing.T) {
	resp := ResponseOf(Page[item]{HasMore: true}, Request{Limit: 25}, cursorOf)
	b, err := json.Marshal(resp)
	require.NoError(t, err)
	assert.JSONEq(t, `{"data":[],"pagination":{"limit":25,"has_more":false,"next_cursor":""}}`, string(b))
}
