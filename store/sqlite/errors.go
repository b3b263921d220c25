package sqlite

import (
	"database/sql"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/latchkey-dev/latchkey/store"
)

// wrap returns err with the operation's context, translating SQLite's
// constraint failures and sql.ErrNoRows into the store sentinels: a unique or
// primary key violation is store.ErrConflict, a foreign key violation (a row
// of an unknown project) is store.ErrNotFound. Other driver errors are kept
// in the chain for logs; handlers never show them to clients.
func wrap(op string, err error) error {
	if err == nil || isStoreErr(err) {
		return err
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sqlite: %s: %w", op, store.ErrNotFound)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("sqlite: %s: %w", op, store.ErrConflict)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("sqlite: %s: %w", op, store.ErrNotFound)
		}
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}

// invalid returns an error matching store.ErrInvalid.
func invalid(op, why string) error {
	return fmt.Errorf("sqlite: %s: %s: %w", op, why, store.ErrInvalid)
}

// notFound returns an error matching store.ErrNotFound.
func notFound(op string) error {
	return fmt.Errorf("sqlite: %s: %w", op, store.ErrNotFound)
}

// conflict returns an error matching store.ErrConflict.
func conflict(op, why string) error {
	return fmt.Errorf("sqlite: %s: %s: %w", op, why, store.ErrConflict)
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (any extended code).
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// isNoRows reports whether err is sql.ErrNoRows.
func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// isStoreErr reports whether err already carries one of the store
// sentinels, so that wrap passes it on unchanged.
func isStoreErr(err error) bool {
	for _, s := range []error{store.ErrNotFound, store.ErrConflict, store.ErrInvalid,
		store.ErrExpired, store.ErrRevoked, store.ErrReplayed} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

func errRevoked(op string) error  { return fmt.Errorf("sqlite: %s: %w", op, store.ErrRevoked) }
func errExpired(op string) error  { return fmt.Errorf("sqlite: %s: %w", op, store.ErrExpired) }
func errReplayed(op string) error { return fmt.Errorf("sqlite: %s: %w", op, store.ErrReplayed) }
