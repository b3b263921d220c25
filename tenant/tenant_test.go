package tenant

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestContext_RoundTrip(t *testing.T) {
	ctx := NewContext(context.Background(), "acme")
	got, ok := FromContext(ctx)
	require.True(t, ok)
	assert.Equal(t, "acme", got)
}

func TestFromContext_Missing(t *testing.T) {
	_, ok := FromContext(context.Background())
	assert.False(t, ok, "a context without a project must not report one")
	_, ok = FromContext(NewContext(context.Background(), ""))
	assert.False(t, ok, "an empty project is no project")
}

func TestFromContext_InnerWins(t *testing.T) {
	ctx := NewContext(NewContext(context.Background(), "a"), "b")
	got, _ := FromContext(ctx)
	assert.Equal(t, "b", got)
}

func TestFixed(t *testing.T) {
	id, err := Fixed("default")(httptest.NewRequest("GET", "/p/other/v1/contacts", nil))
	require.NoError(t, err)
	assert.Equal(t, "default", id, "Fixed ignores the request")
}
