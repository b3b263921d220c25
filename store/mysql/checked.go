package mysql

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

var _ store.CheckedContactLister = (*Store)(nil)

// The statement of ListContactsChecked serves a batch of calls (see
// checkedBatcher): a UNION ALL of one part per distinct record the calls'
// tokens name (each a lookup on its primary key: one row, or none for a
// record that does not exist) and one part per distinct page they ask for
// (the keyset query of ListContacts on the primary key). Calls that name
// the same record, or ask for the same page, share its part: requests
// signed by one signing key, or listing one project's first page, read it
// once. The parts' columns line up with the same types (tag, part, id, two
// binary columns, a name, a number and five times); the tag says what a row
// is and the part which part it came from. The signing key's name column
// holds its algorithm (migration 0002), the API key's fourth time its
// scheduled revocation (revokes_at, migration 0003); the API key's scopes,
// expiry and roll are left out, as store.CheckedContactLister allows. One
// statement is one InnoDB read view (one snapshot) and one round trip.
// UNION ALL promises no order across its rows, so each page is sorted
// after the read.
const (
	checkedSigningKeySQL = `, id, public_key, encrypted_private_key, alg, NULL,
	created_at, retired_at, NULL, NULL, NULL
	FROM signing_keys WHERE project_id = ? AND id = ?)`
	checkedAPIKeySQL = `, id, created_by, signing_key_id, name, NULL,
	created_at, last_used_at, revoked_at, revokes_at, NULL
	FROM api_keys WHERE project_id = ? AND id = ?)`
	checkedSessionSQL = `, id, user_id, NULL, NULL, generation,
	created_at, issued_at, expires_at, ends_at, revoked_at
	FROM refresh_families WHERE project_id = ? AND id = ?)`
	checkedPageSQL = `, id, NULL, NULL, name, NULL,
	created_at, NULL, NULL, NULL, NULL
	FROM contacts WHERE project_id = ?`
	checkedAfterSQL = listContactsAfterSQL
	checkedOrderSQL = ` ORDER BY pos LIMIT ?)`
)

// The tags of the rows of the statement of ListContactsChecked, in the
// order of its parts.
const (
	tagSigningKey = 0
	tagAPIKey     = 1
	tagSession    = 2
	tagContact    = 3
	tagContactAt  = 4 // a page after a cursor
)

// ListContactsChecked returns the page ListContacts returns and the records
// ids names, read by one statement: one snapshot and one round trip, which
// concurrent calls share (see checkedBatcher). See
// [store.CheckedContactLister].
func (s *Store) ListContactsChecked(ctx context.Context, projectID string, ids store.TokenRecordIDs, req paginate.Request) (store.TokenRecords, paginate.Page[store.Contact], error) {
	const op = "list contacts checked"
	if err := store.CheckListContacts(projectID, req); err != nil {
		return store.TokenRecords{}, paginate.Page[store.Contact]{}, check(op, err)
	}
	if err := store.CheckTokenRecordIDs(projectID, ids); err != nil {
		return store.TokenRecords{}, paginate.Page[store.Contact]{}, check(op, err)
	}
	limit, fetch := pageSize(req)
	c := &checkedCall{projectID: projectID, ids: ids, fetch: fetch, wake: make(chan struct{}, 1)}
	if !req.After.IsZero() {
		c.after = string(position(req.After.CreatedAt, req.After.ID))
	}
	if err := s.checked.do(ctx, s, c); err != nil {
		return store.TokenRecords{}, paginate.Page[store.Contact]{}, err
	}
	return c.recs, paginate.PageOf(c.items, limit), nil
}

// checkedLanes is how many statements of ListContactsChecked run at once
// per Store. Calls that come while every lane is busy wait and are served
// together by the next statement, which begins after all of them began:
// under load a round trip, and the reads of the records and pages the
// calls share, serve several requests, where a statement per call would
// cost the server its fixed work (a round trip, opening, locking and
// planning each part) for every request. Four keep both cores of a small
// machine busy and a queue short.
const checkedLanes = 4

// maxCheckedBatch is the most calls one statement serves.
const maxCheckedBatch = 32

// checkedBatcher runs the statements of ListContactsChecked: at most
// checkedLanes at once, each serving the calls that waited for a lane.
// Every call of a batch began before its statement: a write committed
// before a call began is in the statement's read view.
type checkedBatcher struct {
	mu    sync.Mutex
	busy  int            // lanes running a statement; guarded by mu
	queue []*checkedCall // calls waiting for a lane; guarded by mu
}

// checkedCall is one call of ListContactsChecked, its answer once served.
type checkedCall struct {
	projectID string
	ids       store.TokenRecordIDs
	after     string // the cursor's position, or "" for the first page
	fetch     int

	wake  chan struct{}  // receives when the call is served or is to lead
	batch []*checkedCall // the calls it is to serve, when woken to lead

	recs  store.TokenRecords
	items []store.Contact
	err   error
}

// do serves c: at once when a lane is free, else with the calls waiting
// when one frees. A call whose ctx ends while it waits returns ctx's error
// unless its batch has already begun.
func (b *checkedBatcher) do(ctx context.Context, s *Store, c *checkedCall) error {
	b.mu.Lock()
	if b.busy < checkedLanes {
		b.busy++
		b.mu.Unlock()
		b.lead(ctx, s, []*checkedCall{c})
		return c.err
	}
	b.queue = append(b.queue, c)
	b.mu.Unlock()
	select {
	case <-c.wake:
	case <-ctx.Done():
		b.mu.Lock()
		if i := slices.Index(b.queue, c); i >= 0 {
			b.queue = slices.Delete(b.queue, i, i+1)
			b.mu.Unlock()
			return wrap("list contacts checked", ctx.Err())
		}
		b.mu.Unlock()
		<-c.wake // taken into a batch already: it is served, or leads
	}
	if c.batch != nil {
		b.lead(ctx, s, c.batch)
	}
	return c.err
}

// lead runs the statement of batch, whose first call is the caller's,
// wakes the others with their answers, then hands the lane to the calls
// that queued meanwhile, or frees it. Should the statement's code panic,
// the others still wake, with errBatchLost.
func (b *checkedBatcher) lead(ctx context.Context, s *Store, batch []*checkedCall) {
	defer b.handOff(batch)
	for _, c := range batch[1:] {
		c.err = errBatchLost
	}
	if len(batch) > 1 {
		// The statement serves other calls too: the leader's cancellation
		// must not fail them. Options.AcquireTimeout still bounds it.
		ctx = context.WithoutCancel(ctx)
	}
	serveChecked(ctx, s, batch)
}

// errBatchLost is the error of a call whose batch's leader panicked.
var errBatchLost = errors.New("mysql: list contacts checked: the statement serving the call was abandoned")

// handOff wakes the calls of batch but the first, then hands the lane to
// the calls queued meanwhile, or frees it.
func (b *checkedBatcher) handOff(batch []*checkedCall) {
	for _, c := range batch[1:] {
		c.wake <- struct{}{}
	}
	b.mu.Lock()
	if len(b.queue) == 0 {
		b.busy--
		b.mu.Unlock()
		return
	}
	n := min(len(b.queue), maxCheckedBatch)
	next := slices.Clone(b.queue[:n])
	b.queue = slices.Delete(b.queue, 0, n)
	b.mu.Unlock()
	next[0].batch = next
	next[0].wake <- struct{}{}
}

// recordPart and pagePart identify a part of the statement.
type recordPart struct {
	tag           int
	projectID, id string
}

type pagePart struct {
	projectID, after string
	fetch            int
}

// checkedStatement is the statement serving a batch: its text and
// arguments, and which parts each call reads.
type checkedStatement struct {
	query   string
	args    []any
	records [][3]int // per call, its signing key's, API key's and session's part, or -1
	pages   []int    // per call, its page's part
	npages  int      // page parts, padding included
}

// checkedSQL returns the statement serving batch. Its parts come in tag
// order, then in the order of the calls that first named them, and each
// tag's count of parts is padded to a power of two with parts that read
// nothing (a record of the empty id in the empty project, a page of no
// rows), so that the text depends only on those counts: few texts, each
// prepared once per connection.
func checkedSQL(batch []*checkedCall) checkedStatement {
	st := checkedStatement{records: make([][3]int, len(batch)), pages: make([]int, len(batch))}
	var b strings.Builder
	part := func(tag, k int, tail string, args ...any) {
		if b.Len() > 0 {
			b.WriteString(" UNION ALL ")
		}
		b.WriteString("(SELECT ")
		b.WriteString(strconv.Itoa(tag))
		b.WriteString(", ")
		b.WriteString(strconv.Itoa(k))
		b.WriteString(tail)
		st.args = append(st.args, args...)
	}
	for tag, tail := range []string{checkedSigningKeySQL, checkedAPIKeySQL, checkedSessionSQL} {
		seen := map[recordPart]int{}
		for i, c := range batch {
			id := [3]string{c.ids.SigningKeyID, c.ids.APIKeyID, c.ids.SessionID}[tag]
			if id == "" {
				st.records[i][tag] = -1
				continue
			}
			key := recordPart{tag, c.projectID, id}
			k, ok := seen[key]
			if !ok {
				k = len(seen)
				seen[key] = k
				part(tag, k, tail, c.projectID, id)
			}
			st.records[i][tag] = k
		}
		for k := len(seen); k < padded(len(seen)); k++ {
			part(tag, k, tail, "", "")
		}
	}
	for _, first := range []bool{true, false} {
		seen := map[pagePart]int{}
		for i, c := range batch {
			if (c.after == "") != first {
				continue
			}
			key := pagePart{c.projectID, c.after, c.fetch}
			k, ok := seen[key]
			if !ok {
				k = st.npages + len(seen)
				seen[key] = k
				if first {
					part(tagContact, k, checkedPageSQL+checkedOrderSQL, c.projectID, c.fetch)
				} else {
					part(tagContactAt, k, checkedPageSQL+checkedAfterSQL+checkedOrderSQL, c.projectID, []byte(c.after), c.fetch)
				}
			}
			st.pages[i] = k
		}
		for k := st.npages + len(seen); k < st.npages+padded(len(seen)); k++ {
			if first {
				part(tagContact, k, checkedPageSQL+checkedOrderSQL, "", 0)
			} else {
				part(tagContactAt, k, checkedPageSQL+checkedAfterSQL+checkedOrderSQL, "", []byte{}, 0)
			}
		}
		st.npages += padded(len(seen))
	}
	st.query = b.String()
	return st
}

// padded returns the least power of two at least n, or 0 for 0.
func padded(n int) int {
	if n == 0 {
		return 0
	}
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

// serveChecked reads the records and pages of batch with one statement and
// gives each call its own copy of its answer, or the statement's error.
func serveChecked(ctx context.Context, s *Store, batch []*checkedCall) {
	const op = "list contacts checked"
	st := checkedSQL(batch)
	var recs [3][]checkedRow
	var pages [][]store.Contact
	err := s.queryPrepared(ctx, op, st.query, st.args, func() {
		recs = [3][]checkedRow{}
		pages = make([][]store.Contact, st.npages)
	}, func(rows *sql.Rows) error {
		var r checkedRow
		if err := rows.Scan(r.dest()...); err != nil {
			return err
		}
		switch r.tag {
		case tagContact, tagContactAt:
			pages[r.part] = append(pages[r.part], store.Contact{ID: r.id, Name: r.name.String, CreatedAt: fromNull(r.t[0])})
		case tagSigningKey, tagAPIKey, tagSession:
			recs[r.tag] = append(recs[r.tag], r)
		}
		return nil
	})
	for _, c := range batch {
		c.err = err
	}
	if err != nil {
		return
	}
	for _, p := range pages {
		slices.SortFunc(p, func(a, b store.Contact) int {
			if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
				return c
			}
			return bytes.Compare([]byte(a.ID), []byte(b.ID))
		})
	}
	for i, c := range batch {
		for tag, k := range st.records[i] {
			if k < 0 {
				continue
			}
			for _, r := range recs[tag] {
				if r.part == k {
					r.record(&c.recs, c.projectID)
				}
			}
		}
		p := pages[st.pages[i]]
		c.items = make([]store.Contact, len(p))
		for j, ct := range p {
			ct.ProjectID = c.projectID
			c.items[j] = ct
		}
	}
}

// checkedRow is one row of the statement of ListContactsChecked.
type checkedRow struct {
	tag, part int
	id        string
	b1, b2    []byte
	name      sql.NullString
	n         sql.NullInt64
	t         [5]sql.NullTime
}

func (r *checkedRow) dest() []any {
	return []any{&r.tag, &r.part, &r.id, &r.b1, &r.b2, &r.name, &r.n, &r.t[0], &r.t[1], &r.t[2], &r.t[3], &r.t[4]}
}

// record sets the record of recs that r holds, a copy of its own.
func (r *checkedRow) record(recs *store.TokenRecords, projectID string) {
	switch r.tag {
	case tagSigningKey:
		recs.SigningKey = &store.SigningKey{ID: r.id, ProjectID: projectID, Algorithm: r.name.String,
			PublicKey: bytes.Clone(r.b1), EncryptedPrivateKey: bytes.Clone(r.b2),
			CreatedAt: fromNull(r.t[0]), RetiredAt: fromNull(r.t[1])}
	case tagAPIKey:
		recs.APIKey = &store.APIKey{ID: r.id, ProjectID: projectID, Name: r.name.String,
			CreatedBy: string(r.b1), SigningKeyID: string(r.b2),
			CreatedAt: fromNull(r.t[0]), LastUsedAt: fromNull(r.t[1]), RevokedAt: fromNull(r.t[2]),
			RevokesAt: fromNull(r.t[3])}
	case tagSession:
		recs.Session = &store.RefreshFamily{ID: r.id, ProjectID: projectID, UserID: string(r.b1), Generation: r.n.Int64,
			CreatedAt: fromNull(r.t[0]), IssuedAt: fromNull(r.t[1]), ExpiresAt: fromNull(r.t[2]),
			EndsAt: fromNull(r.t[3]), RevokedAt: fromNull(r.t[4])}
	}
}
