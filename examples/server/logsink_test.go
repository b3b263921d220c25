package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestAccessLimit_admit(t *testing.T) {
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
	a := &accessLimit{}
	now := time.Unix(1_800_000_000, 0)
	for range 1000 {
		ok, unlogged := a.admit(now, 200)
		assert.True(t, ok)
		assert.Zero(t, unlogged)
	}
}
