package mysql

import (
	"context"
)

const (
	setSettingSQL = `INSERT INTO settings (name, value) VALUES (?, ?)
	ON DUPLICATE KEY UPDATE value = VALUES(value)`
	getSettingSQL = `SELECT value FROM settings WHERE name = ?`
)

// SetSetting sets the setting name to value, replacing the value it had, in
// one statement. It returns an error matching store.ErrInvalid when
// store.CheckSetting refuses name or value.
func (s *Store) SetSetting(ctx context.Context, name, value string) error {
	const op = "set setting"
	_, err := s.execCount(ctx, op, setSettingSQL, []byte(name), []byte(value))
	return err
}

// GetSetting returns the value of the setting name, or an error matching
// store.ErrNotFound when it was never set.
func (s *Store) GetSetting(ctx context.Context, name string) (string, error) {
	const op = "get setting"
	return getOne(ctx, s, op, getSettingSQL, []any{[]byte(name)}, func(row rowScanner) (string, error) {
		var v []byte
		err := row.Scan(&v)
		return string(v), err
	})
}
