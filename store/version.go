package store

import (
	"context"

	"github.com/latchkey-dev/latchkey/paginate"
)

// ChangeVersioner is an optional capability of a store: a cheap signal that
// the database may have changed. A caller that reads records often (the
// token verifier reads a signing key and an API key on every request) can
// keep copies of them and reuse a copy for as long as the version has not
// changed, without weakening the rule that a write committed by any handle
// is seen by the next read of every other.
//
// Callers discover it with [As] on the store they were given, which also
// finds it behind wrappers:
//
//	if cv, ok := store.As[store.ChangeVersioner](st); ok { ... }
//
// A store that cannot keep the contract below cheaply does not implement
// it; callers then read the store every time.
type ChangeVersioner interface {
	// ChangeVersion returns the database's current change version.
	//
	// Contract, for any two calls on one handle where the earlier call
	// returned v1 and the later call returned v2 with no error:
	//
	//   - If any handle on the database (this one, another one in this
	//     process, or one in another process) committed a write after the
	//     earlier call returned, then v2 differs from v1 and from every
	//     other value this handle returned before the commit.
	//   - Consequently, v2 == v1 guarantees that no write was committed
	//     between the two calls, so a record read after the call that
	//     returned v1 is still current when a later call returns v1 again.
	//     (A write committed while the earlier call ran may or may not be
	//     reflected in v1; if it is not, v2 differs.)
	//   - A version may change without any write (a reconnection, a
	//     checkpoint): that only costs the caller a read.
	//
	// The safe usage is therefore: call ChangeVersion, then read the
	// record, and tag the copy with the version returned before the read;
	// later, reuse the copy only while ChangeVersion returns that tag.
	//
	// It reads no table: it costs a few microseconds at most. An error
	// (a closed store, an I/O failure) says nothing about changes; the
	// caller must then read the store.
	ChangeVersion(ctx context.Context) (uint64, error)
}

// VersionedContactLister is an optional capability of a ChangeVersioner: a
// page of contacts read together with the change version, in one read. A
// caller that keeps records tagged with change versions (the token verifier)
// learns from it whether they are still current, so that an authenticated
// list whose records are kept costs the store one read instead of two.
// store/sqlite implements it.
//
// Callers discover it with [As] on the store they were given, which also
// finds it behind wrappers:
//
//	if vl, ok := store.As[store.VersionedContactLister](st); ok { ... }
type VersionedContactLister interface {
	ChangeVersioner
	// ListContactsVersioned returns what ListContacts(ctx, projectID, req)
	// returns, and a change version read during the call: a value that
	// ChangeVersion could have returned to a call made at that point, under
	// the same contract. In particular it differs from every value returned
	// (by either method) before a write that was committed before the call
	// began.
	ListContactsVersioned(ctx context.Context, projectID string, req paginate.Request) (uint64, paginate.Page[Contact], error)
}
