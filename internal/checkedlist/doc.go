// Package checkedlist serves an authenticated list whose token check rides
// with the query: the fast path of GET /v1/contacts, in one place.
//
// A bearer token's signature and claims are checked once per request, by
// keys.Verifier.BeginCheck, from the verification cache when it holds the
// token. What can change between two requests (the records of the token's
// signing key, API key or session) is then read with the page, in the
// page's own store call, when the store can:
//
//   - a store.CheckedContactLister (PostgreSQL, MySQL) reads the page and
//     the token's records in one snapshot, and the check is decided from
//     those records (keys.Check.DecideWith);
//   - a store.VersionedContactLister that is the verifier's own store
//     (SQLite) reads the page and the change version in one read, and the
//     check is decided from the records the verifier keeps at that version
//     (keys.Check.DecideAt), reading only those it does not keep.
//
// Until the check is decided, the handler's answer is held by the guard
// (guard.go): no byte of it, not even its status, is sent before the
// records allow the token, and a refused token is answered 401 as
// keys.Verifier.Middleware answers it. A store with neither capability is
// served behind keys.Verifier.Middleware, which checks the records before
// the handler runs: holding the answer would only add work.
//
// # Finding the capabilities
//
// The capabilities are found with store.As, through any wrapper's Unwrap
// (the tracing layer, a checking layer), so a wrapper need not re-declare
// them. The combined read is a store read like any other and is traced as
// one: the list opens its span ("store.ListContactsChecked",
// "store.ListContactsVersioned") with the tracing layer it finds in the
// store's chain (storetrace.Store.Start), as that layer traces
// ListContacts.
//
// # Usage
//
//	list := checkedlist.Contacts(verifier, st)
//	h := list.Middleware(contacts.NewHandler(checkedlist.ContactStore(st, list), nil))
//
// The handler must only read: it runs, with the principal in its context,
// before the token's records are checked.
package checkedlist
