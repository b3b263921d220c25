// Package console is Latchkey's web console: the pages where a project's
// administrators create, list, roll and revoke permanent API keys, rotate and
// retire the project's signing keys, administer the project's users and
// read its audit log.
//
// The console serves, for the project that tenant.FromContext names, these
// paths of that project's base_url ([Handler.Routes], which a routing
// table registers):
//
//	     /console                redirects to /console/ (any method)
//	GET  /console/               redirects to keys
//	GET  /console/signin         the sign-in form
//	POST /console/signin         signs in (email and password of a user tagged admin)
//	POST /console/signout        ends the session, on every instance
//	GET  /console/keys           a page of the API keys (scopes, creator, signing key, expiry, status), oldest first, with limit, cursor and a name prefix (name=), and the form that creates one
//	POST /console/keys           creates a key (name, scopes, expiry) and shows its token, once
//	GET  /console/roll?id=       asks to confirm a roll, saying when the old key stops for each overlap offered
//	POST /console/roll           makes the successor, shows its token once, and schedules the old key's revocation
//	GET  /console/revoke?id=     asks to confirm a revocation
//	POST /console/revoke         revokes the key, with immediate effect
//	GET  /console/signing-keys   the project's signing keys, with their public keys
//	GET  /console/rotate         asks to confirm a rotation
//	POST /console/rotate         makes a new active signing key
//	GET  /console/retire?kid=    asks to confirm a retirement, saying how many active API keys it stops
//	POST /console/retire         retires a signing key that is not the active one
//	GET  /console/users          the users, oldest first, paged (limit, cursor) and searchable by
//	                             email prefix (email=), with the form that creates one
//	POST /console/users          creates a user; a generated password is shown once
//	GET  /console/user?id=       a user: tags, password, disable or enable
//	POST /console/user-tags      replaces a user's tags
//	POST /console/user-password  sets a user's password; a generated one is shown once
//	GET  /console/disable?id=    asks to confirm disabling a user
//	POST /console/disable        disables the user, ending every session of theirs at once
//	POST /console/enable         lets a disabled user sign in again
//	GET  /console/audit          the audit log, newest first, paged (limit, cursor) and
//	                             filtered by action (action=) and target id (target=)
//	GET  /console/static/...     the stylesheet, script and icon
//
// Another path under /console/, or another method, is the routing table's
// to answer: [Handler.NoRoute] answers it as a console page (404, or 405
// with Allow).
//
// Every link, form action and redirect is relative to the console's own
// directory, so the console works under any prefix the host strips before
// it (the example server serves project P at /p/P/console/ and the default
// project at /console/ too).
//
// The user list and the audit log follow the list rules of package
// paginate: limit (25 by default, at most 100), an opaque cursor, and a
// next page while more follow; a search or a filter is kept from page to
// page. A malformed limit or cursor gets a 400 page.
//
// # Sign-in and sessions
//
// An administrator signs in with the email and password of a project user
// tagged "admin", checked by the same Authenticator as POST
// /v1/identity/login: the same password hashing, the same answer for an
// unknown email and a wrong password, the same throttling (a throttled
// attempt gets 429 and a Retry-After). A user who is not an administrator
// gets a 403 page and no session.
//
// Sessions are kept in the store (store.ConsoleSessionStore), so that every
// instance on the same store knows them and several instances behind a
// load balancer need no sticky sessions. A session's secret is 256 random
// bits, held only by the cookie; the store keeps its SHA-256 in lowercase
// hex, which cannot be used as a cookie. A session ends after
// Options.IdleTimeout without a request or Options.MaxLifetime after
// sign-in, whichever comes first, and at once by signing out, on every
// instance. Its last use is written at most once a minute, not on every
// click, so it can end up to a minute before IdleTimeout has passed since
// its last request. [Handler.Prune] deletes the ended ones; the root
// package latchkey calls it from its Prune. The user is looked up on every
// request, so an administrator who is disabled, loses the admin tag or is
// deleted is out at the next click. A session belongs to one project: its
// cookie is refused by every other project, even on the same host.
//
// The session cookie is named latchkey_console_<project>, HttpOnly,
// SameSite=Strict, with Path set to the console's directory. Under TLS (or
// with Options.SecureCookies) it is Secure and named
// __Host-latchkey_console_<project> with Path=/, as that prefix requires.
//
// What else belongs to a session works on every instance without the store
// holding anything usable: the form token is derived from the session's
// secret with HMAC-SHA256, and a one-time message for the next page
// ("Revoked ...") travels in a cookie of one minute (latchkey_flash_<project>,
// with the same attributes), authenticated with an HMAC keyed by the
// session's secret, so that only the session that set it shows it.
//
// # Audit log
//
// Every action taken in the console is recorded in the project's audit log
// with the signed-in administrator as the actor and the request's client
// address (Options.ClientAddr): the services the console calls record key
// creations and revocations, rotations and retirements, user creations,
// changes, password changes, disabling and enabling from the actor the
// console puts in the request's context (package audit). The console
// records sign-ins, failed sign-ins and sign-outs itself: a failed sign-in
// has no actor, and names the account's user id as its target when the
// account exists, never the email. A throttled attempt, which checked no
// password, is not recorded.
//
// # Users
//
// Administrators create users (with a password they choose or one the
// console generates and shows once), set their tags and passwords, and
// disable and enable them. Disabling ends every session of the user at
// once, on every instance (refresh tokens and login tokens alike); enabling
// does not bring those sessions back. An administrator cannot disable
// their own account or remove their own admin tag, so that nobody locks
// themselves out by mistake.
//
// # Cross-site request forgery
//
// Every state-changing request passes two independent checks:
// http.CrossOriginProtection, which refuses browser requests that say
// (Sec-Fetch-Site, or Origin against Host) they come from another origin,
// and the form token, carried in a hidden field and compared in constant
// time, which also stops requests that carry neither header. The sign-in
// form, which has no session yet, is protected the same way by a
// double-submit token: a random value in a SameSite=Strict cookie that the
// form must echo.
//
// # Response headers
//
// Every response carries a Content-Security-Policy that allows only the
// console's own stylesheet, script and images, with no inline script or
// style, and forbids framing (frame-ancestors 'none', X-Frame-Options
// DENY), with Referrer-Policy no-referrer and X-Content-Type-Options
// nosniff. Pages are Cache-Control no-store. An API key's token and a
// generated password appear only in the body of the response to the POST
// that made them: never in a URL, a redirect, a cookie or a log.
//
// # Usage
//
// The root package latchkey serves the console at {base_url}/console/ by
// default, on the same authenticator, API keys, keyring, users and store as
// the API; latchkey.Options.Console tunes it and NoConsole turns it off.
//
// A host that assembles the parts itself builds it with [New], registers
// its routes on its own routing table, and serves them for a project put
// in the request's context with tenant.NewContext:
//
//	h := console.New(console.Deps{
//		Authenticator: auth,                // *identity.Authenticator
//		APIKeys:       apiKeys,             // *keys.APIKeys
//		Keyring:       keyring,             // *keys.Keyring
//		SigningKeys:   st,                  // any store.SigningKeyStore
//		Users:         users,               // *identity.Users
//		Sessions:      st,                  // any store.ConsoleSessionStore
//		AuditLog:      st,                  // any store.AuditStore
//		Audit:         audit.New(st, nil),  // records sign-ins and sign-outs
//	}, nil)
//	for _, rt := range h.Routes() {
//		mux.Handle(rt.Pattern, rt.Handler)
//	}
//
// answers what the table does not match under /console/ with
// [Handler.NoRoute], and calls h.Prune from time to time.
package console
