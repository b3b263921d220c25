// Package console is Latchkey's web console: the pages where a project's
// administrators create, list and revoke permanent API keys and rotate the
// project's signing keys.
//
// The console serves, for the project that tenant.FromContext names, every
// path under /console/ of that project's base_url:
//
//	GET  /console/              redirects to keys
//	GET  /console/signin        the sign-in form
//	POST /console/signin        signs in (email and password of a user tagged admin)
//	POST /console/signout       ends the session
//	GET  /console/keys          the API keys, with the form that creates one
//	POST /console/keys          creates a key and shows its token, once
//	GET  /console/revoke?id=    asks to confirm a revocation
//	POST /console/revoke        revokes the key, with immediate effect
//	GET  /console/signing-keys  the project's signing keys
//	POST /console/rotate        makes a new active signing key
//	GET  /console/retire?kid=   asks to confirm a retirement
//	POST /console/retire        retires a signing key that is not the active one
//	GET  /console/static/...    the stylesheet, script and icon
//
// Every link, form action and redirect is relative to the console's own
// directory, so the console works under any prefix the host strips before
// it (the example server serves project P at /p/P/console/ and the default
// project at /console/ too).
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
// Sessions live in the handler's memory: at most Options.MaxSessions of
// them, ended after Options.IdleTimeout without a request or
// Options.MaxLifetime after sign-in, whichever comes first, and at once by
// signing out. The user is looked up on every request, so an administrator
// who loses the admin tag or is deleted is out at the next click. A session
// belongs to one project: its cookie is refused by every other project,
// even on the same host. Because sessions are in memory, several server
// instances behind one address need sticky sessions for the console (the
// API itself needs nothing of the kind).
//
// The session cookie is named latchkey_console_<project>, HttpOnly,
// SameSite=Strict, with Path set to the console's directory. Under TLS (or
// with Options.SecureCookies) it is Secure and named
// __Host-latchkey_console_<project> with Path=/, as that prefix requires.
// Its id is 256 random bits; the handler keeps only its SHA-256.
//
// # Cross-site request forgery
//
// Every state-changing request passes two independent checks:
// http.CrossOriginProtection, which refuses browser requests that say
// (Sec-Fetch-Site, or Origin against Host) they come from another origin,
// and a form token: a random 256-bit value tied to the session, carried in
// a hidden field and compared in constant time, which also stops requests
// that carry neither header. The sign-in form, which has no session yet, is
// protected the same way by a double-submit token: a random value in a
// SameSite=Strict cookie that the form must echo.
//
// # Response headers
//
// Every response carries a Content-Security-Policy that allows only the
// console's own stylesheet, script and images, with no inline script or
// style, and forbids framing (frame-ancestors 'none', X-Frame-Options
// DENY), with Referrer-Policy no-referrer and X-Content-Type-Options
// nosniff. Pages are Cache-Control no-store. An API key's token appears only
// in the body of the response to the POST that created it: never in a URL,
// a redirect, a cookie or a log.
//
// # Usage
//
// The root package latchkey serves the console at {base_url}/console/ by
// default, on the same authenticator, API keys, keyring and store as the
// API; latchkey.Options.ConsoleOptions tunes it and NoConsole turns it off.
//
// A host that assembles the parts itself builds it with [New] and serves it
// for a project put in the request's context with tenant.NewContext:
//
//	h := console.New(console.Deps{
//		Authenticator: auth,    // *identity.Authenticator
//		APIKeys:       apiKeys, // *keys.APIKeys
//		Keyring:       keyring, // *keys.Keyring
//		SigningKeys:   st,      // any store.SigningKeyStore
//		Users:         st,      // any store.UserStore
//	}, nil)
package console
