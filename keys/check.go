package keys

import (
	"context"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

// Check is the check of one request's bearer token, split where it reads
// the store, for a read-only handler that reads the token's records with
// its answer (internal/checkedlist). [Verifier.BeginCheck] makes it: the
// token is verified once (found in the verification cache, or parsed and
// its signature checked), and the records of its signing key, API key or
// session are checked at once or left pending. A pending check is decided
// once, by one of Decide, DecideWith and DecideAt, from the claims
// BeginCheck verified: no later step sees the token again. Its methods are
// safe for concurrent use.
type Check struct {
	v       *Verifier
	project string
	claims  *Claims
	now     time.Time
	auth    requestAuth // what Context puts in a context

	mu   sync.Mutex
	done bool
	err  error // the decision, once done: nil admits the token
}

// BeginCheck starts the check of r's bearer token for the request's project
// (tenant.FromContext). A token the verification cache holds, valid by the
// clock at now, gives a pending check: its records are still to be read.
// Any other token is checked at once, exactly as [Verifier.Middleware]
// checks it, and gives a decided check. A request without a well-formed
// token, or whose token is refused, or without a project, is answered as
// Middleware answers it, and BeginCheck returns nil.
func (v *Verifier) BeginCheck(w http.ResponseWriter, r *http.Request) *Check {
	project, token, ok := v.bearer(w, r, "BeginCheck")
	if !ok {
		return nil
	}
	c, err := v.begin(r.Context(), project, token)
	if err != nil {
		v.refuse(w, r, project, err)
		return nil
	}
	return c
}

// begin checks token for projectID as far as it can without the store: a
// token in the verification cache and valid at now gives a pending check.
// Any other token is verified at once (verify), and gives a decided check
// or its refusal.
func (v *Verifier) begin(ctx context.Context, projectID, token string) (*Check, error) {
	c := &Check{v: v, project: projectID, now: v.now()}
	if token != "" && len(token) <= MaxTokenBytes && projectID != "" {
		claims, hit, err := v.cached(TokenKey(token), projectID, c.now)
		if err != nil {
			v.metrics.verified(ctx, hit, err) // the token's one verification
			return nil, err
		}
		if hit {
			c.claims = claims
			c.auth = requestAuth{principal: principalOf(projectID, claims), pending: c}
			return c, nil
		}
	}
	claims, err := v.verify(ctx, projectID, token, true)
	if err != nil {
		return nil, err
	}
	c.claims, c.done = claims, true
	c.auth = requestAuth{principal: principalOf(projectID, claims)}
	return c, nil
}

// Context returns ctx carrying the check's principal, for
// [PrincipalFromContext], and, while the check is pending, the check, for
// [PendingCheck].
func (c *Check) Context(ctx context.Context) context.Context {
	return contextWithAuth(ctx, &c.auth)
}

// PendingCheck returns the pending check of the token of ctx's request,
// made by BeginCheck for projectID, or nil when there is none to decide.
func PendingCheck(ctx context.Context, projectID string) *Check {
	a, _ := ctx.Value(authKey{}).(*requestAuth)
	if a == nil || a.pending == nil || a.pending.project != projectID || a.pending.Decided() {
		return nil
	}
	return a.pending
}

// RecordIDs names the records the check depends on, for a read of them
// with the answer (store.CheckedContactLister).
func (c *Check) RecordIDs() store.TokenRecordIDs {
	ids := store.TokenRecordIDs{SigningKeyID: c.claims.KeyID}
	switch c.claims.Kind() {
	case KindAPIKey:
		ids.APIKeyID = c.claims.Subject
	case KindUser:
		ids.SessionID = c.claims.SessionID
	}
	return ids
}

// Decided reports whether the check is decided.
func (c *Check) Decided() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done
}

// Decide decides the check, if it is not yet, by reading its records from
// the Verifier's store as Verify does (the kept ones while the store's
// change version is their tag), and returns the decision: nil admits the
// token; a refusal matches [ErrInvalidToken]; any other error is a store
// failure.
func (c *Check) Decide(ctx context.Context) error {
	return c.decideAt(ctx, &requestVersion{})
}

// DecideAt is Decide with version, the change version a read of the
// Verifier's own store returned during the request (a
// store.VersionedContactLister for which [Verifier.KeepsRecordsAt] is
// true): the records kept at that version are used, the others read.
func (c *Check) DecideAt(ctx context.Context, version uint64) error {
	return c.decideAt(ctx, &requestVersion{ver: version, ok: true, done: true})
}

// decideAt decides the check with the request's change version in rv: an
// empty rv reads the version first, as Verify does.
func (c *Check) decideAt(ctx context.Context, rv *requestVersion) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done {
		err := c.v.checkSigningKey(ctx, c.project, c.claims.KeyID, rv)
		if err == nil {
			err = c.v.checkRecords(ctx, c.project, c.claims, c.now, true, rv)
		}
		c.done, c.err = true, err
		c.v.metrics.verified(ctx, true, err)
	}
	return c.err
}

// DecideWith decides the check, if it is not yet, from recs, the records
// RecordIDs names as one read saw them, by Verify's rules, and returns the
// decision as Decide does.
func (c *Check) DecideWith(ctx context.Context, recs store.TokenRecords) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done {
		c.done, c.err = true, c.allows(ctx, recs)
		c.v.metrics.verified(ctx, true, c.err)
	}
	return c.err
}

// allows refuses the token unless recs allow it at c.now.
func (c *Check) allows(ctx context.Context, recs store.TokenRecords) error {
	cl := c.claims
	if recs.SigningKey == nil {
		return unknownKid()
	}
	if err := signingRecordOf(*recs.SigningKey, 0).live(); err != nil {
		return err
	}
	switch cl.Kind() {
	case KindUser:
		// Parse refuses a login token without a sid.
		if recs.Session == nil {
			return unknownSession()
		}
		return sessionRecord{family: *recs.Session}.allows(cl, c.now)
	case KindAPIKey:
		if recs.APIKey == nil {
			return unknownAPIKey()
		}
		return c.v.useAPIKey(ctx, recordKey{c.project, cl.Subject}, apiKeyRecordOf(*recs.APIKey, 0), c.now, true)
	}
	return nil
}

// Refuse answers r, whose check decided err, as Middleware answers a
// refused token (401 with the RFC 6750 challenge, logged) or a store
// failure.
func (c *Check) Refuse(w http.ResponseWriter, r *http.Request, err error) {
	c.v.refuse(w, r, c.project, err)
}

// KeepsRecordsAt reports whether the Verifier keeps records tagged with
// cv's change versions: cv is the change signal of the store the Verifier
// reads (found with store.As). A version read from another store says
// nothing of the records kept, and must not be given to DecideAt.
func (v *Verifier) KeepsRecordsAt(cv store.ChangeVersioner) bool {
	return v.versioner != nil && cv != nil && sameValue(cv, v.versioner)
}

// sameValue reports whether a and b hold one value of one type. Values that
// cannot be compared are not the same.
func sameValue(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.IsValid() && vb.IsValid() && va.Type() == vb.Type() &&
		va.Comparable() && vb.Comparable() && va.Equal(vb)
}
