// Package latchkey mounts the whole Latchkey API in a host application with
// one call, and offers the administrative operations (projects, users,
// contacts, API keys) that the example server's command line and the web
// console perform.
//
// # Mounting
//
// [New] assembles every part on one store.Store and a 32-byte master key
// (which seals the projects' private signing keys and keys the refresh
// tokens' MAC). [Latchkey.Handler] returns one http.Handler that serves,
// for the project its resolver names:
//
//	POST /v1/identity/login      email and password -> token set (no token needed)
//	POST /v1/identity/refresh    refresh token -> token set (no token needed)
//	GET  /.well-known/jwks.json  the project's public keys (no token needed)
//	GET  /v1/contacts            the contacts list (Authorization: Bearer <token>)
//	     /console/               the web console, when Options.Console is set
//
// Unknown paths are 404 not_found, wrong methods 405 method_not_allowed with
// Allow, a project that does not exist 404 not_found, all as RFC 9457
// problem+json.
//
//	st, err := sqlite.Open(ctx, "latchkey.db", nil)
//	if err != nil { ... }
//	defer st.Close()
//	lk, err := latchkey.New(st, masterKey, nil)
//	if err != nil { ... }
//	mux := http.NewServeMux()
//	mux.Handle("/v1/", lk.Handler())
//	mux.Handle("/.well-known/", lk.Handler())
//	// ... the host's own routes
//
// # Projects
//
// Every request belongs to one project (a tenant with its own users,
// contacts, API keys and signing keys). Options.Resolver names it, from the
// host, a header or anything else of the request; the default serves the
// project "default", which New creates if it does not exist. A token of one
// project is rejected by every other.
//
// [Latchkey.PathHandler] is the routing of the example server: project P at
// http://host/p/P and one fallback project (usually "default") at
// http://host.
//
// The existence of a project is checked on every request. Positive answers
// are cached (projects are never deleted); a project another process has
// just created is served from its first request.
//
// # Administration
//
// [Latchkey.CreateProject], [Latchkey.CreateUser], [Latchkey.CreateContact],
// [Latchkey.SeedContacts], [Latchkey.CreateAPIKey], [Latchkey.ListAPIKeys] and
// [Latchkey.RevokeAPIKey] act on the store directly. They may run in another
// process than the servers (the example server's command line does): every
// server on the same store sees their effect on its next request, a revoked
// API key included.
package latchkey
