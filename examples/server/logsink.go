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
