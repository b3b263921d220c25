package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestAccessLimit_admit(t *testing.T) {
	t.Parallel()
	a := &accessLimit{rate: 2}
	t0 := time.Unix(1_800_000_000, 0)
	type step struct {
		at       time.Duration
		status   int
		ok       bool
		unlogged int64
	}
	steps := []step{
		{0, 200, true, 0},
		{100 * time.Millisecond, 404, true, 0},
		{200 * time.Millisecond, 200, false, 0}, // third line of the second
		{300 * time.Millisecond, 401, false, 0},
		{400 * time.Millisecond, 503, true, 2}, // server errors always get a line
		{500 * time.Millisecond, 200, false, 0},
		{time.Second, 200, true, 1}, // a new second
		{1100 * time.Millisecond, 200, true, 0},
		{1200 * time.Millisecond, 200, false, 0},
	}
	for i, s := range steps {
		ok, unlogged := a.admit(t0.Add(s.at), s.status)
		assert.Equal(t, s.ok, ok, "step %d: admitted", i)
		assert.Equal(t, s.unlogged, unlogged, "step %d: unlogged", i)
	}
	assert.Equal(t, int64(1), a.takeUnlogged())
	assert.Equal(t, int64(0), a.takeUnlogged())
}

func TestAccessLimit_zeroRateLogsEverything(t *testing.T) {
	t.Parallel()
	a := &accessLimit{}
	now := time.Unix(1_800_000_000, 0)
	for range 1000 {
		ok, unlogged := a.admit(now, 200)
		assert.True(t, ok)
		assert.Zero(t, unlogged)
	}
}

// BenchmarkLogRequests is the access log's cost per request, writing every
// request (rate=0) or at most defaultAccessLogRate lines a second, into the
// server's buffered sink. Compare with benchstat -col /rate.
func BenchmarkLogRequests(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 2700)
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})
	for _, rate := range []int64{0, defaultAccessLogRate} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			sink := newLogSink(io.Discard)
			defer sink.Close()
			h := logRequests(slog.New(slog.NewJSONHandler(sink, nil)), &accessLimit{rate: rate}, page)
			r := httptest.NewRequest(http.MethodGet, "/v1/contacts?limit=25", nil)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				w := &discardWriter{h: http.Header{}}
				for pb.Next() {
					h.ServeHTTP(w, r)
				}
			})
		})
	}
}

// discardWriter is an http.ResponseWriter that keeps nothing.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}
