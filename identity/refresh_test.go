package identity_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/store"
)

// countingRefresh passes every call to the real store and counts the calls
// that reach it.
type countingRefresh struct {
	store.RefreshStore
	rotates atomic.Int64
}

func (c *countingRefresh) RotateRefresh(ctx context.Context, projectID, familyID string, gen int64, p store.RotateParams) (store.Rotation, error) {
	c.rotates.Add(1)
	return c.RefreshStore.RotateRefresh(ctx, projectID, familyID, gen, p)
}

// loggedIn creates a user and logs in.
func (e *env) loggedIn(t *testing.T, prefix, project string) (store.User, tokenSet) {
	t.Helper()
	u := e.createUser(t, project, "alice@example.com", "correct horse", "", "member")
	return u, e.login(t, prefix, "alice@example.com", "correct horse").tokens(t)
}

func TestRefresh_Rotates(t *testing.T) {
	e := newEnv(t, envConfig{})
	u, t0 := e.loggedIn(t, "", "default")

	t1 := e.refresh(t, "", t0.RefreshToken).tokens(t)
	assert.NotEqual(t, t0.RefreshToken, t1.RefreshToken)
	assert.True(t, strings.HasPrefix(t1.RefreshToken, "rt_"))
	assert.Equal(t, int64(86400), t1.ExpiresIn)
	assert.Equal(t, u.ID, t1.User.ID)
	assert.Equal(t, "alice@example.com", t1.User.Email)
	assert.Equal(t, []string{"member"}, t1.User.Tags)
	e.verifyAccess(t, "default", u.ID, t1.AccessToken)

	e.clock.Advance(time.Minute)
	t2 := e.refresh(t, "", t1.RefreshToken).tokens(t)
	assert.NotEqual(t, t1.RefreshToken, t2.RefreshToken)
	assert.NotEqual(t, t0.RefreshToken, t2.RefreshToken)
	e.verifyAccess(t, "default", u.ID, t2.AccessToken)

	// The response is the login's token set.
	res := e.refresh(t, "", t2.RefreshToken)
	assert.Equal(t, "no-store", res.header.Get("Cache-Control"))
	assert.Len(t, res.json(t), 4)

	// t0 was used more than 10 s ago: a replay that ends the family.
	res = e.refresh(t, "", t0.RefreshToken)
	assert.Equal(t, http.StatusUnauthorized, res.status)
	assert.Equal(t, "invalid_refresh_token", res.code(t))
}

func TestRefresh_TagsNeverNull(t *testing.T) {
	e := newEnv(t, envConfig{})
	e.createUser(t, "default", "plain@example.com", "pw plain", "")
	t0 := e.login(t, "", "plain@example.com", "pw plain").tokens(t)
	res := e.refresh(t, "", t0.RefreshToken)
	require.Equal(t, http.StatusOK, res.status)
	assert.Contains(t, string(res.body), `"tags":[]`)
}

func TestRefresh_ReuseWithinWindowGetsSameSuccessor(t *testing.T) {
	e := newEnv(t, envConfig{})
	u, t0 := e.loggedIn(t, "", "default")

	a := e.refresh(t, "", t0.RefreshToken).tokens(t)
	e.clock.Advance(9 * time.Second)
	b := e.refresh(t, "", t0.RefreshToken).tokens(t)
	assert.Equal(t, a.RefreshToken, b.RefreshToken, "same successor within the window")
	e.verifyAccess(t, "default", u.ID, a.AccessToken)
	e.verifyAccess(t, "default", u.ID, b.AccessToken)
	assert.NotEqual(t, a.AccessToken, b.AccessToken, "a fresh access token each time")

	// The successor keeps working.
	c := e.refresh(t, "", a.RefreshToken).tokens(t)
	assert.NotEqual(t, a.RefreshToken, c.RefreshToken)

	// t0 is now two generations behind: a replay even inside its window,
	// and the family, c included, is revoked.
	res := e.refresh(t, "", t0.RefreshToken)
	assert.Equal(t, http.StatusUnauthorized, res.status)
	assert.Equal(t, "invalid_refresh_token", res.code(t))
	assert.Equal(t, http.StatusUnauthorized, e.refresh(t, "", c.RefreshToken).status)
}

// The token set of a refresh carries the user as it is now (the rotation
// reads it), for a fresh successor and for a reuse within the window alike.
func TestRefresh_CarriesTheUserAsItIsNow(t *testing.T) {
	e := newEnv(t, envConfig{})
	u, t0 := e.loggedIn(t, "", "default")
	require.NoError(t, e.st.SetUserTags(context.Background(), "default", u.ID, []string{"admin", "member"}))

	a := e.refresh(t, "", t0.RefreshToken).tokens(t)
	assert.Equal(t, []string{"admin", "member"}, a.User.Tags)
	require.NoError(t, e.st.SetUserTags(context.Background(), "default", u.ID, []string{"viewer"}))
	b := e.refresh(t, "", t0.RefreshToken).tokens(t)
	assert.Equal(t, a.RefreshToken, b.RefreshToken, "a reuse within the window")
	assert.Equal(t, []string{"viewer"}, b.User.Tags)
	assert.Equal(t, u.ID, b.User.ID)
}

// otherUserRefresh is a broken store whose rotations return a user other
// than the family's.
type otherUserRefresh struct{ store.RefreshStore }

func (o otherUserRefresh) RotateRefresh(ctx context.Context, projectID, familyID string, gen int64, p store.RotateParams) (store.Rotation, error) {
	rot, err := o.RefreshStore.RotateRefresh(ctx, projectID, familyID, gen, p)
	rot.User.ID = "usr_someoneelse"
	return rot, err
}

// A rotation that returns another user than the family's mints nothing:
// the handler fails closed with a 500 and no token.
func TestRefresh_StoreReturnsAnotherUser(t *testing.T) {
	e := newEnv(t, envConfig{refresh: func(s store.RefreshStore) store.RefreshStore { return otherUserRefresh{s} }})
	_, t0 := e.loggedIn(t, "", "default")
	res := e.refresh(t, "", t0.RefreshToken)
	assert.Equal(t, http.StatusInternalServerError, res.status)
	assert.NotContains(t, string(res.body), "access_token")
	assert.NotContains(t, string(res.body), "usr_someoneelse")
}

func TestRefresh_ReuseAfterWindowRevokesFamily(t *testing.T) {
	e := newEnv(t, envConfig{})
	_, t0 := e.loggedIn(t, "", "default")
	t1 := e.refresh(t, "", t0.RefreshToken).tokens(t)

	e.clock.Advance(10*time.Second + time.Millisecond)
	res := e.refresh(t, "", t0.RefreshToken)
	assert.Equal(t, http.StatusUnauthorized, res.status)
	assert.Equal(t, "invalid_refresh_token", res.code(t))

	// The successor, never used, is revoked with its family.
	res = e.refresh(t, "", t1.RefreshToken)
	assert.Equal(t, http.StatusUnauthorized, res.status)
	assert.Equal(t, "invalid_refresh_token", res.code(t))

	// A new login starts a new family.
	t2 := e.login(t, "", "alice@example.com", "correct horse").tokens(t)
	e.refresh(t, "", t2.RefreshToken).tokens(t)
}

func TestRefresh_ConfigurableReuseWindow(t *testing.T) {
	t.Run("no window", func(t *testing.T) {
		e := newEnv(t, envConfig{opts: identity.Options{NoReuseWindow: true}})
		_, t0 := e.loggedIn(t, "", "default")
		t1 := e.refresh(t, "", t0.RefreshToken).tokens(t)
		res := e.refresh(t, "", t0.RefreshToken) // at the same instant
		assert.Equal(t, http.StatusUnauthorized, res.status)
		assert.Equal(t, "invalid_refresh_token", res.code(t))
		assert.Equal(t, http.StatusUnauthorized, e.refresh(t, "", t1.RefreshToken).status, "family revoked")
	})
	t.Run("one minute", func(t *testing.T) {
		e := newEnv(t, envConfig{opts: identity.Options{ReuseWindow: time.Minute}})
		_, t0 := e.loggedIn(t, "", "default")
		t1 := e.refresh(t, "", t0.RefreshToken).tokens(t)
		e.clock.Advance(50 * time.Second)
		assert.Equal(t, t1.RefreshToken, e.refresh(t, "", t0.RefreshToken).tokens(t).RefreshToken)
		e.clock.Advance(11 * time.Second)
		assert.Equal(t, http.StatusUnauthorized, e.refresh(t, "", t0.RefreshToken).status)
	})
}

func TestRefresh_Expiry(t *testing.T) {
	t.Run("default 30 days", func(t *testing.T) {
		e := newEnv(t, envConfig{})
		_, t0 := e.loggedIn(t, "", "default")
		e.clock.Advance(30*24*time.Hour - time.Second)
		t1 := e.refresh(t, "", t0.RefreshToken).tokens(t)
		// Each token lives 30 days from its own issue.
		e.clock.Advance(30*24*time.Hour + time.Second)
		res := e.refresh(t, "", t1.RefreshToken)
		assert.Equal(t, http.StatusUnauthorized, res.status)
		assert.Equal(t, "invalid_refresh_token", res.code(t))
	})
	t.Run("configured one hour", func(t *testing.T) {
		e := newEnv(t, envConfig{opts: identity.Options{RefreshTTL: time.Hour}})
		_, t0 := e.loggedIn(t, "", "default")
		e.clock.Advance(time.Hour + time.Second)
		res := e.refresh(t, "", t0.RefreshToken)
		assert.Equal(t, http.StatusUnauthorized, res.status)
		assert.Equal(t, "invalid_refresh_token", res.code(t))
	})
}

func TestRefresh_OtherProject(t *testing.T) {
	var counter *countingRefresh
	e := newEnv(t, envConfig{
		projects: []string{"acme"},
		refresh: func(rs store.RefreshStore) store.RefreshStore {
			counter = &countingRefresh{RefreshStore: rs}
			return counter
		},
	})
	_, acme := e.loggedIn(t, "/p/acme", "acme")

	res := e.refresh(t, "", acme.RefreshToken)
	assert.Equal(t, http.StatusUnauthorized, res.status)
	assert.Equal(t, "invalid_refresh_token", res.code(t))
	assert.Zero(t, counter.rotates.Load(), "the MAC binds the project: refused without a store call")

	// Even a token correctly MACed for "default" that names acme's family
	// is refused: the store looks families up per project.
	fam := store.NewID(store.PrefixFamily)
	alice := acmeUser(t, e)
	require.NoError(t, e.st.CreateRefreshFamily(context.Background(), store.RefreshFamily{
		ID: fam, ProjectID: "acme", UserID: alice.ID, IssuedAt: e.clock.Now(),
		ExpiresAt: e.clock.Now().Add(time.Hour), CreatedAt: e.clock.Now(),
	}, alice.PasswordHash))
	res = e.refresh(t, "", identity.RefreshToken(e.masterKey, "default", fam, 0))
	assert.Equal(t, http.StatusUnauthorized, res.status)
	assert.Equal(t, "invalid_refresh_token", res.code(t))

	// In its own project the token works.
	e.refresh(t, "/p/acme", acme.RefreshToken).tokens(t)
	e.refresh(t, "/p/acme", identity.RefreshToken(e.masterKey, "acme", fam, 0)).tokens(t)
}

func acmeUser(t *testing.T, e *env) store.User {
	t.Helper()
	u, err := e.st.GetUserByEmail(context.Background(), "acme", "alice@example.com")
	require.NoError(t, err)
	return u
}

func TestRefresh_ForgedOrGarbled(t *testing.T) {
	var counter *countingRefresh
	e := newEnv(t, envConfig{refresh: func(rs store.RefreshStore) store.RefreshStore {
		counter = &countingRefresh{RefreshStore: rs}
		return counter
	}})
	_, t0 := e.loggedIn(t, "", "default")
	good := t0.RefreshToken
	raw, err := base64.RawURLEncoding.DecodeString(good[3:])
	require.NoError(t, err)
	enc := func(b []byte) string { return "rt_" + base64.RawURLEncoding.EncodeToString(b) }
	flip := func(i int) string {
		b := append([]byte(nil), raw...)
		b[i] ^= 1
		return enc(b)
	}
	otherKey := make([]byte, 32)
	_, _ = rand.Read(otherKey)
	random := make([]byte, len(raw))
	_, _ = rand.Read(random)

	cases := map[string]string{
		"flipped family bit":     flip(0),
		"flipped generation bit": flip(20),
		"bumped generation":      flip(23),
		"flipped mac bit":        flip(len(raw) - 1),
		"other master key":       identity.RefreshToken(otherKey, "default", store.NewID(store.PrefixFamily), 0),
		"random bytes":           enc(random),
		"truncated":              good[:len(good)-1],
		"extended":               good + "A",
		"no prefix":              good[3:],
		"upper prefix":           "RT_" + good[3:],
		"padded":                 good + "=",
		"std base64":             "rt_" + base64.RawStdEncoding.EncodeToString(append([]byte{0xfb, 0xff}, raw[2:]...)),
		"short":                  "rt_x",
		"garbage":                "not a token",
		"long":                   "rt_" + strings.Repeat("A", 4000),
		"access token":           t0.AccessToken,
	}
	for name, tok := range cases {
		t.Run(name, func(t *testing.T) {
			res := e.refresh(t, "", tok)
			assert.Equal(t, http.StatusUnauthorized, res.status)
			assert.Equal(t, "invalid_refresh_token", res.code(t))
		})
	}
	assert.Zero(t, counter.rotates.Load(), "forged tokens never reach the store")

	// A correctly MACed token for a family that does not exist reaches the
	// store and is refused there; so is a generation above the current.
	res := e.refresh(t, "", identity.RefreshToken(e.masterKey, "default", store.NewID(store.PrefixFamily), 0))
	assert.Equal(t, http.StatusUnauthorized, res.status)

	// None of this hurt the real token.
	e.refresh(t, "", good).tokens(t)
}

func TestRefresh_ConcurrentSameToken(t *testing.T) {
	e := newEnv(t, envConfig{})
	u, t0 := e.loggedIn(t, "", "default")

	const n = 50
	var wg sync.WaitGroup
	results := make([]response, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = e.refresh(t, "", t0.RefreshToken)
		}()
	}
	close(start)
	wg.Wait()

	successor := ""
	for i, res := range results {
		ts := res.tokens(t)
		if i == 0 {
			successor = ts.RefreshToken
		}
		assert.Equal(t, successor, ts.RefreshToken, "request %d", i)
		e.verifyAccess(t, "default", u.ID, ts.AccessToken)
	}
	assert.NotEqual(t, t0.RefreshToken, successor)
	e.refresh(t, "", successor).tokens(t)
}

func TestHandler_NoProjectInContext(t *testing.T) {
	e := newEnv(t, envConfig{})
	res := e.do(t, http.MethodPost, "/p//v1/identity/login", "application/json", []byte(`{"email":"a@b.c","password":"p"}`))
	assert.Equal(t, http.StatusInternalServerError, res.status)
	assert.Equal(t, "internal", res.code(t))
}
