package remote

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/latchkey-dev/latchkey/paginate"
)

// Feed reading.
const (
	// pageLimit is the limit of every feed request: the largest page.
	pageLimit = 100
	// pollGrace is how long past its wait a long poll may take before it
	// is abandoned as failed.
	pollGrace = 5 * time.Second
	// firstBackoff is the pause after the first failed read of the feed;
	// each further failure doubles it, up to maxBackoff.
	firstBackoff = 100 * time.Millisecond
	// maxBackoff bounds the pause between two reads after failures. It is
	// lowered to a quarter of StaleAfter, so that the feed is tried at
	// least four times before the verifier fails closed.
	maxBackoff = 5 * time.Second
	// pruneEvery is how often (by Options.Now) expired session and user
	// items are looked for.
	pruneEvery = time.Minute
)

// feedPage is a page of the revocation feed as the wire contract gives it.
type feedPage struct {
	Data []struct {
		ID        string `json:"id"`
		Kind      string `json:"kind"`
		Subject   string `json:"subject"`
		RevokedAt string `json:"revoked_at"`
	} `json:"data"`
	Pagination *struct {
		HasMore    bool   `json:"has_more"`
		NextCursor string `json:"next_cursor"`
	} `json:"pagination"`
}

// errFeedStatus is a read of the feed answered with another status than
// 200; retryAfter is its Retry-After, if any.
type errFeedStatus struct {
	desc       string
	retryAfter time.Duration
	refused    bool // 401 or 403: the API key is not accepted
}

func (e *errFeedStatus) Error() string {
	if e.refused {
		return "remote: the revocation feed refused the API key (" + e.desc + "): is it revoked, or not a permanent API key of the project?"
	}
	return "remote: reading the revocation feed: " + e.desc
}

// catchUp reads the feed from the verifier's cursor, without waiting, until
// its last page.
func (v *Verifier) catchUp(ctx context.Context) error {
	for {
		more, err := v.readPage(ctx, 0)
		if err != nil || !more {
			return err
		}
	}
}

// follow reads the feed until ctx ends: long polls of Options.Wait while it
// is at the end, at once while pages follow, and after a failure again from
// the same cursor after a backoff.
func (v *Verifier) follow(ctx context.Context) {
	defer close(v.done)
	failures := 0
	more := false
	for ctx.Err() == nil {
		wait := v.wait
		if more {
			wait = 0
		}
		var err error
		more, err = v.readPage(ctx, wait)
		if err == nil {
			failures = 0
			if v.pause > 0 && !sleep(ctx, v.pause) {
				return
			}
			continue
		}
		if ctx.Err() != nil {
			return
		}
		failures++
		if failures == 1 {
			v.logger.Warn("remote: reading the revocation feed failed; retrying from the same cursor", "err", err)
		}
		v.lastErr.Store(errorText(err))
		pause := v.backoff(failures)
		var fs *errFeedStatus
		if errors.As(err, &fs) && fs.retryAfter > pause {
			pause = min(fs.retryAfter, v.maxBackoff)
		}
		if !sleep(ctx, pause) {
			return
		}
	}
}

// sleep waits d, and reports whether ctx was still live at its end.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func errorText(err error) *string {
	s := err.Error()
	return &s
}

// backoff returns the pause after the n-th failure in a row: firstBackoff
// doubled n-1 times, at most v.maxBackoff, less a random part of up to a
// half, so that verifiers started together do not retry together.
func (v *Verifier) backoff(n int) time.Duration {
	d := v.maxBackoff
	if n < 32 {
		d = min(firstBackoff<<(n-1), v.maxBackoff)
	}
	return d - rand.N(d/2+1)
}

// readPage reads one page of the feed after the verifier's cursor, waiting
// up to wait for an item when there is none, applies it, and moves the
// cursor past it. It reports whether more pages follow. Only the feed loop
// (and New, before it starts) calls it.
func (v *Verifier) readPage(ctx context.Context, wait time.Duration) (more bool, err error) {
	q := url.Values{"limit": {strconv.Itoa(pageLimit)}}
	if v.cursor != "" {
		q.Set("cursor", v.cursor)
	}
	if wait > 0 {
		q.Set("wait", strconv.Itoa(int(wait/time.Second)))
	}
	u := v.feedURL + "?" + q.Encode()
	if strings.Contains(v.feedURL, "?") {
		u = v.feedURL + "&" + q.Encode()
	}
	rctx, cancel := context.WithTimeout(ctx, wait+pollGrace)
	defer cancel()
	res, err := v.get(rctx, u, true)
	if err != nil {
		return false, fmt.Errorf("remote: reading the revocation feed: %w", err)
	}
	if res.status != http.StatusOK {
		return false, statusError(res)
	}
	var page feedPage
	if err := decodeJSON("remote: the revocation feed", res, &page); err != nil {
		return false, err
	}
	items, cursor, skipped, err := parsePage(page)
	if err != nil {
		return false, err
	}
	v.pause = 0
	if wait > 0 && len(page.Data) == 0 {
		// Answered at once instead of held (the feed holds a bounded
		// number of long polls per API key): ask again after a pause,
		// not at once.
		if n, err := strconv.Atoi(res.header.Get("Retry-After")); err == nil && n > 0 {
			v.pause = min(time.Duration(n)*time.Second, v.maxBackoff)
		}
	}
	if skipped > 0 {
		v.logger.Warn("remote: the revocation feed has items of a kind this verifier does not know; they are skipped (upgrade the verifier)", "items", skipped)
	}
	now := v.now()
	v.revoked.add(items, now.Add(-v.forgetAfter))
	if cursor != "" {
		v.cursor = cursor
	}
	if now.Sub(v.lastPrune) >= pruneEvery || now.Before(v.lastPrune) {
		v.revoked.forget(now.Add(-v.forgetAfter))
		v.lastPrune = now
	}
	if !page.Pagination.HasMore {
		// Caught up: every revocation made before this read is known.
		// A page with more after it does not count, or a verifier
		// catching up after an outage would accept the tokens revoked on
		// the pages it has not read yet.
		v.markFresh()
	}
	return page.Pagination.HasMore, nil
}

// statusError describes a non-200 answer of the feed.
func statusError(res response) error {
	e := &errFeedStatus{desc: describeStatus(res)}
	e.refused = res.status == http.StatusUnauthorized || res.status == http.StatusForbidden
	if s := res.header.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 && n < 3600 {
			e.retryAfter = time.Duration(n) * time.Second
		}
	}
	return e
}

// parsePage checks a page of the feed and returns its items and the cursor
// after it ("" for an empty page: the cursor stays). Any item that breaks
// the wire contract makes the whole page an error, so that nothing is
// skipped silently; an item of a kind this package does not know is
// skipped and counted (a newer Latchkey may add kinds).
func parsePage(page feedPage) (items []item, cursor string, skipped int, err error) {
	if page.Pagination == nil {
		return nil, "", 0, errors.New("remote: the revocation feed's page has no pagination")
	}
	if page.Pagination.HasMore && len(page.Data) == 0 {
		return nil, "", 0, errors.New("remote: the revocation feed's page is empty but has_more")
	}
	items = make([]item, 0, len(page.Data))
	var last paginate.Cursor
	for _, d := range page.Data {
		c, err := paginate.ParseCursor(d.ID + ":" + d.RevokedAt)
		if err != nil || !strings.HasPrefix(d.ID, "rev_") {
			return nil, "", 0, errors.New("remote: the revocation feed has an item with a bad id or revoked_at")
		}
		last = c
		prefix, known := subjectPrefix[d.Kind]
		if !known {
			skipped++
			continue
		}
		if !strings.HasPrefix(d.Subject, prefix) || len(d.Subject) == len(prefix) || len(d.Subject) > maxSubjectLen {
			return nil, "", 0, fmt.Errorf("remote: the revocation feed has a %s item with a bad subject", d.Kind)
		}
		items = append(items, item{kind: d.Kind, subject: d.Subject, revokedAt: c.CreatedAt})
	}
	cursor = last.String()
	if page.Pagination.HasMore && page.Pagination.NextCursor != "" {
		if _, err := paginate.ParseCursor(page.Pagination.NextCursor); err != nil {
			return nil, "", 0, errors.New("remote: the revocation feed's next_cursor is malformed")
		}
		cursor = page.Pagination.NextCursor
	}
	return items, cursor, skipped, nil
}

// subjectPrefix is the prefix of the subject of each kind of item.
var subjectPrefix = map[string]string{
	kindAPIKey:     "key_",
	kindSigningKey: "sk_",
	kindSession:    "rf_",
	kindUser:       "usr_",
}

// maxSubjectLen bounds the subject of an item.
const maxSubjectLen = 64

// markFresh records that the feed was read to its end, and logs the end of
// a stale spell.
func (v *Verifier) markFresh() {
	v.lastRead.Store(int64(time.Since(v.epoch)))
	v.staleTimer.Reset(v.staleAfter)
	if v.staleLogged.CompareAndSwap(true, false) {
		v.logger.Warn("remote: the revocation feed is read again; verifying tokens again")
	}
}

// fresh returns nil while the feed was read to its end within StaleAfter,
// else ErrStale (and logs the start of a stale spell once).
func (v *Verifier) fresh() error {
	if time.Duration(int64(time.Since(v.epoch))-v.lastRead.Load()) <= v.staleAfter {
		return nil
	}
	v.noteStale()
	return ErrStale
}

// noteStale logs, once per stale spell, that the verifier fails closed. It
// runs from Verify and from the timer armed by markFresh, whichever sees
// the spell first.
func (v *Verifier) noteStale() {
	since := time.Duration(int64(time.Since(v.epoch)) - v.lastRead.Load())
	if since <= v.staleAfter || v.closed.Load() {
		return
	}
	if v.staleLogged.CompareAndSwap(false, true) {
		last := ""
		if p := v.lastErr.Load(); p != nil {
			last = *p
		}
		v.logger.Error("remote: the revocation feed has not been read for longer than StaleAfter; refusing every token until it is",
			"stale_after", v.staleAfter, "last_error", last)
	}
}
