package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/internal/retry"
)

// PostgreSQL error codes (SQLSTATE) the store translates.
const (
	codeUniqueViolation      = "23505"
	codeReadOnlyTransaction  = "25006"
	codeForeignKeyViolation  = "23503"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
	codeProgramLimitExceeded = "54000"
	codeAdminShutdown        = "57P01"
	codeCrashShutdown        = "57P02"
	codeCannotConnectNow     = "57P03"
	codeQueryCanceled        = "57014"
	codeLockNotAvailable     = "55P03"
	classDataException       = "22"
	classConnectionException = "08"
	classInsufficientRes     = "53"
)

// errClosed is returned by every call made after Close.
var errClosed = errors.New("postgres: store is closed")

// wrap maps an error of a call to the store's sentinels, wrapped with op
// for context. Only this package knows PostgreSQL's error codes; callers see
// store.ErrConflict, store.ErrNotFound, store.ErrInvalid and
// store.ErrUnavailable, or the cause itself (wrapped) when it is none of
// those, so that errors.Is still finds context.Canceled and
// context.DeadlineExceeded. An error that already matches a store sentinel
// (made by the method itself) is returned unchanged.
//
// wrap decides on the error alone. Whether a lost connection means
// "nothing was changed" depends on the call (a read, a write, a commit) and
// is decided by the caller, see [Store.run]: wrap treats a lost
// connection as store.ErrUnavailable, which is right only for calls that
// changed nothing.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if store.IsSentinel(err) || errors.Is(err, errClosed) {
		return err
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
	if unavailable(err) {
		return fmt.Errorf("postgres: %s: %w: %w", op, store.ErrUnavailable, err)
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}

// unavailable reports whether err says that the database cannot be used now:
// the connection is lost or cannot be made, the server is shutting down or
// starting, out of disk, memory or connections, or too busy to serialize the
// call, a timeout of the server (not of the caller's context) expired, or
// the database cannot take writes now (25006 read_only_sql_transaction: a
// standby in recovery, default_transaction_read_only).
// The statement that got such an error reported by the server did not
// complete; for a lost connection, see [connectionLost].
func unavailable(err error) bool {
	if connectionLost(err) || serializationFailure(err) {
		return true
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	return strings.HasPrefix(pgErr.Code, classInsufficientRes) ||
		pgErr.Code == codeReadOnlyTransaction ||
		pgErr.Code == codeQueryCanceled || // statement_timeout
		pgErr.Code == codeLockNotAvailable // lock_timeout
}

// connectionLost reports whether err is a failure of the connection itself
// rather than of the statement: it could not be made (dial, TLS,
// authentication refused for lack of slots), it broke (reset, closed, end of
// file), or the server said it is ending it (class 08, 57P01 to 57P03). A
// context that ended is not a lost connection.
func connectionLost(err error) bool {
	var acqErr *acquireError
	if errors.As(err, &acqErr) {
		return true
	}
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case codeAdminShutdown, codeCrashShutdown, codeCannotConnectNow:
			return true
		}
		if strings.HasPrefix(pgErr.Code, classConnectionException) {
			return true
		}
		// A server error met while connecting (too many connections, an
		// unknown database) is wrapped in a ConnectError below.
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE):
		return true
	}
	// pgconn marks the errors it returns before sending anything, such as
	// using a connection it has closed after a failure.
	return pgconn.SafeToRetry(err)
}

// notSent reports whether err proves that the statement never reached the
// server: no connection could be had, or pgconn failed before writing.
func notSent(err error) bool {
	var acqErr *acquireError
	return errors.As(err, &acqErr) || pgconn.SafeToRetry(err)
}

// serializationFailure reports whether err is a transient failure after
// which a statement or a whole transaction may be run again: a serialization
// failure or a deadlock. The failed statement or transaction was rolled back.
// Under READ COMMITTED PostgreSQL rarely returns them; under SERIALIZABLE
// and on PostgreSQL-compatible distributed databases they are routine under
// contention.
func serializationFailure(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	return pgErr.Code == codeSerializationFailure || pgErr.Code == codeDeadlockDetected
}

// acquireError is a failure to get a connection of the pool while the
// caller's context was live: nothing was sent (retry.AcquireError).
type acquireError = retry.AcquireError

// newAcquireError returns err as an *acquireError.
func newAcquireError(err error) *acquireError { return retry.NewAcquireError(err) }

// notFound returns an error matching store.ErrNotFound.
func notFound(op string) error {
	return fmt.Errorf("postgres: %s: %w", op, store.ErrNotFound)
}

// check wraps an error of package store (a Check function's,
// DecideRotation's) with the operation; the error keeps matching its
// sentinel.
func check(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}
