package mysql

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
	"github.com/latchkey-dev/latchkey/store/mysql/mytest"
)

// checkedFixture is two projects, each with two signing keys, two API keys,
// a user with two sessions and contacts; requests name them in every
// combination, and records that do not exist or belong to the other
// project.
type checkedFixture struct {
	st   *Store
	reqs []checkedRequest
}

type checkedRequest struct {
	project string
	ids     store.TokenRecordIDs
	req     paginate.Request
}

func newCheckedFixture(t *testing.T) checkedFixture {
	ctx := t.Context()
	st, err := Open(ctx, mytest.NewDatabase(t), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := checkedFixture{st: st}
	for _, p := range []string{"p", "q"} {
		require.NoError(t, st.CreateProject(ctx, store.Project{ID: p, CreatedAt: base}))
		var sks, keys, fams []string
		for i := range 2 {
			sk := store.SigningKey{ID: fmt.Sprintf("sk_%s%d", p, i), ProjectID: p, Algorithm: store.AlgEdDSA,
				PublicKey: bytes.Repeat([]byte{byte(i + 1)}, 32), EncryptedPrivateKey: bytes.Repeat([]byte{byte(i + 7)}, 40), CreatedAt: base}
			require.NoError(t, st.CreateSigningKey(ctx, sk))
			k := store.APIKey{ID: fmt.Sprintf("key_%s%d", p, i), ProjectID: p, Name: "key", SigningKeyID: sk.ID, CreatedAt: base}
			require.NoError(t, st.CreateAPIKey(ctx, k))
			sks, keys = append(sks, sk.ID), append(keys, k.ID)
		}
		u := store.User{ID: "usr_" + p, ProjectID: p, Email: p + "@example.com", Tags: []string{},
			PasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g", CreatedAt: base}
		require.NoError(t, st.CreateUser(ctx, u))
		for i := range 2 {
			fam := store.RefreshFamily{ID: fmt.Sprintf("rf_%s%d", p, i), ProjectID: p, UserID: u.ID,
				IssuedAt: base, ExpiresAt: base.Add(time.Hour), CreatedAt: base}
			require.NoError(t, st.CreateRefreshFamily(ctx, fam, u.PasswordHash))
			fams = append(fams, fam.ID)
		}
		cs := make([]store.Contact, 7)
		for i := range cs {
			cs[i] = store.Contact{ID: fmt.Sprintf("ct_%s%d", p, i), Name: "c", CreatedAt: base.Add(time.Duration(i/2) * time.Second)}
		}
		require.NoError(t, st.CreateContacts(ctx, p, cs))
		other := map[string]string{"p": "q", "q": "p"}[p]
		for _, sk := range append(sks, "sk_missing", "sk_"+other+"0") {
			for _, key := range []string{keys[0], keys[1], "", "key_" + other + "0"} {
				for _, fam := range []string{"", fams[0], fams[1]} {
					for _, req := range []paginate.Request{
						{Limit: 3},
						{Limit: 2, After: paginate.Cursor{ID: cs[2].ID, CreatedAt: cs[2].CreatedAt}},
						{Limit: 10, After: paginate.Cursor{ID: cs[6].ID, CreatedAt: cs[6].CreatedAt}},
					} {
						f.reqs = append(f.reqs, checkedRequest{p, store.TokenRecordIDs{SigningKeyID: sk, APIKeyID: key, SessionID: fam}, req})
					}
				}
			}
		}
	}
	return f
}

// want returns what the Get methods and ListContacts return for r.
func (f checkedFixture) want(t *testing.T, r checkedRequest) (store.TokenRecords, paginate.Page[store.Contact]) {
	ctx := t.Context()
	var recs store.TokenRecords
	if sk, err := f.st.GetSigningKey(ctx, r.project, r.ids.SigningKeyID); err == nil {
		recs.SigningKey = &sk
	}
	if r.ids.APIKeyID != "" {
		if k, err := f.st.GetAPIKey(ctx, r.project, r.ids.APIKeyID); err == nil {
			k.Scopes, k.ExpiresAt, k.RolledFrom, k.RolledTo = nil, time.Time{}, "", ""
			recs.APIKey = &k
		}
	}
	if r.ids.SessionID != "" {
		if fam, err := f.st.GetRefreshFamily(ctx, r.project, r.ids.SessionID); err == nil {
			recs.Session = &fam
		}
	}
	page, err := f.st.ListContacts(ctx, r.project, r.req)
	require.NoError(t, err)
	return recs, page
}

// One statement serving many calls gives each what a call of its own
// returns: its records (those that do not exist, or are another project's,
// nil) and its page, each a copy of its own.
func TestListContactsChecked_BatchAnswersEachCall(t *testing.T) {
	f := newCheckedFixture(t)
	var batch []*checkedCall
	for _, r := range f.reqs {
		_, fetch := pageSize(r.req)
		c := &checkedCall{projectID: r.project, ids: r.ids, fetch: fetch}
		if !r.req.After.IsZero() {
			c.after = string(position(r.req.After.CreatedAt, r.req.After.ID))
		}
		batch = append(batch, c)
	}
	serveChecked(t.Context(), f.st, batch)
	for i, r := range f.reqs {
		c := batch[i]
		require.NoError(t, c.err)
		wantRecs, wantPage := f.want(t, r)
		require.Equalf(t, wantRecs, c.recs, "request %d: %+v", i, r)
		limit, _ := pageSize(r.req)
		require.Equalf(t, wantPage, paginate.PageOf(c.items, limit), "request %d: %+v", i, r)
	}
	// Calls naming one record get distinct copies.
	a, b := batch[0], batch[3] // one signing key, one page
	require.Equal(t, a.recs.SigningKey.ID, b.recs.SigningKey.ID)
	a.recs.SigningKey.PublicKey[0] ^= 0xff
	require.NotEqual(t, a.recs.SigningKey.PublicKey, b.recs.SigningKey.PublicKey)
	require.NotSame(t, &a.items[0], &b.items[0])
}

// Many goroutines calling at once, more than there are lanes, so that calls
// queue and are served in batches, each get their own answer.
func TestListContactsChecked_Concurrent(t *testing.T) {
	f := newCheckedFixture(t)
	want := make([]struct {
		recs store.TokenRecords
		page paginate.Page[store.Contact]
	}, len(f.reqs))
	for i, r := range f.reqs {
		want[i].recs, want[i].page = f.want(t, r)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*checkedLanes)
	for g := range 4 * checkedLanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 3 * len(f.reqs) / (4 * checkedLanes) {
				i := (g*7 + j) % len(f.reqs)
				r := f.reqs[i]
				recs, page, err := f.st.ListContactsChecked(context.Background(), r.project, r.ids, r.req)
				if err == nil && (!reflect.DeepEqual(recs, want[i].recs) || !reflect.DeepEqual(page, want[i].page)) {
					err = fmt.Errorf("request %d %+v: got %v %v, want %v %v", i, r, recs, page, want[i].recs, want[i].page)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Once maxPrepared texts are prepared, a new text is sent as text, with
// the same answers.
func TestListContactsChecked_PastMaxPrepared(t *testing.T) {
	f := newCheckedFixture(t)
	for i := 0; len(f.st.stmts.m) < maxPrepared; i++ {
		_, err := f.st.prepared(t.Context(), fmt.Sprintf("SELECT %d", i))
		require.NoError(t, err)
	}
	for i, r := range f.reqs[:8] {
		recs, page, err := f.st.ListContactsChecked(t.Context(), r.project, r.ids, r.req)
		require.NoError(t, err)
		wantRecs, wantPage := f.want(t, r)
		require.Equalf(t, wantRecs, recs, "request %d: %+v", i, r)
		require.Equalf(t, wantPage, page, "request %d: %+v", i, r)
	}
	require.Len(t, f.st.stmts.m, maxPrepared)
}
