package main

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// logFlushInterval is how long a log line may wait in the server's buffer
// before it is written to stderr.
const logFlushInterval = 100 * time.Millisecond

// logSink buffers the server's log lines and writes them to the underlying
// writer at most every logFlushInterval (or when 32 KiB are waiting), so a
// busy server makes one write system call per batch of lines instead of
// one per request. Close writes what is left. It is safe for concurrent
// use.
type logSink struct {
	mu   sync.Mutex
	w    *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

// newLogSink returns a started sink writing to w.
func newLogSink(w io.Writer) *logSink {
	s := &logSink{w: bufio.NewWriterSize(w, 32<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

func (s *logSink) run() {
	defer close(s.done)
	t := time.NewTicker(logFlushInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			_ = s.Flush()
		}
	}
}

// Write buffers p.
func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// Flush writes the buffered lines now.
func (s *logSink) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Flush()
}

// Close stops the periodic flushing and writes what is left. Writes after
// Close are buffered until the next Flush.
func (s *logSink) Close() error {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	return s.Flush()
}

// defaultAccessLogRate is the access log's default limit: at most this many
// request lines a second.
const defaultAccessLogRate = 100

// accessLimit decides which requests get a line in the access log: every
// request while at most rate lines have been written in the current second
// of the clock, and beyond that none, except server errors (5xx), which are
// always written. The requests left out are counted, and the next line
// written carries their number as "unlogged", so the lines and their
// unlogged counts add up to every request served. Under light load the log
// therefore has every request; under heavy load it costs at most rate
// lines a second. It is safe for concurrent use.
type accessLimit struct {
	rate int64 // lines a second; zero or less: every request

	mu       sync.Mutex
	second   int64 // the Unix second lines are counted in
	lines    int64 // lines written in second
	unlogged int64 // requests left out since the last line written
}

// admit reports whether the request that ended at now with status gets a
// line, and if so how many requests were left out since the previous line.
func (a *accessLimit) admit(now time.Time, status int) (ok bool, unlogged int64) {
	if a.rate <= 0 {
		return true, 0
	}
	sec := now.Unix()
	a.mu.Lock()
	defer a.mu.Unlock()
	if sec != a.second {
		a.second, a.lines = sec, 0
	}
	if a.lines >= a.rate && status < 500 {
		a.unlogged++
		return false, 0
	}
	a.lines++
	unlogged, a.unlogged = a.unlogged, 0
	return true, unlogged
}

// takeUnlogged returns the number of requests left out since the last line
// written, and starts counting again from zero.
func (a *accessLimit) takeUnlogged() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := a.unlogged
	a.unlogged = 0
	return n
}
