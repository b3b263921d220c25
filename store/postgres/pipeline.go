package postgres

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The read an authenticated request makes on every call (the page of
// contacts with the token's records, ListContactsChecked) is pipelined
// across callers: concurrent reads share a round trip to the server.
//
// A pipeline has a fixed number of lanes (Options.PipelineConns), each a
// goroutine that takes every read waiting when it is free, sends all of
// their statements as one pgx batch on one connection of the pool (one
// write, one Sync, so one round trip) and reads the answers back in order.
// A read that finds a lane free is sent at once, alone, so that a lone
// request pays exactly the round trip it would pay without the pipeline;
// reads batch only while every lane is busy, which is when the round trips
// they save (a write and a read on both sides, a wake-up of the server
// process for each) are what the machine runs out of.
//
// Each statement still runs after its caller asked for it, so it reflects
// every write committed by any handle before the call began: pipelining
// changes no read's freshness. The statements of one batch run in one
// implicit transaction (a pgx batch ends with one Sync); under READ
// COMMITTED each statement still takes its own snapshot, and under a
// stricter default isolation the batch's snapshot is taken when its first
// statement runs, still after every call in it began. When a statement
// fails, the server skips the rest of the batch: those reads did not run,
// and Store.retry runs them again.

// pipeline batches the concurrent reads of a Store; see above.
type pipeline struct {
	s      *Store
	reads  chan *pipelinedRead
	closed chan struct{}
	wg     sync.WaitGroup

	// batches and statements count what the lanes sent, for tests.
	batches, statements atomic.Int64
}

// maxBatchReads bounds the reads one lane sends in one batch, so that the
// answers one connection holds at once stay small.
const maxBatchReads = 64

// pipelinedStatement is one statement of a pipelined read: its text, its
// arguments and the function that reads its rows (called on the lane's
// goroutine, in order, once the answers come).
type pipelinedStatement struct {
	sql  string
	args []any
	scan func(pgx.Rows) error
}

// pipelinedRead is one call's statements on their way through a lane.
type pipelinedRead struct {
	stmts []pipelinedStatement
	state atomic.Int32 // readQueued, readSent or readAbandoned
	batch *batch       // set before state becomes readSent
	err   error        // set by the lane before done is closed
	done  chan struct{}
}

// The states of a pipelinedRead. A lane moves a queued read to sent when it
// puts the read in a batch; a caller whose context ends first moves it to
// abandoned, and the read is never sent.
const (
	readQueued int32 = iota
	readSent
	readAbandoned
)

// batch is the reads a lane sends together. Its context ends when every
// caller in it has given up, so that a batch nobody waits for any more
// (the server hangs, say) is cancelled rather than holding its lane.
type batch struct {
	ctx     context.Context
	cancel  context.CancelFunc
	waiting atomic.Int32 // callers still waiting, plus one while the lane builds it
}

// release drops one waiter of b, cancelling it with the last.
func (b *batch) release() {
	if b.waiting.Add(-1) == 0 {
		b.cancel()
	}
}

// newPipeline starts a pipeline of lanes lanes on s's pool.
func newPipeline(s *Store, lanes int) *pipeline {
	p := &pipeline{s: s, reads: make(chan *pipelinedRead, maxBatchReads*lanes), closed: make(chan struct{})}
	p.wg.Add(lanes)
	for range lanes {
		go p.lane()
	}
	return p
}

// close stops the lanes once their batches are answered; reads that no lane
// took fail with errClosed.
func (p *pipeline) close() {
	close(p.closed)
	p.wg.Wait()
}

// read sends stmts in the next batch of a free lane and waits for their
// answers. It returns the first error of its statements, ctx's error when
// ctx ends first (the read is then not sent, or its answer dropped), or
// errClosed after close.
func (p *pipeline) read(ctx context.Context, stmts []pipelinedStatement) error {
	r := &pipelinedRead{stmts: stmts, done: make(chan struct{})}
	select {
	case p.reads <- r:
	case <-p.closed:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-r.done:
		return r.err
	case <-p.closed:
		if r.state.CompareAndSwap(readQueued, readAbandoned) {
			return errClosed
		}
		// A lane sent it before close: its answer comes.
	case <-ctx.Done():
		if !r.state.CompareAndSwap(readQueued, readAbandoned) {
			r.batch.release()
		}
		return ctx.Err()
	}
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		r.batch.release()
		return ctx.Err()
	}
}

// lane sends batches until the pipeline is closed.
func (p *pipeline) lane() {
	defer p.wg.Done()
	reads := make([]*pipelinedRead, 0, maxBatchReads)
	for {
		select {
		case r := <-p.reads:
			reads = append(reads[:0], r)
		case <-p.closed:
			return
		}
	more:
		for len(reads) < maxBatchReads {
			select {
			case r := <-p.reads:
				reads = append(reads, r)
			default:
				break more
			}
		}
		p.send(reads)
		clear(reads)
	}
}

// send sends the reads that are still wanted as one batch and hands each
// its answer.
func (p *pipeline) send(reads []*pipelinedRead) {
	ctx, cancel := context.WithCancel(context.Background())
	b := &batch{ctx: ctx, cancel: cancel}
	b.waiting.Store(1)
	sent := reads[:0]
	for _, r := range reads {
		r.batch = b
		b.waiting.Add(1)
		if r.state.CompareAndSwap(readQueued, readSent) {
			sent = append(sent, r)
		} else {
			b.waiting.Add(-1)
		}
	}
	b.release()
	if len(sent) > 0 {
		p.answer(b.ctx, sent)
		for _, r := range sent {
			close(r.done)
		}
	}
	cancel()
}

// answer runs the statements of reads as one batch on a connection of the
// pool and sets each read's err.
func (p *pipeline) answer(ctx context.Context, reads []*pipelinedRead) {
	conn, err := p.s.acquire(ctx)
	if err != nil {
		for _, r := range reads {
			r.err = err
		}
		return
	}
	defer conn.Release()
	var b pgx.Batch
	for _, r := range reads {
		for _, st := range r.stmts {
			b.Queue(st.sql, st.args...)
		}
	}
	p.batches.Add(1)
	p.statements.Add(int64(b.Len()))
	br := conn.SendBatch(ctx, &b)
	failed := false // a statement failed on the server: it skips the rest
	for _, r := range reads {
		for _, st := range r.stmts {
			if failed {
				if r.err == nil {
					r.err = errSkippedInBatch
				}
				break
			}
			err := scanResult(br, st.scan)
			var pgErr *pgconn.PgError
			failed = errors.As(err, &pgErr)
			if r.err == nil {
				r.err = err
			}
		}
	}
	if err := br.Close(); err != nil {
		// The batch failed as a whole (the connection, say); a read that
		// saw no error of its own must not pass for answered.
		for _, r := range reads {
			if r.err == nil {
				r.err = err
			}
		}
	}
}

// scanResult reads the next statement's answer from br with scan.
func scanResult(br pgx.BatchResults, scan func(pgx.Rows) error) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	err = scan(rows)
	rows.Close()
	if err == nil {
		err = rows.Err()
	}
	return err
}

// errSkippedInBatch is the error of a pipelined read that the server did
// not run because a statement before it in its batch failed: in one
// implicit transaction, the server skips every statement after an error
// until the batch's Sync.
var errSkippedInBatch = errors.New("postgres: not run: an earlier statement of its pipelined batch failed")
