package keys

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/latchkey-dev/latchkey/internal/telemetry"
)

// The results a verification is counted under (the result attribute of
// latchkey.verifications): accepted, one of the refusal reasons, or a
// failure of the store.
const (
	resultOK           = "ok"
	resultExpired      = "expired"
	resultRevoked      = "revoked"
	resultRetiredKey   = "retired_key"
	resultWrongProject = "wrong_project"
	resultMalformed    = "malformed"
	resultError        = "error"
)

var verifyResults = [...]string{resultOK, resultExpired, resultRevoked, resultRetiredKey, resultWrongProject, resultMalformed, resultError}

// verifyMetrics counts verifications by cache (hit or miss) and result,
// with the attribute sets built once.
type verifyMetrics struct {
	c    metric.Int64Counter
	opts [2][len(verifyResults)][]metric.AddOption // [hit][result index]
}

func newVerifyMetrics(mp metric.MeterProvider) *verifyMetrics {
	c, err := telemetry.Meter(mp).Int64Counter("latchkey.verifications",
		metric.WithDescription("Bearer tokens verified, by cache (hit: the token's signature was verified before) and result: ok, or the reason it was refused (expired, revoked, retired_key, wrong_project, malformed), or error (the store failed)."),
		metric.WithUnit("{verifications}"))
	if err != nil {
		c = noop.Int64Counter{}
	}
	m := &verifyMetrics{c: c}
	for h, cache := range [2]string{"miss", "hit"} {
		for i, result := range verifyResults {
			m.opts[h][i] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(
				attribute.String("cache", cache), attribute.String("result", result)))}
		}
	}
	return m
}

// verified counts one verification that found the token in the cache or
// not (hit) and ended with err.
func (m *verifyMetrics) verified(ctx context.Context, hit bool, err error) {
	h := 0
	if hit {
		h = 1
	}
	m.c.Add(ctx, 1, m.opts[h][resultIndex(err)]...)
}

// resultIndex is the index in verifyResults of the result of a
// verification that ended with err.
func resultIndex(err error) int {
	if err == nil {
		return 0
	}
	var te *tokenError
	if !errors.As(err, &te) {
		return len(verifyResults) - 1
	}
	switch te.kind {
	case ErrTokenExpired:
		return 1
	case ErrTokenRevoked:
		return 2
	case ErrSigningKeyRetired:
		return 3
	case ErrWrongProject:
		return 4
	}
	return 5
}
