package retry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errClosed = errors.New("closed")

func TestAcquire(t *testing.T) {
	open := func() bool { return false }
	wait := func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() }

	c, err := Acquire(t.Context(), 0, open, errClosed, func(context.Context) (int, error) { return 7, nil })
	require.NoError(t, err)
	assert.Equal(t, 7, c)

	_, err = Acquire(t.Context(), 0, func() bool { return true }, errClosed, wait)
	assert.ErrorIs(t, err, errClosed, "a closed store")

	_, err = Acquire(t.Context(), time.Millisecond, open, errClosed, wait)
	var ae *AcquireError
	require.ErrorAs(t, err, &ae, "no connection within the timeout")
	assert.NotErrorIs(t, err, context.DeadlineExceeded, "the caller's context did not end")

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = Acquire(ctx, time.Hour, open, errClosed, wait)
	assert.ErrorIs(t, err, context.Canceled, "the caller's context ended")

	_, err = Acquire(t.Context(), 0, open, errClosed, func(context.Context) (int, error) { return 0, errors.New("refused") })
	require.ErrorAs(t, err, &ae, "a failure to connect")
}
