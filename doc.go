// Package latchkey wires Latchkey's parts on one store and mounts them: the
// /v1 identity and contacts API, the discovery document and key set, and the
// web console, for every project a host serves.
//
// # Mounting
//
// [New] assembles every part on one store.Store and a 32-byte master key
// (which seals the projects' private signing keys and keys the refresh
// tokens' MAC). [Latchkey.Handler] returns one http.Handler that serves,
// for the project its resolver names, the routing table of routes.go:
//
//	POST /v1/identity/login               email and password -> token set (no token needed)
//	POST /v1/identity/refresh             refresh token -> token set (no token needed)
//	POST /v1/identity/logout              refresh token -> 204, the session ended (no token needed)
//	POST /v1/identity/introspect          RFC 7662 introspection (a permanent API key of the project)
//	GET  /v1/identity/revocations         the revocation feed (a permanent API key of the project)
//	GET  /v1/contacts                     the contacts list (any token of the project)
//	GET  /.well-known/jwks.json           the project's public keys (no token needed)
//	GET  /.well-known/openid-configuration  the discovery document (no token needed)
//	GET  /openapi.json                    the OpenAPI document of the above (no token needed)
//	     /console/                        the web console's pages (console.Handler.Routes; unless Options.NoConsole)
//
// Each route is registered once, console pages included; a test checks
// this list, the console's and the README's against the table. GET routes
// answer HEAD too, and the public documents CORS preflights (OPTIONS).
// Unknown paths are 404 not_found, wrong methods 405 method_not_allowed with
// Allow, a project that does not exist 404 not_found, all as RFC 9457
// problem+json (under /console/, as console pages).
//
//	st, err := sqlite.Open(ctx, "latchkey.db", nil)
//	if err != nil { ... }
//	defer st.Close()
//	lk, err := latchkey.New(st, masterKey, nil)
//	if err != nil { ... }
//	defer lk.Close()
//	mux := http.NewServeMux()
//	mux.Handle("/", lk.Handler())
//	mux.HandleFunc("GET /hello", hello) // the host's own routes
//
// # Projects
//
// Every request belongs to one project (a tenant with its own users,
// contacts, API keys and signing keys). Options.Resolver names it, from the
// host, a header or anything else of the request; the default serves the
// project "default", which New creates if it does not exist. A host that
// routes by path puts the project in the request's context itself and uses
// tenant.FromRequest (the example server serves project P at /p/P). A token
// of one project is refused by every other.
//
// # The parts
//
// The services behind the API are reachable for the host's own
// administration (what the example server's command line does):
// [Latchkey.Users] (create, list, disable, enable), [Latchkey.APIKeys]
// (create, list, revoke), [Latchkey.Keyring] (rotate, retire) and
// [Latchkey.CreateProject]. They act on the store directly and may run in
// another process than the servers: every server on the same store sees
// their effect on its next request.
package latchkey
