// Package identity signs project users in: password hashing, the
// Authenticator with its throttling, and the HTTP endpoints
// POST /v1/identity/login and POST /v1/identity/refresh.
//
// # Passwords
//
// [Hasher] makes argon2id hashes (m = 19456 KiB, t = 2, p = 1, 16-byte salt,
// 32-byte key) stored as PHC strings, and verifies those and the bcrypt
// hashes of imported users. A password over 72 bytes never matches a bcrypt
// hash. A hash that is bcrypt or weaker than the current parameters is
// replaced at the next successful sign-in. The number of hashes computed at
// once is bounded ([HasherOptions].MaxConcurrent), so a login flood cannot
// exhaust memory, and a stored hash cannot ask for more than
// [MaxArgonMemory] KiB.
//
// # Sign-in and throttling
//
// [Authenticator.Authenticate] checks an email and a password. A wrong
// email and a wrong password are both [ErrInvalidCredentials], and an
// unknown email still costs one argon2id hash, against a decoy hash (a
// random salt and key) that no password matches. A [Limiter] counts
// failures per account (project and normalized email, whether the account
// exists or not) and per client address, in fixed windows; over the limit
// Authenticate returns a [*RateLimitedError] before any hashing.
// [NewMemoryLimiter] keeps a bounded number of counters in memory;
// [NewStoreLimiter] keeps them in a store.ThrottleStore so that several
// instances throttle as one.
//
// # Refresh tokens
//
// A login starts a refresh family in the store. The token text is derived
// by HMAC from (project, family, generation) under a key derived from the
// master key, so the store never holds a usable token. Each refresh rotates
// the family with the store's compare-and-swap, which also returns the
// session's user for the new access token; a token presented again
// within the reuse window gets the same successor, later it revokes the
// family.
//
// # Usage
//
//	h := identity.NewHasher(nil)
//	auth := identity.NewAuthenticator(st, h, identity.NewStoreLimiter(st, nil), nil)
//	api := identity.NewHandler(identity.Deps{
//		Sessions: st, Authenticator: auth, Minter: keyring, MasterKey: masterKey,
//	}, nil)
//	// Behind a handler that sets tenant.NewContext:
//	mux.Handle("POST /v1/identity/login", api.Login())
//	mux.Handle("POST /v1/identity/refresh", api.Refresh())
//	mux.Handle("POST /v1/identity/logout", api.Logout())
package identity
