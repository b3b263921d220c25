package openapi

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSplitServers(t *testing.T) {
	head, tail, err := splitServers([]byte(`{"a": {"servers": 1}, "servers" : [ {"url": "x"} ] , "b": [1]}`))
	require.NoError(t, err)
	assert.Equal(t, `{"a": {"servers": 1}, "servers" : `, string(head), "only the top-level member")
	assert.Equal(t, ` , "b": [1]}`, string(tail))

	head, tail, err = splitServers([]byte(`{"servers":[]}`))
	require.NoError(t, err)
	assert.Equal(t, `{"servers":`, string(head))
	assert.Equal(t, `}`, string(tail))

	for name, doc := range map[string]string{
		"empty":         ``,
		"not an object": `[{"servers": []}]`,
		"no servers":    `{"paths": {}}`,
		"twice":         `{"servers": [], "servers": []}`,
		"truncated":     `{"servers": [`,
		"unterminated":  `{"servers": []`,
		"bad value":     `{"servers": [}`,
		"not JSON":      `servers`,
	} {
		_, _, err := splitServers([]byte(doc))
		assert.Error(t, err, name)
	}
}
