package postgres

import (
	"context"
)

const (
	setSettingSQL = `INSERT INTO settings (name, value) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value`
	getSettingSQL = `SELECT value FROM settings WHERE name = $1`
)

// SetSetting sets the setting name to value, replacing the value it had. It
// returns an error matching store.ErrInvalid when store.CheckSetting refuses
// name or value.
func (s *Store) SetSetting(ctx context.Context, name, value string) error {
	const op = "set setting"
	_, err := s.execCount(ctx, op, setSettingSQL, name, value)
	return err
}

// GetSetting returns the value of the setting name, or an error matching
// store.ErrNotFound when it was never set.
func (s *Store) GetSetting(ctx context.Context, name string) (string, error) {
	const op = "get setting"
	return getOne(ctx, s, op, getSettingSQL, []any{name}, func(row rowScanner) (string, error) {
		var v string
		err := row.Scan(&v)
		return v, err
	})
}
