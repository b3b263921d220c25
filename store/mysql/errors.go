package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/go-sql-driver/mysql"

	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/internal/retry"
)

// MySQL and MariaDB error numbers the store translates.
const (
	erDupEntry             = 1062 // ER_DUP_ENTRY
	erDupEntryWithKeyName  = 1586 // ER_DUP_ENTRY_WITH_KEY_NAME
	erNoReferencedRow      = 1216 // ER_NO_REFERENCED_ROW
	erNoReferencedRow2     = 1452 // ER_NO_REFERENCED_ROW_2
	erLockWaitTimeout      = 1205 // ER_LOCK_WAIT_TIMEOUT
	erLockDeadlock         = 1213 // ER_LOCK_DEADLOCK
	erOptionPrevents       = 1290 // ER_OPTION_PREVENTS_STATEMENT: --read-only
	erReadOnlyTransaction  = 1792 // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
	erConCount             = 1040 // ER_CON_COUNT_ERROR: too many connections
	erUserLimitReached     = 1226 // ER_USER_LIMIT_REACHED
	erTooManyUserConns     = 1203 // ER_TOO_MANY_USER_CONNECTIONS
	erServerShutdown       = 1053 // ER_SERVER_SHUTDOWN
	erQueryInterrupted     = 1317 // ER_QUERY_INTERRUPTED
	erConnKilled           = 1927 // MariaDB ER_CONNECTION_KILLED
	erStatementTimeout     = 1969 // MariaDB ER_STATEMENT_TIMEOUT
	erMaxExecTimeExceeded  = 3024 // MySQL ER_QUERY_TIMEOUT
	erClientInteraction    = 4031 // MySQL: disconnected by the server for inactivity
	erRecordFileFull       = 1114 // ER_RECORD_FILE_FULL: table is full
	erDiskFull             = 1021 // ER_DISK_FULL
	erOutOfResources       = 1041 // ER_OUT_OF_RESOURCES
	erTruncatedWrongValue  = 1292 // ER_TRUNCATED_WRONG_VALUE: a bad time
	erTruncatedWrongField  = 1366 // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: bad UTF-8
	erDataTooLong          = 1406 // ER_DATA_TOO_LONG
	erWarnDataOutOfRange   = 1264 // ER_WARN_DATA_OUT_OF_RANGE
	erDatetimeFunctionOver = 1441 // ER_DATETIME_FUNCTION_OVERFLOW
	erInnodbReadOnly       = 1874 // ER_INNODB_READ_ONLY
)

// errClosed is returned by every call made after Close.
var errClosed = errors.New("mysql: store is closed")

// wrap maps an error of a call to the store's sentinels, wrapped with op
// for context. Only this package knows the server's error numbers; callers
// see store.ErrConflict, store.ErrNotFound, store.ErrInvalid and
// store.ErrUnavailable, or the cause itself (wrapped) when it is none of
// those, so that errors.Is still finds context.Canceled and
// context.DeadlineExceeded. An error that already matches a store sentinel
// is returned unchanged.
//
// wrap treats a lost connection as store.ErrUnavailable, which is right
// only for calls that changed nothing; whether they did is decided by the
// caller (see [Store.retry]).
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if store.IsSentinel(err) || errors.Is(err, errClosed) {
		return err
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("mysql: %s: %w", op, store.ErrNotFound)
	}
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) {
		switch myErr.Number {
		case erDupEntry, erDupEntryWithKeyName:
			return fmt.Errorf("mysql: %s: %w", op, store.ErrConflict)
		case erNoReferencedRow, erNoReferencedRow2:
			// Every foreign key points at a project or a user.
			return fmt.Errorf("mysql: %s: unknown project or user: %w", op, store.ErrNotFound)
		case erTruncatedWrongValue, erTruncatedWrongField, erDataTooLong,
			erWarnDataOutOfRange, erDatetimeFunctionOver:
			// Invalid UTF-8, a value too long, a time out of range.
			return fmt.Errorf("mysql: %s: %w (%d)", op, store.ErrInvalid, myErr.Number)
		}
	}
	if unavailable(err) {
		return fmt.Errorf("mysql: %s: %w: %w", op, store.ErrUnavailable, err)
	}
	return fmt.Errorf("mysql: %s: %w", op, err)
}

// unavailable reports whether err says that the database cannot be used
// now: the connection is lost or cannot be made, the server is read-only,
// shutting down, out of connections or space, or a lock or statement
// timeout of the server (not of the caller's context) expired, or a
// deadlock the retries did not get past.
func unavailable(err error) bool {
	if connectionLost(err) || transient(err) {
		return true
	}
	var myErr *mysql.MySQLError
	if !errors.As(err, &myErr) {
		return false
	}
	switch myErr.Number {
	case erOptionPrevents, erReadOnlyTransaction, erInnodbReadOnly,
		erStatementTimeout, erMaxExecTimeExceeded, erQueryInterrupted,
		erRecordFileFull, erDiskFull, erOutOfResources:
		return true
	}
	return false
}

// connectionLost reports whether err is a failure of the connection itself
// rather than of the statement: it could not be made (dial, refused, too
// many connections), it broke (reset, closed, end of file, the driver's
// invalid connection), or the server said it is ending it. A context that
// ended is not a lost connection.
func connectionLost(err error) bool {
	var acqErr *acquireError
	if errors.As(err, &acqErr) {
		return true
	}
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) {
		switch myErr.Number {
		case erConCount, erUserLimitReached, erTooManyUserConns, erServerShutdown,
			erConnKilled, erClientInteraction:
			return true
		}
		return false
	}
	var netErr net.Error
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, mysql.ErrInvalidConn),
		errors.Is(err, sql.ErrConnDone), errors.Is(err, mysql.ErrMalformPkt),
		errors.As(err, &netErr):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE):
		return true
	}
	return false
}

// notSent reports whether err proves that the statement never reached the
// server: no connection could be had, the driver refused a connection it
// found dead before writing (driver.ErrBadConn), or the server answered
// that it refuses connections or statements.
func notSent(err error) bool {
	var acqErr *acquireError
	if errors.As(err, &acqErr) || errors.Is(err, driver.ErrBadConn) {
		return true
	}
	var myErr *mysql.MySQLError
	return errors.As(err, &myErr)
}

// transient reports whether err is a failure after which a statement or a
// whole transaction may be run again: a deadlock (InnoDB rolled the
// transaction back) or a lock wait timeout (the statement was rolled back;
// the store rolls the transaction back before it runs it again).
func transient(err error) bool {
	var myErr *mysql.MySQLError
	if !errors.As(err, &myErr) {
		return false
	}
	return myErr.Number == erLockDeadlock || myErr.Number == erLockWaitTimeout
}

// acquireError is a failure to get a connection of the pool while the
// caller's context was live: nothing was sent (retry.AcquireError).
type acquireError = retry.AcquireError

// newAcquireError returns err as an *acquireError.
func newAcquireError(err error) *acquireError { return retry.NewAcquireError(err) }

// invalid returns an error matching store.ErrInvalid.
func invalid(op, why string) error {
	return fmt.Errorf("mysql: %s: %s: %w", op, why, store.ErrInvalid)
}

// notFound returns an error matching store.ErrNotFound.
func notFound(op string) error {
	return fmt.Errorf("mysql: %s: %w", op, store.ErrNotFound)
}

// check wraps an error of package store (a Check function's,
// DecideRotation's) with the operation; the error keeps matching its
// sentinel.
func check(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("mysql: %s: %w", op, err)
}
