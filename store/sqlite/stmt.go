package sqlite

import (
	"errors"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// Statements run through sqlitex.Execute: the statement is prepared once
// per connection and cached by its text (sqlite.Conn.Prepare), its
// arguments are bound by position (?1 is args[0]; nil is NULL, an int64 an
// INTEGER, a string TEXT, a []byte a BLOB), and it is reset after its last
// row, which ends its read transaction.

// errNoRows is the error of a single-row read that found no row; wrap
// reports it as store.ErrNotFound.
var errNoRows = errors.New("sqlite: no rows")

// execSQL runs a statement that returns no rows and returns how many rows it
// changed.
func execSQL(conn *sqlite.Conn, query string, args ...any) (int, error) {
	if err := sqlitex.Execute(conn, query, &sqlitex.ExecOptions{Args: args}); err != nil {
		return 0, err
	}
	return conn.Changes(), nil
}

// queryRow runs query and calls scan with its first row. It returns
// errNoRows when there is no row.
func queryRow(conn *sqlite.Conn, query string, scan func(*sqlite.Stmt) error, args ...any) error {
	found := false
	err := sqlitex.Execute(conn, query, &sqlitex.ExecOptions{
		Args: args,
		ResultFunc: func(stmt *sqlite.Stmt) error {
			if found {
				return nil
			}
			found = true
			return scan(stmt)
		},
	})
	if err == nil && !found {
		return errNoRows
	}
	return err
}

// queryRows runs query and calls fn with each row.
func queryRows(conn *sqlite.Conn, query string, fn func(*sqlite.Stmt) error, args ...any) error {
	return sqlitex.Execute(conn, query, &sqlitex.ExecOptions{Args: args, ResultFunc: fn})
}
