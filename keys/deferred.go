package keys

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/store"
)

// DeferredMiddleware is [Verifier.Middleware] for read-only handlers that
// read through a store wrapped by [Verifier.CheckedContacts], so that a
// request can read the token's records and its answer in one store call.
//
// A token the verification cache already holds, valid by the clock, is
// admitted to next with its check pending: the records of its signing key,
// API key or session are still to be read. The handler's writes are held
// until the check is decided: a CheckedContacts read decides it from the
// records it read with the page; otherwise the first write (or the
// handler's return) reads the records from the store as Middleware does.
// No byte of the handler's answer (not even its status) is sent before the
// records allow it; a refused token is answered 401 as Middleware answers
// it, and the handler's answer is dropped. Any other token is checked
// first, exactly as Middleware checks it.
//
// next must not change anything on the strength of the principal in its
// context before the check is decided: it is for handlers that only read.
func (v *Verifier) DeferredMiddleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		project, token, ok := v.bearer(w, r, "DeferredMiddleware")
		if !ok {
			return
		}
		pc, err := v.begin(ctx, project, token)
		if err != nil {
			v.refuse(w, r, project, err)
			return
		}
		auth := &requestAuth{principal: principalOf(project, pc.claims)}
		if pc.done {
			next.ServeHTTP(w, r.WithContext(contextWithAuth(ctx, auth)))
			return
		}
		auth.pending = pc
		g := &guardedWriter{w: w, r: r, pc: pc}
		next.ServeHTTP(g, r.WithContext(contextWithAuth(ctx, auth)))
		g.allowed() // a handler that wrote nothing: a refusal is still answered
	})
}

// pendingCheck is the check of one request's token whose signature and
// claims are verified while the records it depends on may still be to
// read. It is decided once; its methods are safe for concurrent use.
type pendingCheck struct {
	v       *Verifier
	project string
	claims  *Claims
	now     time.Time

	mu   sync.Mutex
	done bool
	err  error // the decision, once done: nil admits the token
}

// begin checks token for projectID as far as it can without the store: a
// token in the verification cache and valid at now gives an undecided
// check. Any other token is verified at once (Verify), and gives a decided
// check or its refusal.
func (v *Verifier) begin(ctx context.Context, projectID, token string) (*pendingCheck, error) {
	pc := &pendingCheck{v: v, project: projectID, now: v.now()}
	if token != "" && len(token) <= MaxTokenBytes && projectID != "" {
		c, hit, err := v.cached(TokenKey(token), projectID, pc.now)
		if err != nil {
			return nil, err
		}
		if hit {
			pc.claims = c
			return pc, nil
		}
	}
	c, err := v.verify(ctx, projectID, token, true)
	if err != nil {
		return nil, err
	}
	pc.claims, pc.done = c, true
	return pc, nil
}

// ids names the records the check depends on.
func (pc *pendingCheck) ids() store.TokenRecordIDs {
	ids := store.TokenRecordIDs{SigningKeyID: pc.claims.KeyID}
	switch pc.claims.Kind() {
	case KindAPIKey:
		ids.APIKeyID = pc.claims.Subject
	case KindUser:
		ids.SessionID = pc.claims.SessionID
	}
	return ids
}

// decided reports whether the check is decided.
func (pc *pendingCheck) decided() bool {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.done
}

// decide decides the check, if it is not yet, by reading the records from
// the store, and returns the decision.
func (pc *pendingCheck) decide(ctx context.Context) error {
	return pc.decideAt(ctx, &requestVersion{})
}

// decideAt is decide with the request's change version in rv: records
// kept at that version are used, the others read from the store. An empty
// rv reads the version first, as Verify does.
func (pc *pendingCheck) decideAt(ctx context.Context, rv *requestVersion) error {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if !pc.done {
		err := pc.v.checkSigningKey(ctx, pc.project, pc.claims.KeyID, rv)
		if err == nil {
			err = pc.v.checkRecords(ctx, pc.project, pc.claims, pc.now, true, rv)
		}
		pc.done, pc.err = true, err
		pc.v.metrics.verified(ctx, true, err)
	}
	return pc.err
}

// decideWith decides the check, if it is not yet, from recs, the records
// ids names as one read saw them, and returns the decision. The rules are
// Verify's.
func (pc *pendingCheck) decideWith(ctx context.Context, recs store.TokenRecords) error {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if !pc.done {
		pc.done, pc.err = true, pc.allows(ctx, recs)
		pc.v.metrics.verified(ctx, true, pc.err)
	}
	return pc.err
}

// allows refuses the token unless recs allow it at pc.now.
func (pc *pendingCheck) allows(ctx context.Context, recs store.TokenRecords) error {
	c := pc.claims
	if recs.SigningKey == nil {
		return unknownKid()
	}
	if err := signingRecordOf(*recs.SigningKey, 0).live(); err != nil {
		return err
	}
	switch c.Kind() {
	case KindUser:
		// Parse refuses a login token without a sid.
		if recs.Session == nil {
			return unknownSession()
		}
		return sessionRecord{family: *recs.Session}.allows(c, pc.now)
	case KindAPIKey:
		if recs.APIKey == nil {
			return unknownAPIKey()
		}
		return pc.v.useAPIKey(ctx, recordKey{pc.project, c.Subject}, apiKeyRecordOf(*recs.APIKey, 0), pc.now, true)
	}
	return nil
}

// errWriteRefused is what a handler's Write returns once its request's
// token was refused: its answer is not sent.
var errWriteRefused = errors.New("keys: the request's token was refused; its answer is not sent")

// guardedWriter holds a handler's answer until its request's pending check
// is decided, and answers 401 instead when the token is refused.
// Deliberately, it has no Unwrap: http.ResponseController must not reach
// the connection around it.
type guardedWriter struct {
	w  http.ResponseWriter
	h  http.Header // the handler's headers while held (nil until asked for)
	r  *http.Request
	pc *pendingCheck

	state guardState
}

type guardState uint8

const (
	undecided guardState = iota
	admitted
	refused // the 401 is written
)

// allowed decides the check if needed (reading the store), answers a
// refusal, and reports whether the handler's answer may be sent.
func (g *guardedWriter) allowed() bool {
	if g.state == undecided {
		if err := g.pc.decide(g.r.Context()); err != nil {
			// The refusal goes out with the headers set before the
			// handler ran (the request id), not the handler's.
			g.pc.v.refuse(g.w, g.r, g.pc.project, err)
			g.state = refused
		} else {
			if g.h != nil {
				out := g.w.Header()
				clear(out)
				maps.Copy(out, g.h)
			}
			g.state = admitted
		}
	}
	return g.state == admitted
}

// Header returns the handler's headers. Once the token is admitted they are
// w's own. While the check is undecided they are a copy of those set
// before the handler ran, sent only if the token is admitted; after a
// refusal, a map that is never sent. A check already decided (by a
// CheckedContacts read) is settled here, so an admitted request's headers
// are not copied.
func (g *guardedWriter) Header() http.Header {
	if g.state == undecided && g.h == nil && g.pc.decided() {
		g.allowed() // decided: no store read
	}
	switch {
	case g.state == admitted:
		return g.w.Header() // with the copy's headers, if it had one
	case g.h == nil:
		g.h = g.w.Header().Clone()
	}
	return g.h
}

func (g *guardedWriter) WriteHeader(status int) {
	if g.allowed() {
		g.w.WriteHeader(status)
	}
}

func (g *guardedWriter) Write(b []byte) (int, error) {
	if !g.allowed() {
		return 0, errWriteRefused
	}
	return g.w.Write(b)
}

// Flush flushes the handler's answer once it may be sent.
func (g *guardedWriter) Flush() {
	if g.allowed() {
		if f, ok := g.w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

// CheckedContacts returns st for a handler behind
// [Verifier.DeferredMiddleware]. When the request's token check is pending,
// its ListContacts decides the check with the page, in one store call:
//
//   - when st implements [store.CheckedContactLister] (PostgreSQL), it reads
//     the page and the token's records (ListContactsChecked) and decides
//     from those records;
//   - else, when st implements [store.VersionedContactLister] (SQLite) and
//     is the store the Verifier reads, it reads the page and the change
//     version (ListContactsVersioned) and decides from the records the
//     Verifier keeps at that version, reading only those it does not.
//
// A refused token gets an error (a 401 answer, which DeferredMiddleware
// replaces by its own) and no page. In every other case it is st's
// ListContacts. When st implements neither capability, CheckedContacts
// returns st itself.
func (v *Verifier) CheckedContacts(st store.ContactStore) store.ContactStore {
	if cl, ok := store.As[store.CheckedContactLister](st); ok {
		return combinedContacts{st, func(ctx context.Context, pc *pendingCheck, projectID string, req paginate.Request) (paginate.Page[store.Contact], error) {
			recs, page, err := cl.ListContactsChecked(ctx, projectID, pc.ids(), req)
			if err != nil {
				return page, err
			}
			return page, refusal(pc.decideWith(ctx, recs))
		}}
	}
	if vl, ok := v.versioned(st); ok {
		return combinedContacts{st, func(ctx context.Context, pc *pendingCheck, projectID string, req paginate.Request) (paginate.Page[store.Contact], error) {
			ver, page, err := vl.ListContactsVersioned(ctx, projectID, req)
			if err != nil {
				return page, err
			}
			return page, refusal(pc.decideAt(ctx, &requestVersion{ver: ver, ok: true, done: true}))
		}}
	}
	return st
}

// CombinesReads reports whether CheckedContacts(st) reads a pending check's
// records, or the version they are kept at, with the page in one store
// call: then DeferredMiddleware is the middleware for a handler listing
// through it. Otherwise holding the answer for a separate check would only
// add work, and Middleware is.
func (v *Verifier) CombinesReads(st store.ContactStore) bool {
	_, ok := v.CheckedContacts(st).(combinedContacts)
	return ok
}

// versioned returns st as a VersionedContactLister when it is one and is the
// store whose change versions tag the Verifier's records: another store's
// versions say nothing about them.
func (v *Verifier) versioned(st store.ContactStore) (store.VersionedContactLister, bool) {
	vl, ok := store.As[store.VersionedContactLister](st)
	if !ok || v.versioner == nil || !sameValue(vl, v.versioner) {
		return nil, false
	}
	return vl, true
}

// sameValue reports whether a and b hold one value of one type. Values that
// cannot be compared are not the same.
func sameValue(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.IsValid() && vb.IsValid() && va.Type() == vb.Type() &&
		va.Comparable() && vb.Comparable() && va.Equal(vb)
}

// pendingOf returns the request's pending check for projectID, or nil when
// there is none to decide.
func pendingOf(ctx context.Context, projectID string) *pendingCheck {
	a, _ := ctx.Value(authKey{}).(*requestAuth)
	if a == nil || a.pending == nil || a.pending.project != projectID || a.pending.decided() {
		return nil
	}
	return a.pending
}

// refusal is the error of a list whose token a decision refused (nil when
// the decision, err, admits it).
func refusal(err error) error {
	if errors.Is(err, ErrInvalidToken) {
		return problem.Unauthorized(true).WithCause(err)
	}
	return err
}

// combinedContacts is the store CheckedContacts returns. Its ListContacts
// decides a pending check with the page: list reads both in one store call
// and decides pc from what it read, returning the page and the decision (or
// the store's error). Without a pending check it is the store's ListContacts.
type combinedContacts struct {
	store.ContactStore
	list func(ctx context.Context, pc *pendingCheck, projectID string, req paginate.Request) (paginate.Page[store.Contact], error)
}

func (s combinedContacts) ListContacts(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[store.Contact], error) {
	pc := pendingOf(ctx, projectID)
	if pc == nil {
		return s.ContactStore.ListContacts(ctx, projectID, req)
	}
	page, err := s.list(ctx, pc, projectID, req)
	if err != nil {
		return paginate.Page[store.Contact]{}, err // nothing of a refused token's page
	}
	return page, nil
}
