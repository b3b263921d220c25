package store

import (
	"context"

	"github.com/latchkey-dev/latchkey/paginate"
)

// TokenRecordIDs names the records a bearer token's validity depends on,
// in one project: the signing key that signed it, and the API key or the
// session it speaks for. An empty id names no record.
type TokenRecordIDs struct {
	// SigningKeyID is the token's kid.
	SigningKeyID string
	// APIKeyID is the subject of an API key token, or "".
	APIKeyID string
	// SessionID is the sid of a login token, or "".
	SessionID string
}

// TokenRecords are the records TokenRecordIDs names, as one read saw them.
// A nil field is a record that was not asked for (its id was empty) or
// does not exist.
type TokenRecords struct {
	SigningKey *SigningKey
	APIKey     *APIKey
	Session    *RefreshFamily
}

// CheckedContactLister is an optional capability of a store: a page of
// contacts read together with the records a bearer token depends on, in
// one snapshot of the database. A verifier that already checked a token's
// signature and claims decides from the records whether the page may be
// sent, so that an authenticated list costs one read instead of one per
// record plus the list. store/postgres implements it with one statement
// (one round trip, which concurrent calls share).
//
// Callers discover it with [As] on the store they were given, which also
// finds it behind wrappers:
//
//	if cl, ok := store.As[store.CheckedContactLister](st); ok { ... }
type CheckedContactLister interface {
	// ListContactsChecked returns what ListContacts(ctx, projectID, req)
	// returns, and the records ids names in projectID, all read in one
	// snapshot: a write committed by any handle before the call began is
	// reflected in the records and in the page alike. Each record is
	// returned whole, as its Get method returns it, and is the caller's:
	// changing it changes nothing a later call returns. (An API key's
	// Scopes, ExpiresAt, RolledFrom and RolledTo may be left empty: its
	// token carries its scopes and expiry. Its RevokedAt, which may be a
	// scheduled time, is always returned.)
	//
	// It returns an error matching ErrInvalid when ListContacts would, or
	// when a non-empty id of ids is not a valid id (CheckKey); a record
	// that does not exist, or of another project, is a nil field, not an
	// error.
	ListContactsChecked(ctx context.Context, projectID string, ids TokenRecordIDs, req paginate.Request) (TokenRecords, paginate.Page[Contact], error)
}

// CheckTokenRecordIDs returns an error matching ErrInvalid when projectID
// is not a valid project id or a non-empty id of ids is not a valid id.
func CheckTokenRecordIDs(projectID string, ids TokenRecordIDs) error {
	if err := CheckProjectID(projectID); err != nil {
		return err
	}
	for _, k := range []struct{ what, id string }{
		{"signing key id", ids.SigningKeyID}, {"API key id", ids.APIKeyID}, {"session id", ids.SessionID},
	} {
		if k.id == "" {
			continue
		}
		if err := CheckID(k.what, k.id); err != nil {
			return err
		}
	}
	return nil
}
