package identity

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

// announceEnd schedules the end of session f of projectID (its EndsAt) in the
// revocation feed when a login token minted for it, expiring at exp,
// outlives it: Latchkey itself refuses that token from EndsAt on (it reads
// the session), and verifiers that see only the feed (remote) then refuse
// it too, instead of accepting it until exp. That is the last day of a
// session, or every login when sessions last less than a day. An error
// fails the request: a token whose end no verifier would learn is not
// handed out.
func (h *Handler) announceEnd(ctx context.Context, projectID string, f store.RefreshFamily, exp time.Time) error {
	if f.EndsAt.IsZero() || !exp.After(f.EndsAt) {
		return nil
	}
	if err := h.sessions.ScheduleSessionEnd(ctx, projectID, f.ID); err != nil {
		return fmt.Errorf("identity: scheduling the end of session %s in the revocation feed: %w", f.ID, err)
	}
	return nil
}
