package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// TestTranslate_Codes checks the mapping of PostgreSQL errors and connection
// failures to the store's sentinels.
func TestTranslate_Codes(t *testing.T) {
	t.Parallel()
	pg := func(code string) error { return fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: code}) }
	for _, tc := range []struct {
		err  error
		want error // nil: none of the sentinels
	}{
		{pg("23505"), store.ErrConflict},
		{pg("23503"), store.ErrNotFound},
		{pg("22021"), store.ErrInvalid},
		{pg("22008"), store.ErrInvalid},
		{pg("54000"), store.ErrInvalid},
		{pg("08006"), store.ErrUnavailable}, // connection failure
		{pg("08001"), store.ErrUnavailable}, // unable to connect
		{pg("57P01"), store.ErrUnavailable}, // admin shutdown
		{pg("57P02"), store.ErrUnavailable}, // crash shutdown
		{pg("57P03"), store.ErrUnavailable}, // cannot connect now
		{pg("53100"), store.ErrUnavailable}, // disk full
		{pg("53200"), store.ErrUnavailable}, // out of memory
		{pg("53300"), store.ErrUnavailable}, // too many connections
		{pg("40001"), store.ErrUnavailable}, // serialization failure, retries exhausted
		{pg("40P01"), store.ErrUnavailable}, // deadlock, retries exhausted
		{pg("57014"), store.ErrUnavailable}, // statement_timeout
		{pg("55P03"), store.ErrUnavailable}, // lock_timeout
		{pg("25006"), store.ErrUnavailable}, // read-only transaction: a standby, default_transaction_read_only
		{pg("XX000"), nil},
		{pg("42P01"), nil},
		{io.EOF, store.ErrUnavailable},
		{io.ErrUnexpectedEOF, store.ErrUnavailable},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), store.ErrUnavailable},
		{&pgconn.ConnectError{}, store.ErrUnavailable},
		{newAcquireError(errors.New("dial tcp: connection refused")), store.ErrUnavailable},
		{context.Canceled, nil},
		{context.DeadlineExceeded, nil},
		{errors.New("something else"), nil},
	} {
		got := wrap("op", tc.err)
		for _, s := range []error{store.ErrConflict, store.ErrNotFound, store.ErrInvalid, store.ErrUnavailable} {
			assert.Equal(t, s == tc.want, errors.Is(got, s), "wrap(%v) = %v: matches %v", tc.err, got, s)
		}
		if tc.want == nil || tc.want == store.ErrUnavailable {
			assert.ErrorIs(t, got, tc.err, "wrap(%v) keeps its cause", tc.err)
		}
		if tc.want == nil {
			assert.False(t, store.IsSentinel(got), "wrap(%v) = %v", tc.err, got)
		}
	}
	assert.NoError(t, wrap("op", nil))
	already := fmt.Errorf("x: %w", store.ErrDisabled)
	assert.Same(t, already, wrap("op", already), "a store error is returned as it is")
}

// TestOutcomeUnknown checks which failures of a write leave its outcome
// unknown: a broken connection after sending, not one before sending, and not
// an error the server reported.
func TestOutcomeUnknown(t *testing.T) {
	t.Parallel()
	assert.True(t, outcomeUnknown(io.ErrUnexpectedEOF))
	assert.True(t, outcomeUnknown(fmt.Errorf("x: %w", syscall.ECONNRESET)))
	assert.False(t, outcomeUnknown(newAcquireError(io.EOF)), "no connection, nothing sent")
	assert.False(t, outcomeUnknown(&pgconn.PgError{Code: "57P01"}), "the server reported the failure")
	assert.False(t, outcomeUnknown(&pgconn.PgError{Code: "23505"}))
	assert.False(t, outcomeUnknown(context.Canceled))
}

// TestUnavailable_Unreachable checks that a database that cannot be reached
// gives store.ErrUnavailable for reads and writes, that a write that gives
// it changed nothing, that waiting for a connection is bounded by
// AcquireTimeout (and is not reported as the caller's deadline), and that the
// store works again once the database is back.
func TestUnavailable_Unreachable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := pgtest.NewDatabase(t)
	px, viaProxy := newProxy(t, dbURL)
	s, err := Open(ctx, viaProxy, &Options{Logger: slog.New(slog.DiscardHandler), AcquireTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: it0}))

	for _, blackhole := range []bool{false, true} {
		px.Cut(blackhole)
		_, err = s.GetProject(ctx, "p")
		assert.ErrorIs(t, err, store.ErrUnavailable, "read, blackhole %v", blackhole)
		assert.NotErrorIs(t, err, context.DeadlineExceeded, "read, blackhole %v", blackhole)
		_, err = s.CreateContact(ctx, store.Contact{ID: "ct_1", ProjectID: "p", Name: "n", CreatedAt: it0})
		assert.ErrorIs(t, err, store.ErrUnavailable, "transaction, blackhole %v", blackhole)
		assert.ErrorIs(t, s.CreateProject(ctx, store.Project{ID: "q", CreatedAt: it0}), store.ErrUnavailable, "statement, blackhole %v", blackhole)
		px.Restore()

		// Connections being made when the proxy was cut end within
		// AcquireTimeout (the connect timeout here): the store recovers.
		require.Eventually(t, func() bool {
			_, err := s.GetProject(ctx, "p")
			return err == nil
		}, 10*time.Second, 50*time.Millisecond, "the store works again, blackhole %v", blackhole)
		_, err = s.GetProject(ctx, "q")
		assert.ErrorIs(t, err, store.ErrNotFound, "the write that gave ErrUnavailable changed nothing")
		page, err := s.ListContacts(ctx, "p", paginate.Request{Limit: 10})
		require.NoError(t, err)
		assert.Empty(t, page.Items, "the transaction that gave ErrUnavailable changed nothing")
	}
}

// TestUnavailable_LostAnswer cuts the connection right after a statement is
// sent: a read is run again on another connection and succeeds; a
// transaction whose COMMIT was not sent yet is run again and applied once;
// a single write whose answer is lost is not run again, and its error
// matches store.ErrUnavailable (answered 503, safe to retry) and says that
// the outcome is unknown (here the write was applied).
func TestUnavailable_LostAnswer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := pgtest.NewDatabase(t)
	px, viaProxy := newProxy(t, dbURL)
	s, err := Open(ctx, viaProxy, &Options{Logger: slog.New(slog.DiscardHandler), MaxConns: 1})
	require.NoError(t, err)
	defer s.Close()
	// Prepare each statement on the connection first, so that the next
	// request is the execution itself.
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: it0}))
	_, err = s.GetProject(ctx, "p")
	require.NoError(t, err)

	px.CutAfter("")
	got, err := s.GetProject(ctx, "p")
	require.NoError(t, err, "a read is retried")
	assert.Equal(t, "p", got.ID)
	require.False(t, px.CutPending(), "the read was cut")

	px.CutAfter("") // the BEGIN
	_, err = s.CreateContact(ctx, store.Contact{ID: "ct_1", ProjectID: "p", Name: "n", CreatedAt: it0})
	require.NoError(t, err, "a transaction cut before its COMMIT is retried")
	require.False(t, px.CutPending(), "the transaction was cut")
	page, err := s.ListContacts(ctx, "p", paginate.Request{Limit: 10})
	require.NoError(t, err)
	assert.Len(t, page.Items, 1, "and applied once")

	// The project's id marks the write to cut: a connection idle for a
	// while is pinged first.
	const written = "lost-answer"
	px.CutAfter(written)
	err = s.CreateProject(ctx, store.Project{ID: written, CreatedAt: it0})
	require.Error(t, err)
	assert.ErrorIs(t, err, store.ErrUnavailable, "an in-doubt commit is answered as a database that cannot be used")
	assert.ErrorIs(t, err, errOutcomeUnknown, "and says that its outcome is unknown")
	// The client learnt nothing; the server applies the write on its own
	// time.
	var last error
	assert.Eventually(t, func() bool {
		_, last = s.GetProject(ctx, written)
		return last == nil
	}, 10*time.Second, 10*time.Millisecond, "here it was applied")
	if last != nil {
		t.Logf("the last read: %v", last)
	}
}

// TestUnavailable_LostTransaction checks a transaction whose connection is
// lost after a statement that locked rows and before its COMMIT, with the
// server never told (a network partition, a frozen machine; here a proxy
// that keeps the server's side open): the server ends the orphaned session
// once it has sat idle in its transaction for
// Options.IdleInTransactionTimeout, which releases its locks, and the
// store's retry, waiting for them, then commits, once.
func TestUnavailable_LostTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := pgtest.NewDatabase(t)
	px, viaProxy := newProxy(t, dbURL)
	s, err := Open(ctx, viaProxy, &Options{Logger: slog.New(slog.DiscardHandler), IdleInTransactionTimeout: time.Second})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateProject(ctx, store.Project{ID: "p", CreatedAt: it0}))

	const id = "ct_lost"
	px.CutAfter(id) // the INSERT, inside the transaction
	// Without the timeout the orphan would hold its locks until the
	// server's TCP keepalive gives up (two hours by default).
	callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err = s.CreateContact(callCtx, store.Contact{ID: id, ProjectID: "p", Name: "n", CreatedAt: it0})
	require.NoError(t, err, "the retry gets the rows once the server has ended the orphaned session")
	require.False(t, px.CutPending(), "the transaction was cut")
	page, err := s.ListContacts(ctx, "p", paginate.Request{Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Items, 1, "and applied once")
	assert.Equal(t, id, page.Items[0].ID)
}

// TestIdleInTransactionTimeout_Setting checks the setting of the store's
// transactions: the default, Options.IdleInTransactionTimeout, and the
// server's when the option is negative; and that it stays in them.
func TestIdleInTransactionTimeout_Setting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := pgtest.NewDatabase(t)
	for _, c := range []struct {
		name    string
		timeout time.Duration
		want    string
	}{
		{"default", 0, "5s"},
		{"option", 1500 * time.Millisecond, "1500ms"},
		{"the server's", -1, "0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Open(ctx, dbURL, &Options{Logger: slog.New(slog.DiscardHandler), MaxConns: 1, IdleInTransactionTimeout: c.timeout})
			require.NoError(t, err)
			defer s.Close()
			var in, after string
			require.NoError(t, s.inTx(ctx, "show", func(tx pgx.Tx) error {
				return tx.QueryRow(ctx, "SHOW idle_in_transaction_session_timeout").Scan(&in)
			}))
			assert.Equal(t, c.want, in, "in a transaction")
			require.NoError(t, s.pool.QueryRow(ctx, "SHOW idle_in_transaction_session_timeout").Scan(&after))
			assert.Equal(t, "0", after, "after it, on the same session")
		})
	}
}
