package sqlite

import (
	"errors"
	"fmt"

	"zombiezen.com/go/sqlite"

	"github.com/latchkey-dev/latchkey/store"
)

// wrap returns err with the operation's context, translating SQLite's
// results into the store sentinels: a unique or primary key violation is
// store.ErrConflict, a foreign key violation (a row of an unknown project)
// and errNoRows are store.ErrNotFound, and the results that say the database
// cannot be used now (see unavailable) are store.ErrUnavailable. Other
// driver errors are kept in the chain for logs; handlers never show them to
// clients.
func wrap(op string, err error) error {
	if err == nil || store.IsSentinel(err) {
		return err
	}
	if errors.Is(err, errNoRows) {
		return fmt.Errorf("sqlite: %s: %w", op, store.ErrNotFound)
	}
	switch code := sqlite.ErrCode(err); {
	case code == sqlite.ResultConstraintUnique, code == sqlite.ResultConstraintPrimaryKey:
		return fmt.Errorf("sqlite: %s: %w", op, store.ErrConflict)
	case code == sqlite.ResultConstraintForeignKey:
		return fmt.Errorf("sqlite: %s: %w", op, store.ErrNotFound)
	case unavailable(code):
		return fmt.Errorf("sqlite: %s: %w: %w", op, store.ErrUnavailable, err)
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}

// unavailable reports whether the SQLite result code (primary or extended)
// says that the database cannot be used now, though the same call may
// succeed later: SQLITE_BUSY and SQLITE_LOCKED (returned once the busy
// timeout has passed), SQLITE_FULL, SQLITE_IOERR and its extended codes,
// SQLITE_CANTOPEN and SQLITE_NOMEM. A write transaction that meets one is
// rolled back (see commit and endTx), so a write that fails with one of
// these changed nothing.
func unavailable(code sqlite.ResultCode) bool {
	switch code.ToPrimary() {
	case sqlite.ResultBusy, sqlite.ResultLocked, sqlite.ResultFull,
		sqlite.ResultIOErr, sqlite.ResultCantOpen, sqlite.ResultNoMem:
		return true
	}
	return false
}

// notFound returns an error matching store.ErrNotFound.
func notFound(op string) error {
	return fmt.Errorf("sqlite: %s: %w", op, store.ErrNotFound)
}

// conflict returns an error matching store.ErrConflict.
func conflict(op, why string) error {
	return fmt.Errorf("sqlite: %s: %s: %w", op, why, store.ErrConflict)
}

func errReplayed(op string) error { return fmt.Errorf("sqlite: %s: %w", op, store.ErrReplayed) }
func errDisabled(op string) error { return fmt.Errorf("sqlite: %s: %w", op, store.ErrDisabled) }

// check wraps an error of package store (a Check function's,
// DecideRotation's) with the operation; the error keeps matching its
// sentinel.
func check(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}
