package retry

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

var (
	errTransient = errors.New("transient")
	errSkipped   = errors.New("skipped")
	errLost      = errors.New("lost, sent")
	errLostEarly = errors.New("lost, not sent")
	errOther     = errors.New("other")
)

func is(target error) func(error) bool { return func(err error) bool { return errors.Is(err, target) } }

var testPolicy = Policy{MaxAttempts: 4, Base: time.Microsecond, Cap: time.Microsecond, Errors: Errors{
	Transient: is(errTransient),
	Skipped:   is(errSkipped),
	Lost:      func(err error) bool { return errors.Is(err, errLost) || errors.Is(err, errLostEarly) },
	NotSent:   is(errLostEarly),
	Unknown:   is(errLost),
	InDoubt:   func(op string, err error) error { return &doubtful{op, err} },
	Wrap:      func(op string, err error) error { return fmt.Errorf("%s: %w", op, err) },
}}

// doubtful is the error of a write in doubt.
type doubtful struct {
	op  string
	err error
}

func (d *doubtful) Error() string { return d.op + ": in doubt: " + d.err.Error() }
func (d *doubtful) Unwrap() error { return d.err }

func TestPolicy_Do(t *testing.T) {
	for _, c := range []struct {
		name     string
		errs     []error // the errors of the attempts, in turn; nil ends
		writing  bool
		attempts int
		err      error
		doubt    bool
	}{
		{"success", []error{nil}, false, 1, nil, false},
		{"transient, then success", []error{errTransient, errTransient, nil}, true, 3, nil, false},
		{"transient past the bound", []error{errTransient, errTransient, errTransient, errTransient, nil}, false, 4, errTransient, false},
		{"skipped, then success", []error{errSkipped, nil}, false, 2, nil, false},
		{"a read's lost connection runs again once", []error{errLost, errLost, nil}, false, 2, errLost, false},
		{"a write sent on a lost connection is in doubt", []error{errLost, nil}, true, 1, errLost, true},
		{"a write not sent runs again once", []error{errLostEarly, nil}, true, 2, nil, false},
		{"a write not sent, twice", []error{errLostEarly, errLostEarly, nil}, true, 2, errLostEarly, false},
		{"another error", []error{errOther, nil}, true, 1, errOther, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := 0
			err := testPolicy.Do(context.Background(), "op", func() (error, bool) {
				err := c.errs[n]
				n++
				return err, c.writing
			})
			assert.Equal(t, c.attempts, n, "attempts")
			assert.ErrorIs(t, err, c.err)
			if c.err == nil {
				assert.NoError(t, err)
			}
			var d *doubtful
			assert.Equal(t, c.doubt, errors.As(err, &d), "in doubt")
		})
	}
}

func TestPolicy_Do_doneContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := 0
	err := testPolicy.Do(ctx, "op", func() (error, bool) { n++; return errTransient, false })
	assert.ErrorIs(t, err, errTransient)
	assert.Equal(t, 1, n, "nothing runs again once the context is done")
}
