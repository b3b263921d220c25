package identity_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/internal/testutil"
	"github.com/latchkey-dev/latchkey/store"
)

func TestLogin_OK(t *testing.T) {
	e := newEnv(t, envConfig{})
	u := e.createUser(t, "default", "alice@example.com", "correct horse", "")
	admin := e.createUser(t, "default", "root@example.com", "battery staple", "", "admin", "ops")

	res := e.login(t, "", "alice@example.com", "correct horse")
	require.Equal(t, http.StatusOK, res.status, "body %s", res.body)
	assert.Equal(t, "application/json", res.header.Get("Content-Type"))
	assert.Equal(t, "no-store", res.header.Get("Cache-Control"))

	m := res.json(t)
	assert.Len(t, m, 4, "token set members: %v", m)
	assert.Equal(t, float64(86400), m["expires_in"])
	user := m["user"].(map[string]any)
	assert.Equal(t, map[string]any{"id": u.ID, "email": "alice@example.com", "tags": []any{}}, user)
	assert.Contains(t, string(res.body), `"tags":[]`)

	ts := res.tokens(t)
	assert.True(t, strings.HasPrefix(ts.RefreshToken, "rt_"), ts.RefreshToken)
	// rt_ + base64url of 16 + 8 + 32 bytes: at least 256 bits only the
	// server can produce.
	assert.Len(t, ts.RefreshToken, 3+75)
	e.verifyAccess(t, "default", u.ID, ts.AccessToken)

	ts = e.login(t, "", "root@example.com", "battery staple").tokens(t)
	assert.Equal(t, []string{"admin", "ops"}, ts.User.Tags)
	e.verifyAccess(t, "default", admin.ID, ts.AccessToken)

	// Each login starts its own family.
	ts2 := e.login(t, "", "root@example.com", "battery staple").tokens(t)
	assert.NotEqual(t, ts.RefreshToken, ts2.RefreshToken)
}

func TestLogin_WrongPasswordAndUnknownEmailAreIdentical(t *testing.T) {
	e := newEnv(t, envConfig{})
	e.createUser(t, "default", "alice@example.com", "correct horse", "")

	wrongPassword := e.login(t, "", "alice@example.com", "wrong horse")
	unknownEmail := e.login(t, "", "mallory@example.com", "correct horse")

	require.Equal(t, http.StatusUnauthorized, wrongPassword.status)
	assert.Equal(t, "invalid_credentials", wrongPassword.code(t))
	assert.Equal(t, wrongPassword.status, unknownEmail.status)
	assert.Equal(t, string(wrongPassword.body), string(unknownEmail.body), "bodies differ")
	wrongPassword.header.Del("Date")
	unknownEmail.header.Del("Date")
	assert.Equal(t, wrongPassword.header, unknownEmail.header, "headers differ")
	assert.NotContains(t, string(wrongPassword.body), "alice")
}

func TestLogin_BodyRejections(t *testing.T) {
	e := newEnv(t, envConfig{})
	e.createUser(t, "default", "alice@example.com", "correct horse", "")
	big := `{"email":"alice@example.com","password":"` + strings.Repeat("x", 64<<10) + `"}`

	cases := []struct {
		name, contentType, body string
		status                  int
		code                    string
	}{
		{"no content type", "", `{"email":"a@b.c","password":"p"}`, 415, "unsupported_media_type"},
		{"text plain", "text/plain", `{"email":"a@b.c","password":"p"}`, 415, "unsupported_media_type"},
		{"form", "application/x-www-form-urlencoded", `email=a&password=b`, 415, "unsupported_media_type"},
		{"too large", "application/json", big, 413, "request_too_large"},
		{"malformed", "application/json", `{"email":"a@b.c",`, 400, "invalid_request"},
		{"empty body", "application/json", ``, 400, "invalid_request"},
		{"array", "application/json", `[{"email":"a@b.c","password":"p"}]`, 400, "invalid_request"},
		{"string", "application/json", `"hello"`, 400, "invalid_request"},
		{"null", "application/json", `null`, 400, "invalid_request"},
		{"email number", "application/json", `{"email":1,"password":"p"}`, 400, "invalid_request"},
		{"password bool", "application/json", `{"email":"a@b.c","password":true}`, 400, "invalid_request"},
		{"password object", "application/json", `{"email":"a@b.c","password":{}}`, 400, "invalid_request"},
		{"trailing data", "application/json", `{"email":"a@b.c","password":"p"} {}`, 400, "invalid_request"},
		{"trailing garbage", "application/json", `{"email":"a@b.c","password":"p"}x`, 400, "invalid_request"},
		{"duplicate member", "application/json", `{"email":"a@b.c","password":"p","password":"q"}`, 400, "invalid_request"},
		{"invalid utf-8", "application/json", "{\"email\":\"a@b.c\",\"password\":\"p\xff\"}", 400, "invalid_request"},
		{"missing email", "application/json", `{"password":"p"}`, 400, "invalid_request"},
		{"missing password", "application/json", `{"email":"a@b.c"}`, 400, "invalid_request"},
		{"empty email", "application/json", `{"email":"","password":"p"}`, 400, "invalid_request"},
		{"empty password", "application/json", `{"email":"a@b.c","password":""}`, 400, "invalid_request"},
		{"null email", "application/json", `{"email":null,"password":"p"}`, 400, "invalid_request"},
		{"empty object", "application/json", `{}`, 400, "invalid_request"},
		// Accepted bodies, checked against the credentials.
		{"charset parameter", "application/json; charset=utf-8", `{"email":"alice@example.com","password":"nope"}`, 401, "invalid_credentials"},
		{"unknown field ignored", "application/json", `{"email":"alice@example.com","password":"nope","remember":true}`, 401, "invalid_credentials"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := e.do(t, http.MethodPost, "/v1/identity/login", c.contentType, []byte(c.body))
			assert.Equal(t, c.status, res.status, "body %s", res.body)
			assert.Equal(t, c.code, res.code(t))
			m := res.json(t)
			for _, k := range []string{"type", "title", "status", "detail", "code"} {
				assert.Contains(t, m, k)
			}
		})
	}

	t.Run("valid after all", func(t *testing.T) {
		e.do(t, http.MethodPost, "/v1/identity/login", "application/json; charset=utf-8",
			[]byte(`{"email":"alice@example.com","password":"correct horse","remember":true}`)).tokens(t)
	})
}

func TestRefresh_BodyRejections(t *testing.T) {
	e := newEnv(t, envConfig{})
	cases := []struct {
		name, contentType, body string
		status                  int
		code                    string
	}{
		{"no content type", "", `{"refresh_token":"rt_x"}`, 415, "unsupported_media_type"},
		{"too large", "application/json", `{"refresh_token":"` + strings.Repeat("x", 64<<10) + `"}`, 413, "request_too_large"},
		{"malformed", "application/json", `{"refresh_token":`, 400, "invalid_request"},
		{"array", "application/json", `["rt_x"]`, 400, "invalid_request"},
		{"wrong type", "application/json", `{"refresh_token":42}`, 400, "invalid_request"},
		{"trailing data", "application/json", `{"refresh_token":"rt_x"}{}`, 400, "invalid_request"},
		{"duplicate member", "application/json", `{"refresh_token":"rt_x","refresh_token":"rt_y"}`, 400, "invalid_request"},
		{"invalid utf-8", "application/json", "{\"refresh_token\":\"rt_\xc3\"}", 400, "invalid_request"},
		{"missing", "application/json", `{}`, 400, "invalid_request"},
		{"empty", "application/json", `{"refresh_token":""}`, 400, "invalid_request"},
		{"unknown token", "application/json", `{"refresh_token":"rt_x","other":1}`, 401, "invalid_refresh_token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := e.do(t, http.MethodPost, "/v1/identity/refresh", c.contentType, []byte(c.body))
			assert.Equal(t, c.status, res.status, "body %s", res.body)
			assert.Equal(t, c.code, res.code(t))
		})
	}
}

func TestLogin_EmailCaseInsensitive(t *testing.T) {
	e := newEnv(t, envConfig{})
	u := e.createUser(t, "default", "Alice@Example.COM", "correct horse", "")
	for _, email := range []string{"alice@example.com", "ALICE@EXAMPLE.COM", "Alice@Example.COM", "aLiCe@eXaMpLe.CoM"} {
		ts := e.login(t, "", email, "correct horse").tokens(t)
		assert.Equal(t, u.ID, ts.User.ID)
		assert.Equal(t, "Alice@Example.COM", ts.User.Email, "the email as it was given")
	}
}

func TestLogin_PasswordIsExact(t *testing.T) {
	e := newEnv(t, envConfig{})
	e.createUser(t, "default", "alice@example.com", "Correct Horse", "")
	for _, pw := range []string{"correct horse", "Correct Horse ", " Correct Horse", "Correct Hors"} {
		assert.Equal(t, http.StatusUnauthorized, e.login(t, "", "alice@example.com", pw).status, "%q", pw)
	}
	e.login(t, "", "alice@example.com", "Correct Horse").tokens(t)
}

func TestLogin_BcryptUserIsUpgraded(t *testing.T) {
	for _, prefix := range []string{"$2a$", "$2b$", "$2y$"} {
		t.Run(prefix, func(t *testing.T) {
			e := newEnv(t, envConfig{})
			// The cost does not change what is checked; the lowest keeps
			// the test short under the race detector.
			h, err := bcrypt.GenerateFromPassword([]byte("imported pw"), bcrypt.MinCost)
			require.NoError(t, err)
			hash := prefix + string(h[4:])
			u := e.createUser(t, "default", "old@example.com", "", hash)

			assert.Equal(t, http.StatusUnauthorized, e.login(t, "", "old@example.com", "imported PW").status)
			got, err := e.st.GetUser(context.Background(), "default", u.ID)
			require.NoError(t, err)
			assert.Equal(t, hash, got.PasswordHash, "a failed login changes nothing")

			ts := e.login(t, "", "old@example.com", "imported pw").tokens(t)
			e.verifyAccess(t, "default", u.ID, ts.AccessToken)
			got, err = e.st.GetUser(context.Background(), "default", u.ID)
			require.NoError(t, err)
			assert.Regexp(t, `^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`, got.PasswordHash)
			ok, rehash, err := e.hasher.Verify(context.Background(), got.PasswordHash, "imported pw")
			require.NoError(t, err)
			assert.True(t, ok)
			assert.False(t, rehash)

			// The next login uses the new hash and keeps it.
			e.login(t, "", "old@example.com", "imported pw").tokens(t)
			again, err := e.st.GetUser(context.Background(), "default", u.ID)
			require.NoError(t, err)
			assert.Equal(t, got.PasswordHash, again.PasswordHash)
		})
	}
}

// A password set while a sign-in with the old one hashes (an
// administrator's reset) is not undone by that sign-in's upgrade of the
// old hash, and the sign-in is refused: the password it checked is no
// longer the user's.
func TestAuthenticate_UpgradeNeverUndoesAReset(t *testing.T) {
	e := newEnv(t, envConfig{})
	ctx := context.Background()
	u := e.legacyUser(t, "old@example.com")
	reset, err := e.hasher.Hash(ctx, "the new password")
	require.NoError(t, err)
	auth := e.authRacing(func() {
		require.NoError(t, e.st.SetPasswordHash(ctx, "default", u.ID, reset))
	})

	_, err = auth.Authenticate(ctx, "default", "old@example.com", "imported pw", "")
	require.ErrorIs(t, err, identity.ErrInvalidCredentials)
	got, err := e.st.GetUser(ctx, "default", u.ID)
	require.NoError(t, err)
	assert.Equal(t, reset, got.PasswordHash, "the password set during the sign-in stays")
	_, err = auth.Authenticate(ctx, "default", "old@example.com", "the new password", "")
	require.NoError(t, err, "the new password signs in")
}

// Two sign-ins of a user with a legacy hash, at once: both check the old
// hash, the first upgrades it, and the second, whose upgrade then finds
// the hash changed, still signs in, since the password is still the
// user's (the new hash holds the same one).
func TestAuthenticate_ConcurrentUpgradesBothSignIn(t *testing.T) {
	e := newEnv(t, envConfig{})
	ctx := context.Background()
	u := e.legacyUser(t, "twice@example.com")
	upgraded, err := e.hasher.Hash(ctx, "imported pw")
	require.NoError(t, err)
	// The other sign-in's upgrade lands right after this one's lookup.
	auth := e.authRacing(func() {
		require.NoError(t, e.st.ReplacePasswordHash(ctx, "default", u.ID, u.PasswordHash, upgraded))
	})

	got, err := auth.Authenticate(ctx, "default", "twice@example.com", "imported pw", "")
	require.NoError(t, err, "the password is still the user's")
	assert.Equal(t, upgraded, got.PasswordHash)
	stored, err := e.st.GetUser(ctx, "default", u.ID)
	require.NoError(t, err)
	assert.Equal(t, upgraded, stored.PasswordHash, "the first upgrade stays")

	// The same race with the user disabled meanwhile refuses the sign-in.
	v := e.legacyUser(t, "gone@example.com")
	auth = e.authRacing(func() {
		require.NoError(t, e.st.ReplacePasswordHash(ctx, "default", v.ID, v.PasswordHash, upgraded))
		require.NoError(t, e.st.DisableUser(ctx, "default", v.ID, e.clock.Now()))
	})
	_, err = auth.Authenticate(ctx, "default", "gone@example.com", "imported pw", "")
	require.ErrorIs(t, err, identity.ErrInvalidCredentials)
}

// legacyUser creates a user of project default whose password, "imported
// pw", has a bcrypt hash: a sign-in upgrades it.
func (e *env) legacyUser(t *testing.T, email string) store.User {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte("imported pw"), bcrypt.MinCost)
	require.NoError(t, err)
	return e.createUser(t, "default", email, "", string(h))
}

// authRacing returns an Authenticator of e whose first sign-in runs during
// right after its lookup has read the user: a change another request makes
// while this sign-in hashes.
func (e *env) authRacing(during func()) *identity.Authenticator {
	return identity.NewAuthenticator(&resetWhileSigningIn{UserStore: e.st, reset: during}, e.hasher, e.lim, nil)
}

// resetWhileSigningIn is a UserStore that sets the user's password (reset)
// right after the first sign-in's lookup has read the old one.
type resetWhileSigningIn struct {
	store.UserStore
	reset func()
	once  sync.Once
}

func (r *resetWhileSigningIn) GetUserByEmail(ctx context.Context, projectID, email string) (store.User, error) {
	u, err := r.UserStore.GetUserByEmail(ctx, projectID, email)
	r.once.Do(r.reset)
	return u, err
}

func TestLogin_WeakArgonUserIsUpgraded(t *testing.T) {
	e := newEnv(t, envConfig{})
	u := e.createUser(t, "default", "weak@example.com", "", weakArgonHash("pw weak", 4096, 1))
	e.login(t, "", "weak@example.com", "pw weak").tokens(t)
	got, err := e.st.GetUser(context.Background(), "default", u.ID)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(got.PasswordHash, "$argon2id$v=19$m=19456,t=2,p=1$"), got.PasswordHash)
}

func TestLogin_BcryptLongPasswordNeverMatches(t *testing.T) {
	e := newEnv(t, envConfig{})
	long := strings.Repeat("abcdefgh", 10) // 80 bytes
	h, err := bcrypt.GenerateFromPassword([]byte(long[:72]), 4)
	require.NoError(t, err)
	u := e.createUser(t, "default", "long@example.com", "", string(h))

	// bcrypt itself would accept the 80-byte password: it reads 72 bytes.
	require.NoError(t, bcrypt.CompareHashAndPassword(h, []byte(long)))

	res := e.login(t, "", "long@example.com", long)
	assert.Equal(t, http.StatusUnauthorized, res.status)
	assert.Equal(t, "invalid_credentials", res.code(t))
	got, err := e.st.GetUser(context.Background(), "default", u.ID)
	require.NoError(t, err)
	assert.Equal(t, string(h), got.PasswordHash)

	// Exactly the 72 bytes bcrypt hashed do match.
	e.login(t, "", "long@example.com", long[:72]).tokens(t)
}

func TestLogin_TooLongPassword(t *testing.T) {
	e := newEnv(t, envConfig{})
	pw := strings.Repeat("p", 1024)
	e.createUser(t, "default", "max@example.com", pw, "")
	e.login(t, "", "max@example.com", pw).tokens(t)
	res := e.login(t, "", "max@example.com", pw+"p")
	assert.Equal(t, http.StatusUnauthorized, res.status)
	assert.Equal(t, "invalid_credentials", res.code(t))
}

func TestLogin_UnreadableStoredHash(t *testing.T) {
	e := newEnv(t, envConfig{})
	e.createUser(t, "default", "broken@example.com", "", "$argon2id$v=19$m=4294967295,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$"+strings.Repeat("A", 43))
	res := e.login(t, "", "broken@example.com", "anything")
	assert.Equal(t, http.StatusUnauthorized, res.status)
	assert.Equal(t, "invalid_credentials", res.code(t))
}

func TestLogin_ProjectsAreSeparate(t *testing.T) {
	e := newEnv(t, envConfig{projects: []string{"acme"}})
	a := e.createUser(t, "default", "same@example.com", "pw default", "")
	b := e.createUser(t, "acme", "same@example.com", "pw acme", "")

	assert.Equal(t, http.StatusUnauthorized, e.login(t, "/p/acme", "same@example.com", "pw default").status)
	ts := e.login(t, "/p/acme", "same@example.com", "pw acme").tokens(t)
	assert.Equal(t, b.ID, ts.User.ID)
	e.verifyAccess(t, "acme", b.ID, ts.AccessToken)
	ts = e.login(t, "", "same@example.com", "pw default").tokens(t)
	assert.Equal(t, a.ID, ts.User.ID)
}

func TestLogin_SecretsNeverLogged(t *testing.T) {
	var buf testutil.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := newEnv(t, envConfig{logger: logger, opts: identity.Options{NoReuseWindow: true}})
	alice := e.createUser(t, "default", "alice@example.com", "correct horse", "")

	e.login(t, "", "alice@example.com", "wrong horse", "X-Test-Client", "198.51.100.7")
	failed := buf.String()
	e.login(t, "", "nobody@example.com", "wrong horse")
	unknown := strings.TrimPrefix(buf.String(), failed)
	ts := e.login(t, "", "alice@example.com", "correct horse").tokens(t)
	next := e.refresh(t, "", ts.RefreshToken).tokens(t)
	e.post(t, "/v1/identity/refresh", map[string]string{"refresh_token": ts.RefreshToken}, "X-Test-Client", "203.0.113.9") // replay: logged at Warn
	e.refresh(t, "", ts.RefreshToken+"x")

	logs := buf.String()
	// An incident needs to know whose account failed and who replayed.
	assert.Contains(t, failed, "user="+alice.ID, "a failed sign-in of a known account names the user")
	assert.Contains(t, failed, "client=198.51.100.7")
	assert.Regexp(t, `account=[A-Za-z0-9_-]{12}\b`, unknown, "an unknown account is named by its key's hash")
	assert.Regexp(t, `replayed.*client=203\.0\.113\.9`, logs, "the replay is logged with its client")
	for _, secret := range []string{"correct horse", "wrong horse", ts.RefreshToken, next.RefreshToken, ts.AccessToken, next.AccessToken, "$argon2id$",
		"alice@example.com", "nobody@example.com"} {
		assert.NotContains(t, logs, secret)
	}
}

func TestLogin_UnknownEmailCostsOneHash(t *testing.T) {
	e := newEnv(t, envConfig{})
	e.createUser(t, "default", "alice@example.com", "correct horse", "")

	// With every hashing slot taken, a login that hashes cannot answer;
	// an unknown email waits exactly like a wrong password.
	release, err := e.hasher.HoldSlots(context.Background())
	require.NoError(t, err)
	for _, email := range []string{"alice@example.com", "nobody@example.com"} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+"/v1/identity/login",
			strings.NewReader(`{"email":"`+email+`","password":"wrong horse"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		res, err := e.srv.Client().Do(req)
		if err == nil {
			res.Body.Close()
		}
		cancel()
		assert.ErrorIs(t, err, context.DeadlineExceeded, "%s answered without hashing", email)
	}
	release()

	// A bad body is refused without hashing.
	release, err = e.hasher.HoldSlots(context.Background())
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadRequest, e.do(t, http.MethodPost, "/v1/identity/login", "application/json", []byte(`{"email":"x@y.z"}`)).status)
	release()
}

func TestAuthenticate_EmptyEmailIsInvalidCredentials(t *testing.T) {
	e := newEnv(t, envConfig{})
	_, err := e.auth.Authenticate(context.Background(), "default", "", "pw", "")
	assert.ErrorIs(t, err, identity.ErrInvalidCredentials)
	_, err = e.auth.Authenticate(context.Background(), "default", "   ", "pw", "192.0.2.1")
	assert.ErrorIs(t, err, identity.ErrInvalidCredentials)
}
