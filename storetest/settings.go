package storetest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/store"
)

func settingCases() []testCase {
	return []testCase{
		{"SetGet", testSettingSetGet},
		{"Unset", testSettingUnset},
		{"Invalid", testSettingInvalid},
	}
}

// SetSetting stores a value, GetSetting returns it as given, and a second
// SetSetting replaces it; settings are independent of each other and of
// projects.
func testSettingSetGet(t *testing.T, s store.Store) {
	ctx := t.Context()
	require.NoErrorf(t, s.SetSetting(ctx, store.SettingPublicURL, "https://id.example.com"), "SetSetting(%q)", store.SettingPublicURL)
	got, err := s.GetSetting(ctx, store.SettingPublicURL)
	require.NoErrorf(t, err, "GetSetting(%q)", store.SettingPublicURL)
	require.Equal(t, "https://id.example.com", got)

	require.NoError(t, s.SetSetting(ctx, store.SettingPublicURL, "http://127.0.0.1:8080"))
	got, err = s.GetSetting(ctx, store.SettingPublicURL)
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:8080", got, "the second SetSetting replaces the value")

	// Names and values at the edges, kept byte for byte.
	long := strings.Repeat("n", store.MaxSettingNameLen)
	values := map[string]string{
		long:      strings.Repeat("é", store.MaxSettingValueLen/2),
		"a.b-c_0": "",
		"unicode": "ünïcödé ✓ and spaces ",
	}
	for name, v := range values {
		require.NoErrorf(t, s.SetSetting(ctx, name, v), "SetSetting(%q)", name)
	}
	for name, v := range values {
		got, err := s.GetSetting(ctx, name)
		require.NoErrorf(t, err, "GetSetting(%q)", name)
		require.Equalf(t, v, got, "GetSetting(%q)", name)
	}
	got, err = s.GetSetting(ctx, store.SettingPublicURL)
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:8080", got, "other settings are untouched")
}

// GetSetting of a setting never set returns ErrNotFound.
func testSettingUnset(t *testing.T, s store.Store) {
	_, err := s.GetSetting(t.Context(), store.SettingPublicURL)
	require.ErrorIsf(t, err, store.ErrNotFound, "GetSetting(%q) on a fresh store", store.SettingPublicURL)
}

// Names and values CheckSetting refuses are ErrInvalid, and nothing is
// stored.
func testSettingInvalid(t *testing.T, s store.Store) {
	ctx := t.Context()
	for _, name := range []string{"", "Public_URL", "a b", "a:b", "ü", strings.Repeat("n", store.MaxSettingNameLen+1)} {
		err := s.SetSetting(ctx, name, "v")
		require.ErrorIsf(t, err, store.ErrInvalid, "SetSetting(%q)", name)
		_, err = s.GetSetting(ctx, name)
		require.ErrorIsf(t, err, store.ErrInvalid, "GetSetting(%q)", name)
	}
	for _, v := range []string{"a\x00b", "\xff", strings.Repeat("v", store.MaxSettingValueLen+1)} {
		err := s.SetSetting(ctx, "x", v)
		require.ErrorIsf(t, err, store.ErrInvalid, "SetSetting(%q, a value of %d bytes)", "x", len(v))
	}
	_, err := s.GetSetting(ctx, "x")
	require.ErrorIsf(t, err, store.ErrNotFound, "GetSetting(%q) after refused writes", "x")
}

// A setting written through one handle is read by the other at once.
func testSharedSetting(t *testing.T, a, b store.Store) {
	ctx := t.Context()
	require.NoError(t, a.SetSetting(ctx, store.SettingPublicURL, "https://one.example.com"))
	got, err := b.GetSetting(ctx, store.SettingPublicURL)
	require.NoError(t, err)
	require.Equal(t, "https://one.example.com", got)
	require.NoError(t, b.SetSetting(ctx, store.SettingPublicURL, "https://two.example.com"))
	got, err = a.GetSetting(ctx, store.SettingPublicURL)
	require.NoError(t, err)
	require.Equal(t, "https://two.example.com", got)
}
