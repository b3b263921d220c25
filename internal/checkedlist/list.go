package checkedlist

import (
	"context"
	"errors"
	"net/http"

	"github.com/latchkey-dev/latchkey/internal/storetrace"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/problem"
	"github.com/latchkey-dev/latchkey/store"
)

// Reads are the ways a store reads a project's list of T.
type Reads[T any] struct {
	// List reads a page (as store.ContactStore.ListContacts). It is
	// required.
	List func(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[T], error)
	// Checked reads what List reads and the records ids names, in one
	// snapshot (as store.CheckedContactLister.ListContactsChecked), or is
	// nil.
	Checked func(ctx context.Context, projectID string, ids store.TokenRecordIDs, req paginate.Request) (store.TokenRecords, paginate.Page[T], error)
	// Versioned reads what List reads and the change version of the
	// verifier's own store in one read (as
	// store.VersionedContactLister.ListContactsVersioned), or is nil. It
	// is used only when Checked is nil.
	Versioned func(ctx context.Context, projectID string, req paginate.Request) (uint64, paginate.Page[T], error)
}

// List is an authenticated list of T whose token check rides with its
// read. It is safe for concurrent use.
type List[T any] struct {
	v     *keys.Verifier
	reads Reads[T]
}

// New returns the list read by reads, its tokens checked by v. Versioned
// must read v's own store (keys.Verifier.KeepsRecordsAt). It panics if v
// or reads.List is nil.
func New[T any](v *keys.Verifier, reads Reads[T]) *List[T] {
	if v == nil || reads.List == nil {
		panic("checkedlist: New with a nil verifier or List")
	}
	return &List[T]{v: v, reads: reads}
}

// Contacts returns the list of contacts of st, its tokens checked by v. It
// reads with st's store.CheckedContactLister, or else with its
// store.VersionedContactLister when that is v's own store, found with
// store.As; each such read is traced as a span of the tracing layer found
// in st's chain, if any.
func Contacts(v *keys.Verifier, st store.Store) *List[store.Contact] {
	tr, _ := store.As[*storetrace.Store](st) // nil: no spans
	reads := Reads[store.Contact]{List: st.ListContacts}
	if cl, ok := store.As[store.CheckedContactLister](st); ok {
		reads.Checked = func(ctx context.Context, projectID string, ids store.TokenRecordIDs, req paginate.Request) (store.TokenRecords, paginate.Page[store.Contact], error) {
			ctx, span := tr.Start(ctx, "store.ListContactsChecked", projectID)
			recs, page, err := cl.ListContactsChecked(ctx, projectID, ids, req)
			storetrace.End(span, err)
			return recs, page, err
		}
	} else if vl, ok := store.As[store.VersionedContactLister](st); ok && v.KeepsRecordsAt(vl) {
		reads.Versioned = func(ctx context.Context, projectID string, req paginate.Request) (uint64, paginate.Page[store.Contact], error) {
			ctx, span := tr.Start(ctx, "store.ListContactsVersioned", projectID)
			ver, page, err := vl.ListContactsVersioned(ctx, projectID, req)
			storetrace.End(span, err)
			return ver, page, err
		}
	}
	return New(v, reads)
}

// Combines reports whether the list reads a pending check's records, or
// the version they are kept at, with its page in one store call; then
// Middleware defers the check to the read.
func (l *List[T]) Combines() bool {
	return l.reads.Checked != nil || l.reads.Versioned != nil
}

// Middleware returns next, a read-only handler that reads through l.Read,
// behind the bearer check. When the list combines reads (Combines), a
// token the verifier's cache holds is admitted with its check pending, to
// be decided by l.Read, and next's answer is held until the check is
// decided (see the package documentation); any other token is checked
// before next runs. Otherwise it is keys.Verifier.Middleware.
func (l *List[T]) Middleware(next http.Handler) http.Handler {
	if !l.Combines() {
		return l.v.Middleware(next)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := l.v.BeginCheck(w, r)
		if c == nil {
			return // answered
		}
		rc := r.WithContext(c.Context(r.Context()))
		if c.Decided() {
			next.ServeHTTP(w, rc)
			return
		}
		g := &guard{w: w, r: r, c: c}
		next.ServeHTTP(g, rc)
		g.allowed() // a handler that wrote nothing: a refusal is still answered
	})
}

// Read returns a page of projectID's list. When ctx's request has a
// pending check (keys.PendingCheck), the same store call reads what decides
// it, and Read decides it: a refused token gets an error that answers 401
// (which Middleware's guard replaces by its own answer) and no page. Else
// it is Reads.List.
func (l *List[T]) Read(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[T], error) {
	c := keys.PendingCheck(ctx, projectID)
	if c == nil {
		return l.reads.List(ctx, projectID, req)
	}
	var (
		page paginate.Page[T]
		err  error
	)
	if l.reads.Checked != nil {
		var recs store.TokenRecords
		recs, page, err = l.reads.Checked(ctx, projectID, c.RecordIDs(), req)
		if err == nil {
			err = refusal(c.DecideWith(ctx, recs))
		}
	} else {
		var ver uint64
		ver, page, err = l.reads.Versioned(ctx, projectID, req)
		if err == nil {
			err = refusal(c.DecideAt(ctx, ver))
		}
	}
	if err != nil {
		return paginate.Page[T]{}, err // nothing of a refused token's page
	}
	return page, nil
}

// refusal is the error of a list whose token a decision refused (nil when
// the decision, err, admits it).
func refusal(err error) error {
	if errors.Is(err, keys.ErrInvalidToken) {
		return problem.Unauthorized(true).WithCause(err)
	}
	return err
}

// ContactStore returns st with its ListContacts read through l, for a
// handler that lists from a store.ContactStore.
func ContactStore(st store.ContactStore, l *List[store.Contact]) store.ContactStore {
	return contactStore{st, l.Read}
}

// contactStore is what ContactStore returns.
type contactStore struct {
	store.ContactStore
	read func(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[store.Contact], error)
}

func (s contactStore) ListContacts(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[store.Contact], error) {
	return s.read(ctx, projectID, req)
}
