package failovertest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// feedPage is a page of the revocation feed.
type feedPage struct {
	Data []struct {
		ID        string `json:"id"`
		Subject   string `json:"subject"`
		RevokedAt string `json:"revoked_at"`
	} `json:"data"`
	Pagination struct {
		HasMore    bool   `json:"has_more"`
		NextCursor string `json:"next_cursor"`
	} `json:"pagination"`
}

// feed reads a page of the instance's revocation feed with the API key
// token, after cursor, waiting up to wait seconds for an item (0: none).
func (in *instance) feed(ctx context.Context, token, cursor string, wait int) (answer, feedPage) {
	q := url.Values{"limit": {"100"}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if wait > 0 {
		q.Set("wait", strconv.Itoa(wait))
	}
	a := in.do(ctx, http.MethodGet, "/v1/identity/revocations?"+q.Encode(), token, "")
	var p feedPage
	_ = json.Unmarshal([]byte(a.body), &p)
	return a, p
}

// feedEnd returns the cursor after the last item of the instance's feed.
func feedEnd(t *testing.T, ctx context.Context, in *instance, token string) string {
	t.Helper()
	cursor := ""
	for {
		a, p := in.feed(ctx, token, cursor, 0)
		require.Equal(t, http.StatusOK, a.status, "the revocation feed of instance %s: %s", in.name, a)
		if n := len(p.Data); n > 0 {
			cursor = p.Data[n-1].ID + ":" + p.Data[n-1].RevokedAt
		}
		if !p.Pagination.HasMore {
			return cursor
		}
	}
}

// checkFeedAfterFailover checks that a key revoked through instance from
// after the failover reaches a long poll of instance to's revocation feed
// (woken by to's revocation watcher, which must have found the new
// primary), and logs how long after the revocation was asked for.
func checkFeedAfterFailover(t *testing.T, from, to *instance, token string) {
	t.Helper()
	ctx := t.Context()
	cursor := feedEnd(t, ctx, to, token)
	key, _, err := from.lk.APIKeys().Create(ctx, project, "feed")
	require.NoError(t, err, "create a key after the failover")
	polled := make(chan struct {
		a answer
		p feedPage
	}, 1)
	go func() {
		a, p := to.feed(ctx, token, cursor, 10)
		polled <- struct {
			a answer
			p feedPage
		}{a, p}
	}()
	time.Sleep(300 * time.Millisecond) // the poll waits first (else it answers at once, as well)
	revoking := time.Now()
	require.NoError(t, from.lk.APIKeys().Revoke(ctx, project, key.ID), "revoke a key after the failover")
	r := <-polled
	require.Equal(t, http.StatusOK, r.a.status, "a long poll of instance %s's revocation feed: %s", to.name, r.a)
	var subjects []string
	for _, it := range r.p.Data {
		subjects = append(subjects, it.Subject)
	}
	if assert.Contains(t, subjects, key.ID, "a long poll (wait=10) of instance %s's feed after the failover, with the key revoked through instance %s", to.name, from.name) {
		t.Logf("feed: a key revoked through instance %s after the failover reached a long poll of instance %s %s after the revocation was asked for",
			from.name, to.name, r.a.end.Sub(revoking).Round(time.Millisecond))
	}
}
