package postgres

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/latchkey-dev/latchkey/store"
)

// PostgreSQL error codes (SQLSTATE) the store translates.
const (
	codeUniqueViolation      = "23505"
	codeForeignKeyViolation  = "23503"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
	codeProgramLimitExceeded = "54000"
	classDataException       = "22"
)

// translate maps a pgx error to the store's sentinels, wrapped with op for
// context. Only this package knows PostgreSQL's error codes; callers see
// store.ErrConflict, store.ErrNotFound and store.ErrInvalid, or the cause
// itself (wrapped) when it is none of those, so that errors.Is still finds
// context.Canceled and context.DeadlineExceeded.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("postgres: %s: %w", op, store.ErrNotFound)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == codeUniqueViolation:
			return fmt.Errorf("postgres: %s: %w", op, store.ErrConflict)
		case pgErr.Code == codeForeignKeyViolation:
			// Every foreign key points at a project or a user: a write
			// naming one that does not exist.
			return fmt.Errorf("postgres: %s: unknown project or user: %w", op, store.ErrNotFound)
		case pgErr.Code == codeProgramLimitExceeded,
			strings.HasPrefix(pgErr.Code, classDataException):
			// Invalid UTF-8, a NUL byte in text, a time out of range, a
			// value too large to index: the argument is malformed.
			return fmt.Errorf("postgres: %s: %w (%s)", op, store.ErrInvalid, pgErr.Code)
		}
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}

// invalid returns an error matching store.ErrInvalid.
func invalid(op, why string) error {
	return fmt.Errorf("postgres: %s: %s: %w", op, why, store.ErrInvalid)
}

// notFound returns an error matching store.ErrNotFound.
func notFound(op string) error {
	return fmt.Errorf("postgres: %s: %w", op, store.ErrNotFound)
}

// retryable reports whether err is a transient failure after which a whole
// transaction may be run again: a serialization failure or a deadlock. Under
// READ COMMITTED PostgreSQL itself rarely returns them, but
// PostgreSQL-compatible distributed databases do.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	return pgErr.Code == codeSerializationFailure || pgErr.Code == codeDeadlockDetected
}

// isNotFound reports whether err matches store.ErrNotFound.
func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
