package postgres

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/postgres/pgtest"
)

// blockerLock is the advisory lock a test holds to keep a lane's batch
// waiting on the server.
const blockerLock = 7243

// lockedStore opens a store with one pipelined connection on a new
// database and takes blockerLock on a connection of its own, held until
// the test releases it (unlock) or ends.
func lockedStore(t *testing.T) (s *Store, url string, unlock func()) {
	t.Helper()
	url = pgtest.NewDatabase(t)
	s, err := Open(t.Context(), url, &Options{Logger: testDiscard, PipelineConns: 1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	raw := rawConn(t, url)
	_, err = raw.Exec(t.Context(), `SELECT pg_advisory_lock($1)`, blockerLock)
	require.NoError(t, err)
	var once sync.Once
	unlock = func() {
		once.Do(func() {
			_, err := raw.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, blockerLock)
			require.NoError(t, err)
		})
	}
	t.Cleanup(unlock)
	return s, url, unlock
}

// blockedLane is lockedStore with its lane busy: a read waits on the
// server for blockerLock until the test calls unblock. The blocker's error
// arrives on the returned channel.
func blockedLane(t *testing.T) (s *Store, unblock func(), blocker <-chan error) {
	t.Helper()
	s, url, unblock := lockedStore(t)
	errc := make(chan error, 1)
	go func() {
		errc <- s.pipe.read(context.Background(), []pipelinedStatement{lockStatement()})
	}()
	waitBlocked(t, rawConn(t, url), 1)
	return s, unblock, errc
}

// lockStatement waits for blockerLock, held until its batch ends.
func lockStatement() pipelinedStatement {
	return pipelinedStatement{
		sql:  `SELECT pg_advisory_xact_lock_shared(` + fmt.Sprint(blockerLock) + `)`,
		scan: func(rows pgx.Rows) error { return nil },
	}
}

// waitQueued waits until n reads wait in p for a lane.
func waitQueued(t *testing.T, p *pipeline, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(p.reads) == n }, 10*time.Second, time.Millisecond,
		"%d reads queued, want %d", len(p.reads), n)
}

// checkedFixture makes project p with an API key and contacts, and returns
// the ids of the key's records and what ListContacts returns for a page of
// limit.
func checkedFixture(t *testing.T, s *Store, p string, limit int) (store.TokenRecordIDs, paginate.Page[store.Contact]) {
	t.Helper()
	ctx := t.Context()
	seedUser(t, s, p)
	sk := store.SigningKey{ID: "sk_" + p, ProjectID: p, Algorithm: store.AlgEdDSA, PublicKey: make([]byte, 32), EncryptedPrivateKey: []byte("sealed"), CreatedAt: it0}
	require.NoError(t, s.CreateSigningKey(ctx, sk))
	key := store.APIKey{ID: "key_" + p, ProjectID: p, Name: "k", CreatedBy: "t", SigningKeyID: sk.ID, CreatedAt: it0}
	require.NoError(t, s.CreateAPIKey(ctx, key))
	for i := range 7 {
		_, err := s.CreateContact(ctx, store.Contact{ID: fmt.Sprintf("ct_%s%d", p, i), ProjectID: p, Name: fmt.Sprint("Contact ", i), CreatedAt: it0})
		require.NoError(t, err)
	}
	want, err := s.ListContacts(ctx, p, paginate.Request{Limit: limit})
	require.NoError(t, err)
	return store.TokenRecordIDs{SigningKeyID: sk.ID, APIKeyID: key.ID}, want
}

// TestPipeline_WaitingReadsShareABatch: while the one lane is busy, reads
// wait; when it is free, it sends all of them in one batch (one round
// trip), and each gets its own answer.
func TestPipeline_WaitingReadsShareABatch(t *testing.T) {
	t.Parallel()
	s, unblock, blocker := blockedLane(t)
	ids, want := checkedFixture(t, s, "p", 5)
	batches, statements := s.pipe.batches.Load(), s.pipe.statements.Load()

	const n = 10
	type answer struct {
		recs store.TokenRecords
		page paginate.Page[store.Contact]
		err  error
	}
	answers := make(chan answer, n)
	for range n {
		go func() {
			recs, page, err := s.ListContactsChecked(context.Background(), "p", ids, paginate.Request{Limit: 5})
			answers <- answer{recs, page, err}
		}()
	}
	waitQueued(t, s.pipe, n)
	assert.Equal(t, batches, s.pipe.batches.Load(), "nothing sent while the lane is busy")
	unblock()
	require.NoError(t, <-blocker)
	for range n {
		a := <-answers
		require.NoError(t, a.err)
		assert.Equal(t, want, a.page)
		require.NotNil(t, a.recs.SigningKey)
		require.NotNil(t, a.recs.APIKey)
		assert.Equal(t, ids.APIKeyID, a.recs.APIKey.ID)
	}
	assert.Equal(t, batches+1, s.pipe.batches.Load(), "the waiting reads went in one batch")
	assert.Equal(t, statements+n, s.pipe.statements.Load())
}

// TestPipeline_FailedStatementSparesItsBatch: a statement that fails makes
// the server skip the rest of its batch; the reads after it run again and
// get their answers, and only the failing read returns an error.
func TestPipeline_FailedStatementSparesItsBatch(t *testing.T) {
	t.Parallel()
	s, unblock, blocker := blockedLane(t)
	ids, want := checkedFixture(t, s, "p", 5)

	failed := make(chan error, 1)
	go func() {
		failed <- s.readPipelined(context.Background(), "fail", func() {}, pipelinedStatement{
			sql: `SELECT 1 / (SELECT count(*) - count(*) FROM projects)`, scan: func(rows pgx.Rows) error { return nil },
		})
	}()
	waitQueued(t, s.pipe, 1)
	const n = 3
	errs := make(chan error, n)
	for range n {
		go func() {
			_, page, err := s.ListContactsChecked(context.Background(), "p", ids, paginate.Request{Limit: 5})
			if err == nil && !assert.ObjectsAreEqual(want, page) {
				err = fmt.Errorf("page %v, want %v", page, want)
			}
			errs <- err
		}()
	}
	waitQueued(t, s.pipe, 1+n)
	unblock()
	require.NoError(t, <-blocker)
	err := <-failed
	require.ErrorIs(t, err, store.ErrInvalid)
	assert.ErrorContains(t, err, "22012", "division by zero")
	for range n {
		assert.NoError(t, <-errs)
	}
}

// TestPipeline_AbandonedReadIsNotSent: a read whose context ends while it
// waits for a lane returns the context's error at once and is never sent.
func TestPipeline_AbandonedReadIsNotSent(t *testing.T) {
	t.Parallel()
	s, unblock, blocker := blockedLane(t)
	ids, _ := checkedFixture(t, s, "p", 5)
	statements := s.pipe.statements.Load()

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, _, err := s.ListContactsChecked(ctx, "p", ids, paginate.Request{Limit: 5})
		errc <- err
	}()
	waitQueued(t, s.pipe, 1)
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	unblock()
	require.NoError(t, <-blocker)
	_, _, err := s.ListContactsChecked(t.Context(), "p", ids, paginate.Request{Limit: 5})
	require.NoError(t, err)
	assert.Equal(t, statements+1, s.pipe.statements.Load(), "only the later read was sent")
}

// TestPipeline_BatchNobodyWaitsForIsCancelled: when every caller of a
// batch gives up while the server holds it, the batch is cancelled and its
// lane serves the next reads, though the server would hold it still.
func TestPipeline_BatchNobodyWaitsForIsCancelled(t *testing.T) {
	t.Parallel()
	s, url, _ := lockedStore(t)
	ids, want := checkedFixture(t, s, "p", 5)

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.pipe.read(ctx, []pipelinedStatement{lockStatement()}) }()
	waitBlocked(t, rawConn(t, url), 1)
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)

	// The lock is still held: only the batch's cancellation frees the
	// lane. (The deadline turns a lane stuck for good into a failure.)
	ctx, cancel = context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, page, err := s.ListContactsChecked(ctx, "p", ids, paginate.Request{Limit: 5})
	require.NoError(t, err)
	assert.Equal(t, want, page)
}

// TestPipeline_Close: Close fails the reads still waiting for a lane with
// the store's closed error, lets the batch on the server finish and
// answer, and later reads fail.
func TestPipeline_Close(t *testing.T) {
	t.Parallel()
	s, unblock, blocker := blockedLane(t)
	ids, _ := checkedFixture(t, s, "p", 5)
	errc := make(chan error, 1)
	go func() {
		_, _, err := s.ListContactsChecked(context.Background(), "p", ids, paginate.Request{Limit: 5})
		errc <- err
	}()
	waitQueued(t, s.pipe, 1)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	require.ErrorIs(t, <-errc, errClosed)
	unblock()
	require.NoError(t, <-blocker, "the batch on the server is answered")
	require.NoError(t, <-closed)
	_, _, err := s.ListContactsChecked(t.Context(), "p", ids, paginate.Request{Limit: 5})
	require.ErrorIs(t, err, errClosed)
}
