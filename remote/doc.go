// Package remote verifies Latchkey tokens in a team's other services: a Go
// service that is not Latchkey checks the login tokens and API key tokens
// of one Latchkey project locally, with no request to Latchkey per token,
// and still refuses revoked tokens within about a second.
//
// [New] is given the project's base_url and a permanent API key of the
// project. It reads the discovery document and the key set (JWKS), learns
// the project from the API key, and reads the whole revocation feed; then it
// follows the feed with long polls in the background. [Verifier.Verify]
// checks a token's signature, shape, audience, issuer and time with
// keys.Parse, then the revocations the feed announced: revoked API keys,
// retired signing keys, ended sessions (a password reset ends each of the
// user's sessions by an item of its own) and disabled users (a login token
// of a user item at T is refused if its iat is at or before T plus the
// verifier's leeway, the clock skew allowed between the instances that
// mint tokens; a user enabled again may use remote services with tokens
// minted after that, a refresh's included).
// [Verifier.Middleware] guards an http.Handler with it.
//
//	v, err := remote.New(ctx, "https://id.example.com", apiKey, nil)
//	if err != nil { ... }
//	defer v.Close()
//	mux.Handle("GET /whoami", v.Middleware(whoami))
//
//	// in whoami:
//	c, _ := remote.ClaimsFromContext(r.Context())
//
// The project must mint its tokens with an issuer (latchkey.Options.Issuer,
// the example server's -public-url): a token whose iss is not the base_url
// given to New is refused.
//
// # Guarantees
//
//   - A revocation made on any Latchkey instance reaches every instance's
//     feed within one second; the long poll hands it to the verifier as
//     soon as its instance sees it. Verify refuses the token from then on.
//   - Fail closed: if the feed cannot be read for longer than
//     Options.StaleAfter (default 30 s), Verify refuses every token with an
//     error matching [ErrStale] (the middleware answers 503 unavailable)
//     until a read succeeds again; one line is logged when that starts and
//     one when it ends. An unseen revocation is worse than an outage of the
//     service that checks tokens. After a failure the feed is read again
//     from the same cursor, so nothing revoked meanwhile is missed.
//   - A kid the key set does not name (a key made by a rotation) makes the
//     key set be read again, at most once per Options.KeyRefetchInterval
//     (default 1 s) however many such tokens arrive.
//   - A token seen before is verified from a cache, keyed by its SHA-256,
//     without decoding or a signature check (BenchmarkVerify_cached
//     measures it); its time, signing key and revocations are checked
//     every time.
//
// # Memory
//
// What a Verifier keeps grows with:
//
//   - the project's revoked API keys and retired signing keys, kept for as
//     long as the verifier runs, as the feed keeps them (one map entry of
//     their id each);
//   - the sessions ended and users disabled in the last day and a bit:
//     such an item is forgotten keys.LoginTokenTTL + Leeway +
//     keys.MaxLeeway after its revoked_at, when every login token it could
//     refuse has expired;
//   - the verified tokens, at most Options.CacheSize (default 10,000) of
//     them, least recently used first out;
//   - the project's unretired signing keys (the key set).
//
// # Sessions that end by themselves
//
// A session also ends at its absolute lifetime. When a login token
// outlives that end (a token minted in the session's last day, or any when
// sessions last less than a day), Latchkey schedules a session item in the
// feed at the end's time, and the verifier refuses the token from then on,
// as it refuses a logout's. A session whose refresh token expires unused
// needs no item: its login tokens expired long before.
package remote
