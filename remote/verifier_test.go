package remote

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey"
	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/internal/testutil"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

func TestNew_learnsIssuerAndProject(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	_, key := h.apiKey("svc")
	v := h.verifier(key, nil)
	assert.Equal(t, h.base, v.Issuer())
	assert.Equal(t, store.DefaultProject, v.Project())

	// A trailing slash on the base URL is the same base URL.
	ctx := context.Background()
	v2, err := New(ctx, h.base+"/", key, &Options{Logger: quietLogger(), Project: store.DefaultProject})
	require.NoError(t, err)
	defer v2.Close()
	assert.Equal(t, h.base, v2.Issuer())
	assert.Equal(t, store.DefaultProject, v2.Project())
}

func TestNew_refusesBadArgumentsAndServers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	_, key := h.apiKey("svc")
	revokedID, revokedKey := h.apiKey("revoked")
	require.NoError(t, h.lk.APIKeys().Revoke(context.Background(), store.DefaultProject, revokedID))
	h.user("ann@example.com")
	loginToken, _ := h.login("ann@example.com")
	_, err := h.lk.CreateProject(context.Background(), "other")
	require.NoError(t, err)
	_, otherKey := h.apiKeyOf("other", "svc")
	// The same server under another name: its discovery document names
	// h.base as issuer, not this URL.
	otherName := strings.Replace(h.base, "127.0.0.1", "localhost", 1)
	// A port nothing listens on.
	closed := closedURL(t)

	for _, tc := range []struct {
		name, base, key string
		opts            Options
		want            string
	}{
		{"empty base URL", "", key, Options{}, "not an http or https URL"},
		{"relative base URL", "/v1", key, Options{}, "not an http or https URL"},
		{"ftp base URL", "ftp://id.example.com", key, Options{}, "not an http or https URL"},
		{"base URL with query", h.base + "?x=1", key, Options{}, "not an http or https URL"},
		{"base URL with user", strings.Replace(h.base, "http://", "http://u:p@", 1), key, Options{}, "not an http or https URL"},
		{"empty API key", h.base, "", Options{}, "API key is empty"},
		{"huge API key", h.base, strings.Repeat("a", keys.MaxTokenBytes+1), Options{}, "API key is empty or too long"},
		{"wait not whole seconds", h.base, key, Options{Wait: 1500 * time.Millisecond}, "Options.Wait"},
		{"wait too short", h.base, key, Options{Wait: 500 * time.Millisecond}, "Options.Wait"},
		{"wait too long", h.base, key, Options{Wait: 61 * time.Second}, "Options.Wait"},
		{"negative wait", h.base, key, Options{Wait: -time.Second}, "Options.Wait"},
		{"stale bound not above wait", h.base, key, Options{Wait: 10 * time.Second, StaleAfter: 10 * time.Second}, "StaleAfter"},
		{"negative stale bound", h.base, key, Options{StaleAfter: -time.Second}, "StaleAfter"},
		{"negative refetch interval", h.base, key, Options{KeyRefetchInterval: -time.Second}, "KeyRefetchInterval"},
		{"client timeout below the long poll", h.base, key, Options{Client: &http.Client{Timeout: 5 * time.Second}}, "Client.Timeout"},
		{"issuer is not the base URL", otherName, key, Options{}, "names the issuer"},
		{"nothing listens", closed, key, Options{}, "discovery document"},
		{"not Latchkey", h.base + "/v1/contacts", key, Options{}, "discovery document"},
		{"garbage API key", h.base, "abc.def.ghi", Options{}, "not a Latchkey token"},
		{"login token as API key", h.base, loginToken, Options{}, "login token"},
		{"revoked API key", h.base, revokedKey, Options{}, "refused the API key"},
		{"API key of another project", h.base, otherKey, Options{}, "unknown signing key"},
		{"API key not of the project asked for", h.base, key, Options{Project: "other"}, `not valid for project "other"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Logger = quietLogger()
			v, err := New(context.Background(), tc.base, tc.key, &tc.opts)
			require.Error(t, err)
			assert.Nil(t, v)
			assert.Contains(t, err.Error(), tc.want)
			// Never the API key in an error.
			if len(tc.key) > 20 {
				assert.NotContains(t, err.Error(), tc.key)
			}
		})
	}
}

func TestVerify_acceptsTheProjectsTokens(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	keyID, key := h.apiKey("svc")
	userID := h.user("ann@example.com", "admin", "support")
	login, _ := h.login("ann@example.com")

	for _, v := range []*Verifier{h.verifier(key, nil), h.verifier(key, &Options{CacheSize: -1})} {
		for range 2 { // the second time from the cache, if there is one
			checkAccepted(t, h, v, login, key, userID, keyID)
		}
	}
}

// checkAccepted checks the claims v gives for a login token of userID and
// the API key token of keyID.
func checkAccepted(t *testing.T, h *harness, v *Verifier, login, key, userID, keyID string) {
	t.Helper()
	ctx := context.Background()
	c, err := v.Verify(ctx, login)
	require.NoError(t, err)
	assert.Equal(t, userID, c.Subject)
	assert.Equal(t, keys.KindUser, c.Kind())
	assert.Equal(t, store.DefaultProject, c.Audience)
	assert.Equal(t, h.base, c.Issuer)
	assert.True(t, strings.HasPrefix(c.SessionID, "rf_"), c.SessionID)
	assert.Equal(t, []string{"admin", "support"}, c.Tags)
	assert.Equal(t, c.IssuedAt.Add(keys.LoginTokenTTL), c.ExpiresAt)
	assert.True(t, strings.HasPrefix(c.KeyID, "sk_"))

	c, err = v.Verify(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, keyID, c.Subject)
	assert.Equal(t, keys.KindAPIKey, c.Kind())
	assert.True(t, c.ExpiresAt.IsZero())
}

func TestVerify_refusesForgedForeignAndMalformedTokens(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	_, key := h.apiKey("svc")
	h.user("ann@example.com")
	login, _ := h.login("ann@example.com")
	ctx := context.Background()

	// Another project of the same deployment.
	_, err := h.lk.CreateProject(ctx, "other")
	require.NoError(t, err)
	_, otherProjectKey := h.apiKeyOf("other", "svc")

	// The same project and keys, minted by an instance with another
	// issuer, and by one without any.
	elsewhere := h.instance(func(string) string { return "https://elsewhere.example" })
	_, wrongIssKey, err := elsewhere.APIKeys().Create(ctx, store.DefaultProject, "elsewhere")
	require.NoError(t, err)
	noIss := h.instance(nil)
	_, noIssKey, err := noIss.APIKeys().Create(ctx, store.DefaultProject, "no iss")
	require.NoError(t, err)

	v := h.verifier(key, nil)
	_, err = v.Verify(ctx, login) // in the cache now: a forgery of it must not hit
	require.NoError(t, err)

	parts := strings.Split(login, ".")
	claims := claimsOf(t, login)
	claims["sub"] = "usr_someoneelse"
	otherSub := tamper(t, login, 1, claims)
	sig := []byte(parts[2])
	sig[10] ^= 1
	badSig := parts[0] + "." + parts[1] + "." + string(sig)
	none := tamper(t, login, 0, map[string]any{"alg": "none", "typ": "JWT", "kid": claimsKid(t, login)})
	none = strings.Join(strings.Split(none, ".")[:2], ".") + "."
	hs256 := tamper(t, login, 0, map[string]any{"alg": "HS256", "typ": "JWT", "kid": claimsKid(t, login)})
	extraHeader := tamper(t, login, 0, map[string]any{"alg": "EdDSA", "typ": "JWT", "kid": claimsKid(t, login), "jku": "https://evil.example/jwks"})
	unknownKid := tamper(t, login, 0, map[string]any{"alg": "EdDSA", "typ": "JWT", "kid": "sk_doesnotexist"})

	for _, tc := range []struct {
		name, token string
		reason      error
	}{
		{"altered claims", otherSub, keys.ErrTokenMalformed},
		{"altered signature", badSig, keys.ErrTokenMalformed},
		{"alg none", none, keys.ErrTokenMalformed},
		{"alg HS256", hs256, keys.ErrTokenMalformed},
		{"a header member not allowed", extraHeader, keys.ErrTokenMalformed},
		{"unknown kid", unknownKid, keys.ErrWrongProject},
		{"another project's token", otherProjectKey, keys.ErrWrongProject},
		{"wrong iss", wrongIssKey, keys.ErrWrongProject},
		{"no iss", noIssKey, keys.ErrWrongProject},
		{"empty", "", keys.ErrTokenMalformed},
		{"garbage", "not a token", keys.ErrTokenMalformed},
		{"two parts", parts[0] + "." + parts[1], keys.ErrTokenMalformed},
		{"too large", strings.Repeat("a", keys.MaxTokenBytes+1), keys.ErrTokenMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 2 { // a refusal is not cached as an acceptance
				c, err := v.Verify(ctx, tc.token)
				require.Error(t, err)
				assert.Nil(t, c)
				assert.ErrorIs(t, err, keys.ErrInvalidToken)
				assert.ErrorIs(t, err, tc.reason)
				assert.NotEmpty(t, ReasonOf(err))
			}
		})
	}
}

// claimsKid returns the kid of token's header.
func claimsKid(t *testing.T, token string) string {
	t.Helper()
	b, err := b64dec(strings.Split(token, ".")[0])
	require.NoError(t, err)
	i := strings.Index(string(b), `"kid":"`)
	require.GreaterOrEqual(t, i, 0)
	rest := string(b)[i+len(`"kid":"`):]
	return rest[:strings.IndexByte(rest, '"')]
}

// instance assembles another Latchkey on the harness's store, with issuer
// (nil: none), as another instance of the deployment would be.
func (h *harness) instance(issuer func(string) string) *latchkey.Latchkey {
	h.t.Helper()
	lk, err := latchkey.New(h.st, testMasterKey, &latchkey.Options{Logger: quietLogger(), Issuer: issuer, PruneInterval: -1})
	require.NoError(h.t, err)
	h.t.Cleanup(func() { _ = lk.Close() })
	return lk
}

func TestVerify_expiry(t *testing.T) {
	t.Parallel()
	clock := testutil.NewClock(time.Now().Truncate(time.Second))
	h := newHarness(t, clock)
	_, key := h.apiKey("svc")
	h.user("ann@example.com")
	login, _ := h.login("ann@example.com")
	v := h.verifier(key, &Options{Leeway: 10 * time.Second})
	ctx := context.Background()
	_, err := v.Verify(ctx, login)
	require.NoError(t, err)

	// Within the leeway after exp: accepted (from the cache).
	clock.Advance(keys.LoginTokenTTL + 9*time.Second)
	_, err = v.Verify(ctx, login)
	require.NoError(t, err)
	// Past it: refused, from the cache and afresh alike.
	clock.Advance(time.Second)
	for range 2 {
		_, err = v.Verify(ctx, login)
		assert.ErrorIs(t, err, keys.ErrInvalidToken)
		assert.ErrorIs(t, err, keys.ErrTokenExpired)
	}
	// API key tokens do not expire.
	_, err = v.Verify(ctx, key)
	require.NoError(t, err)

	// A token issued in the future, beyond the leeway: refused.
	v2 := h.verifier(key, &Options{Leeway: 10 * time.Second, Now: func() time.Time { return clock.Now().Add(-11 * time.Second) }})
	fresh, _ := h.login("ann@example.com")
	_, err = v2.Verify(ctx, fresh)
	assert.ErrorIs(t, err, keys.ErrTokenExpired)
}

func TestVerify_revocationsAreRefusedWithinASecond(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	_, feedKey := h.apiKey("feed")
	doomedID, doomed := h.apiKey("doomed")
	_, kept := h.apiKey("kept")
	annID := h.user("ann@example.com")
	h.user("bob@example.com")
	annSession1, annRefresh1 := h.login("ann@example.com")
	annSession2, _ := h.login("ann@example.com")
	bob, _ := h.login("bob@example.com")

	// The default long poll: a revocation must not wait for it to end. A
	// leeway of a second: a user disabled and enabled again may sign in
	// for remote services once the leeway has passed.
	v := h.verifier(feedKey, &Options{Leeway: time.Second})
	for _, tok := range []string{doomed, kept, annSession1, annSession2, bob} {
		_, err := v.Verify(ctx, tok) // cached from now on
		require.NoError(t, err)
	}
	var worst time.Duration

	require.NoError(t, h.lk.APIKeys().Revoke(ctx, store.DefaultProject, doomedID))
	worst = max(worst, refusedWithin(t, v, doomed, keys.ErrTokenRevoked, time.Second))
	_, err := v.Verify(ctx, kept)
	require.NoError(t, err, "another API key stays valid")

	h.logout(annRefresh1)
	worst = max(worst, refusedWithin(t, v, annSession1, keys.ErrTokenRevoked, time.Second))
	_, err = v.Verify(ctx, annSession2)
	require.NoError(t, err, "the user's other session stays valid")

	u, err := h.lk.Users().Disable(ctx, store.DefaultProject, annID)
	require.NoError(t, err)
	worst = max(worst, refusedWithin(t, v, annSession2, keys.ErrTokenRevoked, time.Second))
	_, err = v.Verify(ctx, bob)
	require.NoError(t, err, "another user stays valid")

	// Enabled again, the user's later logins are valid: iat counts in
	// whole seconds, so sign in after the second of the disabling and the
	// leeway (the skew a token's iat may have).
	_, err = h.lk.Users().Enable(ctx, store.DefaultProject, annID)
	require.NoError(t, err)
	time.Sleep(time.Until(u.DisabledAt.Truncate(time.Second).Add(2 * time.Second)))
	again, _ := h.login("ann@example.com")
	_, err = v.Verify(ctx, again)
	require.NoError(t, err)
	_, err = v.Verify(ctx, annSession2)
	assert.ErrorIs(t, err, keys.ErrTokenRevoked, "the tokens of before the disabling stay refused")
	t.Logf("slowest revocation refused %s after it was made", worst)
}

// A session that reaches its absolute end is refused here within a second
// of that end, though its login token's own exp is a day later: Latchkey
// puts the end of a session that a token outlives in the feed.
func TestVerify_sessionRefusedAtItsAbsoluteEnd(t *testing.T) {
	t.Parallel()
	const lifetime = 5 * time.Second
	h := newHarnessWith(t, nil, func(o *latchkey.Options) {
		o.Identity = &identity.Options{SessionLifetime: lifetime}
	})
	ctx := context.Background()
	_, feedKey := h.apiKey("feed")
	h.user("ann@example.com")
	before := time.Now()
	tok, _ := h.login("ann@example.com")
	endsBy := time.Now().Add(lifetime) // the session ends between before+lifetime and this
	v := h.verifier(feedKey, nil)
	if c, err := v.Verify(ctx, tok); time.Now().Before(before.Add(lifetime)) {
		require.NoError(t, err, "the session has not ended")
		require.True(t, c.ExpiresAt.After(endsBy.Add(23*time.Hour)), "the token's exp %s is a day away", c.ExpiresAt)
	}

	time.Sleep(time.Until(endsBy))
	took := refusedWithin(t, v, tok, keys.ErrTokenRevoked, time.Second)
	t.Logf("refused %s after the session had ended", took)
}

// A password reset ends the user's sessions for remote verifiers within a
// second, and only those: a login right after it, with the new password,
// is valid at once (with the default leeway of 30 seconds).
func TestVerify_passwordResetEndsOnlyTheSessionsItEnded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	_, feedKey := h.apiKey("feed")
	annID := h.user("ann@example.com")
	before1, _ := h.login("ann@example.com")
	before2, _ := h.login("ann@example.com")
	v := h.verifier(feedKey, nil)
	for _, tok := range []string{before1, before2} {
		_, err := v.Verify(ctx, tok)
		require.NoError(t, err)
	}

	// The harness signs in with one password: the reset gives it again,
	// under a new hash, which ends the sessions all the same.
	_, err := h.lk.Users().ResetPassword(ctx, store.DefaultProject, annID, testPassword)
	require.NoError(t, err)
	refusedWithin(t, v, before1, keys.ErrTokenRevoked, time.Second)
	refusedWithin(t, v, before2, keys.ErrTokenRevoked, time.Second)
	after, _ := h.login("ann@example.com")
	_, err = v.Verify(ctx, after)
	require.NoError(t, err, "a login right after the reset is valid for remote services")
}

func TestVerify_signingKeys(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	// Tokens signed by the first key.
	_, oldKey := h.apiKey("old")
	h.user("ann@example.com")
	oldLogin, _ := h.login("ann@example.com")
	never, _ := h.login("ann@example.com") // never shown to the verifier before the retirement
	first, err := h.st.ActiveSigningKey(ctx, store.DefaultProject)
	require.NoError(t, err)

	// The verifier's own key is signed by a second key, which stays.
	_, err = h.lk.Keyring().Rotate(ctx, store.DefaultProject)
	require.NoError(t, err)
	_, feedKey := h.apiKey("feed")
	v := h.verifier(feedKey, &Options{KeyRefetchInterval: 50 * time.Millisecond})
	for _, tok := range []string{oldKey, oldLogin} {
		_, err := v.Verify(ctx, tok)
		require.NoError(t, err)
	}

	// A rotation: the new key's tokens are found by reading the key set
	// again, once.
	third, err := h.lk.Keyring().Rotate(ctx, store.DefaultProject)
	require.NoError(t, err)
	reads := h.gate.jwksReads.Load()
	newLogin, _ := h.login("ann@example.com")
	c, err := v.Verify(ctx, newLogin)
	require.NoError(t, err)
	assert.Equal(t, third.ID, c.KeyID)
	assert.Equal(t, reads+1, h.gate.jwksReads.Load())
	_, err = v.Verify(ctx, newLogin)
	require.NoError(t, err)
	assert.Equal(t, reads+1, h.gate.jwksReads.Load(), "a known kid is not read again")

	// Retiring the first key refuses what it signed, cached or not.
	require.NoError(t, h.lk.Keyring().Retire(ctx, store.DefaultProject, first.ID))
	d1 := refusedWithin(t, v, oldKey, keys.ErrSigningKeyRetired, time.Second)
	d2 := refusedWithin(t, v, oldLogin, keys.ErrSigningKeyRetired, time.Second)
	_, err = v.Verify(ctx, never)
	assert.ErrorIs(t, err, keys.ErrInvalidToken)
	assert.ErrorIs(t, err, keys.ErrSigningKeyRetired)
	for _, tok := range []string{newLogin, feedKey} {
		_, err := v.Verify(ctx, tok)
		require.NoError(t, err)
	}
	t.Logf("retirement refused after %s and %s", d1, d2)

	// A verifier started after the retirement knows it from the feed.
	v2 := h.verifier(feedKey, nil)
	_, err = v2.Verify(ctx, never)
	assert.ErrorIs(t, err, keys.ErrSigningKeyRetired)
}

func TestVerify_unknownKidsReadTheKeySetAtAGivenRate(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	_, key := h.apiKey("svc")
	h.user("ann@example.com")
	login, _ := h.login("ann@example.com")
	const interval = 200 * time.Millisecond
	v := h.verifier(key, &Options{KeyRefetchInterval: interval})
	reads := h.gate.jwksReads.Load()

	start := time.Now()
	var wg sync.WaitGroup
	for g := range 20 {
		wg.Go(func() {
			for i := 0; time.Since(start) < time.Second; i++ {
				forged := tamper(t, login, 0, map[string]any{"alg": "EdDSA", "typ": "JWT", "kid": "sk_forged" + string(rune('a'+g)) + string(rune('a'+i%26))})
				_, err := v.Verify(context.Background(), forged)
				assert.ErrorIs(t, err, keys.ErrWrongProject)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	got := int(h.gate.jwksReads.Load() - reads)
	maxReads := int(elapsed/interval) + 1
	t.Logf("%d reads of the key set in %s", got, elapsed)
	assert.GreaterOrEqual(t, got, 1)
	assert.LessOrEqual(t, got, maxReads)
}

func TestVerify_failsClosedAndResumesFromTheCursor(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	_, feedKey := h.apiKey("feed")
	firstID, first := h.apiKey("first")
	duringID, during := h.apiKey("during")
	_, good := h.apiKey("good")
	h.user("ann@example.com")
	session, refresh := h.login("ann@example.com")
	var logs logBuffer
	const staleAfter = 2 * time.Second
	v := h.verifier(feedKey, &Options{Wait: time.Second, StaleAfter: staleAfter, Logger: logs.logger()})
	handler := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))

	// One revocation before the outage, so that the cursor is past it.
	require.NoError(t, h.lk.APIKeys().Revoke(ctx, store.DefaultProject, firstID))
	refusedWithin(t, v, first, keys.ErrTokenRevoked, time.Second)
	page, err := h.st.ListRevocations(ctx, store.DefaultProject, pageReq(10))
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	cursorBefore := cursorOf(page.Items[0])

	// The outage. Polls already in flight end within Wait; then
	// revocations are made that the verifier cannot see.
	h.gate.blocked.Store(true)
	_, err = v.Verify(ctx, good)
	require.NoError(t, err, "an outage shorter than the bound refuses nothing")
	time.Sleep(1500 * time.Millisecond)
	require.NoError(t, h.lk.APIKeys().Revoke(ctx, store.DefaultProject, duringID))
	h.logout(refresh)

	// No Verify runs, yet one line says that the verifier fails closed.
	waitFor(t, staleAfter+2*time.Second, "the stale line", func() bool { return logs.count("refusing every token") == 1 })
	for _, tok := range []string{good, during, session, "garbage"} {
		_, err := v.Verify(ctx, tok)
		assert.True(t, isStale(err), "%v", err)
		assert.Equal(t, "revocation feed unreachable", ReasonOf(err))
	}
	rec := serve(handler, good)
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Equal(t, "1", rec.Header().Get("Retry-After"))
	assert.Contains(t, rec.Body.String(), `"code":"unavailable"`)
	assert.Equal(t, "application/problem+json", rec.Header().Get("Content-Type"))
	time.Sleep(200 * time.Millisecond)
	assert.Equal(t, 1, logs.count("refusing every token"), "one line per stale spell")

	// Recovery: the verifier reads from its cursor, and the tokens revoked
	// meanwhile are never accepted, not for a moment.
	calls := len(h.gate.feedQueries())
	h.gate.blocked.Store(false)
	recovered := false
	deadline := time.Now().Add(5 * time.Second)
	for !recovered {
		require.True(t, time.Now().Before(deadline), "not recovered within 5 s")
		for _, tok := range []string{during, session} {
			_, err := v.Verify(ctx, tok)
			require.Error(t, err, "a token revoked during the outage was accepted")
		}
		_, err := v.Verify(ctx, good)
		recovered = err == nil
		time.Sleep(time.Millisecond)
	}
	_, err = v.Verify(ctx, during)
	assert.ErrorIs(t, err, keys.ErrTokenRevoked)
	_, err = v.Verify(ctx, session)
	assert.ErrorIs(t, err, keys.ErrTokenRevoked)
	after := h.gate.feedQueries()[calls:]
	require.NotEmpty(t, after)
	assert.Contains(t, after[0], "cursor="+url.QueryEscape(cursorBefore), "the first read after the outage starts at the cursor")
	for _, q := range after {
		assert.Contains(t, q, "cursor=", "never read again from the start")
	}
	waitFor(t, time.Second, "the recovery line", func() bool { return logs.count("read again") == 1 })
}

func TestVerify_failsClosedOnAMalformedFeed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	_, key := h.apiKey("svc")
	var logs logBuffer
	v := h.verifier(key, &Options{Wait: 1 * time.Second, StaleAfter: 2 * time.Second, Logger: logs.logger()})
	h.gate.corruptFor.Store(true)
	waitFor(t, 5*time.Second, "fail closed", func() bool {
		_, err := v.Verify(context.Background(), key)
		return isStale(err)
	})
	assert.GreaterOrEqual(t, logs.count("bad subject"), 1)
	h.gate.corruptFor.Store(false)
	waitFor(t, 5*time.Second, "recovery", func() bool {
		_, err := v.Verify(context.Background(), key)
		return err == nil
	})
}

func TestVerify_failsClosedWhenItsAPIKeyIsRevoked(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	id, key := h.apiKey("svc")
	_, other := h.apiKey("other")
	var logs logBuffer
	v := h.verifier(key, &Options{Wait: 1 * time.Second, StaleAfter: 2 * time.Second, Logger: logs.logger()})
	require.NoError(t, h.lk.APIKeys().Revoke(context.Background(), store.DefaultProject, id))
	waitFor(t, 5*time.Second, "fail closed", func() bool {
		_, err := v.Verify(context.Background(), other)
		return isStale(err)
	})
	// The stale timer may have claimed the spell and be about to write its
	// line when Verify returns ErrStale: the line is waited for, then
	// counted once more after a while.
	waitFor(t, 2*time.Second, "the stale line", func() bool { return logs.count("refusing every token") >= 1 })
	time.Sleep(200 * time.Millisecond)
	assert.GreaterOrEqual(t, logs.count("refused the API key"), 1)
	assert.Equal(t, 1, logs.count("refusing every token"), "one line per stale spell")
	assert.NotContains(t, logs.String(), key)
}

func TestVerify_forgetsSessionsAndUsersOnceTheirTokensExpired(t *testing.T) {
	t.Parallel()
	clock := testutil.NewClock(time.Now().Truncate(time.Second))
	h := newHarness(t, clock)
	ctx := context.Background()
	_, feedKey := h.apiKey("feed")
	revokedID, revokedKey := h.apiKey("revoked")
	annID := h.user("ann@example.com")
	h.user("bob@example.com")
	ann, _ := h.login("ann@example.com")
	bob, bobRefresh := h.login("bob@example.com")
	v := h.verifier(feedKey, &Options{Wait: time.Second, StaleAfter: 3 * time.Second})

	require.NoError(t, h.lk.APIKeys().Revoke(ctx, store.DefaultProject, revokedID))
	h.logout(bobRefresh)
	_, err := h.lk.Users().Disable(ctx, store.DefaultProject, annID)
	require.NoError(t, err)
	refusedWithin(t, v, revokedKey, keys.ErrTokenRevoked, time.Second)
	refusedWithin(t, v, bob, keys.ErrTokenRevoked, time.Second)
	refusedWithin(t, v, ann, keys.ErrTokenRevoked, time.Second)
	a, _, s, u := v.revoked.sizes()
	assert.Equal(t, [3]int{1, 1, 1}, [3]int{a, s, u})

	// Just before the horizon both are kept; past it, forgotten at the
	// next read of the feed. The revoked API key is kept for ever.
	clock.Advance(v.forgetAfter - time.Second)
	time.Sleep(1500 * time.Millisecond) // a read of the feed or two
	_, _, s, u = v.revoked.sizes()
	assert.Equal(t, [2]int{1, 1}, [2]int{s, u})
	clock.Advance(2 * time.Minute) // expired items are looked for once a minute
	waitFor(t, 3*time.Second, "forgotten", func() bool {
		_, _, s, u := v.revoked.sizes()
		return s == 0 && u == 0
	})
	a, _, _, _ = v.revoked.sizes()
	assert.Equal(t, 1, a)
	_, err = v.Verify(ctx, revokedKey)
	assert.ErrorIs(t, err, keys.ErrTokenRevoked)
	for _, tok := range []string{ann, bob} {
		_, err := v.Verify(ctx, tok)
		assert.ErrorIs(t, err, keys.ErrTokenExpired, "forgotten only once expired")
	}

	// A verifier started now does not keep the old items the feed still
	// lists.
	v2 := h.verifier(feedKey, nil)
	a, _, s, u = v2.revoked.sizes()
	assert.Equal(t, [3]int{1, 0, 0}, [3]int{a, s, u})
}

func TestClose(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	_, key := h.apiKey("svc")
	// Requests are counted as the verifier sends them: the server may see
	// a long poll sent before Close only after Close has returned.
	sent := &countingTransport{next: http.DefaultTransport}
	v := h.verifier(key, &Options{Wait: time.Second, StaleAfter: 2 * time.Second, Client: &http.Client{Transport: sent}})
	handler := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	require.NoError(t, v.Close())
	require.NoError(t, v.Close())
	select {
	case <-v.done:
	default:
		t.Fatal("the feed loop still runs after Close")
	}
	calls := sent.feedReads.Load()
	require.Positive(t, calls, "New reads the feed through the client it is given")
	_, err := v.Verify(context.Background(), key)
	assert.ErrorIs(t, err, ErrClosed)
	assert.NotErrorIs(t, err, keys.ErrInvalidToken)
	assert.Equal(t, http.StatusServiceUnavailable, serve(handler, key).Code)
	time.Sleep(1500 * time.Millisecond)
	assert.Equal(t, calls, sent.feedReads.Load(), "no read of the feed after Close")
}

// countingTransport counts the feed requests sent through it.
type countingTransport struct {
	next      http.RoundTripper
	feedReads atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == latchkey.PathRevocations {
		c.feedReads.Add(1)
	}
	return c.next.RoundTrip(r)
}

// TestVerifier_PausesWhenLongPollIsCapped: a long poll the feed answers at
// once with an empty page and Retry-After (over its cap of long polls per
// API key) is followed by the next one only after that pause, not at once
// in a loop.
func TestVerifier_PausesWhenLongPollIsCapped(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	_, key := h.apiKey("feed")
	h.gate.capWaits.Store(true)
	calls := len(h.gate.feedQueries())
	h.verifier(key, &Options{StaleAfter: time.Minute})
	waitFor(t, time.Minute, "four polls of the feed", func() bool { return len(h.gate.feedQueries()) >= calls+4 })
	times := h.gate.feedTimesSince(calls)
	// The first read catches up without waiting; each long poll after it
	// was answered at once and paused after.
	for i := 2; i < len(times); i++ {
		assert.GreaterOrEqual(t, times[i].Sub(times[i-1]), time.Second, "poll %d came too soon after the capped one before", i)
	}
}
