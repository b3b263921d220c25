package sqlite

import (
	"context"

	"zombiezen.com/go/sqlite"
)

const (
	setSettingSQL = `INSERT INTO settings (name, value) VALUES (?, ?)
ON CONFLICT (name) DO UPDATE SET value = excluded.value`
	getSettingSQL = `SELECT value FROM settings WHERE name = ?`
)

// SetSetting sets the setting name to value, replacing the value it had. It
// returns an error matching store.ErrInvalid when store.CheckSetting refuses
// name or value.
func (s *Store) SetSetting(ctx context.Context, name, value string) error {
	const op = "set setting"
	_, err := s.exec(ctx, setSettingSQL, name, value)
	return wrap(op, err)
}

// GetSetting returns the value of the setting name, or an error matching
// store.ErrNotFound when it was never set.
func (s *Store) GetSetting(ctx context.Context, name string) (string, error) {
	const op = "get setting"
	var v string
	err := s.readRow(ctx, getSettingSQL, func(st *sqlite.Stmt) error {
		v = st.ColumnText(0)
		return nil
	}, name)
	if err != nil {
		return "", wrap(op, err)
	}
	return v, nil
}
