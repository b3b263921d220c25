// Package contacts serves the contacts list of the /v1 API:
// GET {base_url}/v1/contacts.
//
// The handler lists the contacts of the request's project (read only from
// [tenant.FromContext]) in ascending (created_at, id) order, a page at a time,
// with the limit and cursor parameters of package paginate. It does not
// check the bearer token: the mounting handler puts it behind the token
// verifier, so any valid token of the project (a login token or a permanent
// API key) may list.
//
// # Response
//
//	{"data": [{"id": "ct_…", "name": "Ada", "created_at": "2026-11-21T10:15:30.123456Z"}],
//	 "pagination": {"limit": 25, "has_more": true, "next_cursor": "ct_…:2026-11-21T10:15:30.123456Z"}}
//
// created_at is RFC 3339 in UTC with exactly six fractional digits, the same
// form as the time half of a cursor. A bad limit is answered with 400
// invalid_parameter and a bad cursor with 400 invalid_cursor, both as
// problem+json.
//
// # Usage
//
//	h := contacts.NewHandler(st, nil)
//	mux.Handle("GET /v1/contacts", verifier.Middleware(h))
package contacts
