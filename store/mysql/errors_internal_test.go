package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/latchkey-dev/latchkey/store"
)

// TestWrap_Numbers checks the translation of server errors and connection
// failures to the store's sentinels.
func TestWrap_Numbers(t *testing.T) {
	my := func(n uint16) error { return fmt.Errorf("exec: %w", &mysql.MySQLError{Number: n, Message: "x"}) }
	for _, tc := range []struct {
		err  error
		want error
	}{
		{my(erDupEntry), store.ErrConflict},
		{my(erNoReferencedRow2), store.ErrNotFound},
		{my(erTruncatedWrongField), store.ErrInvalid},
		{my(erTruncatedWrongValue), store.ErrInvalid},
		{my(erDataTooLong), store.ErrInvalid},
		{my(erOptionPrevents), store.ErrUnavailable}, // --read-only
		{my(erReadOnlyTransaction), store.ErrUnavailable},
		{my(erConCount), store.ErrUnavailable},
		{my(erLockDeadlock), store.ErrUnavailable}, // once the retries are spent
		{my(erLockWaitTimeout), store.ErrUnavailable},
		{my(erServerShutdown), store.ErrUnavailable},
		{mysql.ErrInvalidConn, store.ErrUnavailable},
		{driver.ErrBadConn, store.ErrUnavailable},
		{io.ErrUnexpectedEOF, store.ErrUnavailable},
		{newAcquireError(errors.New("dial tcp: connection refused")), store.ErrUnavailable},
	} {
		if got := wrap("op", tc.err); !errors.Is(got, tc.want) {
			t.Errorf("wrap(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	if got := wrap("op", context.Canceled); errors.Is(got, store.ErrUnavailable) || !errors.Is(got, context.Canceled) {
		t.Errorf("wrap(context.Canceled) = %v", got)
	}
	if got := wrap("op", my(1064)); store.IsSentinel(got) {
		t.Errorf("wrap(syntax error) = %v, want no sentinel", got)
	}
}

// TestOutcomeUnknown checks which failures leave a write in doubt: a
// connection that broke after the statement was sent, not one that never
// carried it nor an error the server answered.
func TestOutcomeUnknown(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{mysql.ErrInvalidConn, true},
		{io.ErrUnexpectedEOF, true},
		{driver.ErrBadConn, false},
		{newAcquireError(errors.New("x")), false},
		{&mysql.MySQLError{Number: erLockDeadlock}, false},
		{&mysql.MySQLError{Number: erOptionPrevents}, false},
	} {
		if got := outcomeUnknown(tc.err); got != tc.want {
			t.Errorf("outcomeUnknown(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	err := inDoubt("op", mysql.ErrInvalidConn)
	if !errors.Is(err, store.ErrUnavailable) || !errors.Is(err, errOutcomeUnknown) {
		t.Errorf("inDoubt(...) = %v, want it to match ErrUnavailable and say the write may have been applied", err)
	}
}

func TestSplitStatements(t *testing.T) {
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if got := len(ms[0].statements); got != 10 {
		t.Errorf("0001_init has %d statements, want 10 (one per table)", got)
	}
	for _, s := range ms[0].statements {
		if len(s) < 20 || s[len(s)-1] == ';' {
			t.Errorf("statement %q", s)
		}
	}
}
