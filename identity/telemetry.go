package identity

import (
	"go.opentelemetry.io/otel/metric"

	"github.com/latchkey-dev/latchkey/internal/telemetry"
)

// Results of logins and refreshes, the values of their result attribute.
const (
	resultSuccess   = "success"   // tokens issued
	resultFailure   = "failure"   // wrong email or password, or a disabled user
	resultThrottled = "throttled" // refused with 429 before any hash
	resultReused    = "reused"    // a refresh token presented again within the reuse window
	resultInvalid   = "invalid"   // an unknown, expired, revoked or replayed refresh token
	resultError     = "error"     // the store or the minting failed
)

// handlerMetrics are the instruments of a Handler.
type handlerMetrics struct {
	logins      telemetry.Counter
	refreshes   telemetry.Counter
	replays     telemetry.Counter
	revocations telemetry.Counter
}

func newHandlerMetrics(mp metric.MeterProvider) handlerMetrics {
	m := telemetry.Meter(mp)
	return handlerMetrics{
		logins: telemetry.NewCounter(m, "latchkey.logins",
			"Logins through POST /v1/identity/login that reached the password check, by result: success, failure (wrong email or password, disabled user), throttled (429), error.",
			"result", resultSuccess, resultFailure, resultThrottled, resultError),
		refreshes: telemetry.NewCounter(m, "latchkey.refreshes",
			"Refresh-token exchanges, by result: success, reused (the same token again within the reuse window), invalid (unknown, expired, revoked or replayed), error.",
			"result", resultSuccess, resultReused, resultInvalid, resultError),
		replays: telemetry.NewCounter(m, "latchkey.refresh_replays",
			"Refresh tokens presented again after the reuse window: each ended its session.", ""),
		revocations: telemetry.NewRevocations(m),
	}
}
