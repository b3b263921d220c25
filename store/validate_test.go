package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/paginate"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 123456789, time.UTC)

// wantInvalid fails unless err matches ErrInvalid.
func wantInvalid(t *testing.T, err error, what string, args ...any) {
	t.Helper()
	assert.ErrorIsf(t, err, ErrInvalid, what, args...)
}

// printable is every printable ASCII byte, the bytes CheckID accepts.
func printable() string {
	var b strings.Builder
	for c := byte('!'); c <= '~'; c++ {
		b.WriteByte(c)
	}
	return b.String()
}

func TestCheckProjectID(t *testing.T) {
	for _, id := range []string{"default", "a", "0", "acme-1", "a-", strings.Repeat("a", 63), "x" + strings.Repeat("-", 62)} {
		assert.NoErrorf(t, CheckProjectID(id), "CheckProjectID(%q)", id)
	}
	for _, id := range []string{"", "-a", "A", "aB", "acme_1", "a b", "a/b", "a.b", "a:b", strings.Repeat("a", 64), "é", "a\n", " a"} {
		wantInvalid(t, CheckProjectID(id), "CheckProjectID(%q)", id)
	}
}

func TestCheckID(t *testing.T) {
	for _, id := range []string{"a", "~", "usr_0a1b", strings.ReplaceAll(printable(), ":", ""), strings.Repeat("x", MaxIDLen), `'"\%_;--`} {
		assert.NoErrorf(t, CheckID("id", id), "CheckID(%q)", id)
	}
	for _, id := range []string{"", strings.Repeat("x", MaxIDLen+1), " ", "a b", " a", "a ", "a\tb", "a\nb", "\x00", "\x7f", "é", "a\xffb", "\u00a0", "a:b", ":"} {
		wantInvalid(t, CheckID("id", id), "CheckID(%q)", id)
	}
}

func TestCheckKey(t *testing.T) {
	assert.NoError(t, CheckKey("proj-a", "user id", "usr_1"))
	wantInvalid(t, CheckKey("Proj", "user id", "usr_1"), "CheckKey with a bad project")
	wantInvalid(t, CheckKey("proj-a", "user id", ""), "CheckKey with an empty id")
	wantInvalid(t, CheckKey("", "user id", ""), "CheckKey with both bad")
}

func TestCheckTime(t *testing.T) {
	for _, at := range []time.Time{t0, time.Unix(0, 0), time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), t0.In(time.FixedZone("x", 3600))} {
		assert.NoErrorf(t, CheckTime("at", at), "CheckTime(%s)", at)
	}
	wantInvalid(t, CheckTime("at", time.Time{}), "CheckTime(zero)")
	wantInvalid(t, CheckTime("at", time.Time{}.In(time.FixedZone("x", 3600))), "CheckTime(zero in another zone)")
}

func TestCheckPage(t *testing.T) {
	for _, limit := range []int{1, 2, paginate.MaxLimit, paginate.MaxLimit + 1} {
		assert.NoErrorf(t, CheckPage(paginate.Request{Limit: limit}), "CheckPage(limit %d)", limit)
	}
	for _, limit := range []int{0, -1, -1 << 62} {
		wantInvalid(t, CheckPage(paginate.Request{Limit: limit}), "CheckPage(limit %d)", limit)
	}
}

func TestCheckEmail(t *testing.T) {
	longest := strings.Repeat("a", 64) + "@" + strings.Repeat("b", MaxEmailLen-64-5) + ".com"
	require.Len(t, longest, MaxEmailLen)
	for _, email := range []string{"ann@example.com", "Ann.Smith@Example.COM", "o'neil+tag@example.com", "a%b_c@example.com", "x@y", "émile@example.com", "ZOË@example.com", "a@[192.0.2.1]", longest} {
		assert.NoErrorf(t, CheckEmail(email), "CheckEmail(%q)", email)
	}
	for _, email := range []string{
		"", " ", "ann", "ann@", "@example.com", "ann@@example.com", "ann..x@example.com", "ann@example..com",
		" ann@example.com", "ann@example.com ", "ann@example.com\n", "\tann@example.com",
		"Ann <ann@example.com>", "<ann@example.com>", "ann@example.com, bob@example.com", "ann@example.com (Ann)",
		`ann\x@example.com`, longest + "m",
	} {
		wantInvalid(t, CheckEmail(email), "CheckEmail(%q)", email)
	}
}

func TestCheckName(t *testing.T) {
	for _, name := range []string{"a", "Ada Lovelace", "a  b", `O'Brien "Bob" \ 100%`, "<script>", "👩‍💻 team", "日本語", strings.Repeat("é", MaxNameLen), strings.Repeat("x", MaxNameLen)} {
		assert.NoErrorf(t, CheckName("name", name), "CheckName(%q)", name)
	}
	for _, name := range []string{
		"", " ", " a", "a ", "a\u00a0", "\u3000a", "a\tb", "a\nb", "a\rb", "a\x00b", "a\x7fb", "a\u0085b", "a\xffb",
		"a\u202ab", "a\u202bb", "a\u202cb", "a\u202db", "a\u202eb", "a\u2066b", "a\u2067b", "a\u2068b", "a\u2069b",
		"a\u200eb", "a\u200fb", "a\u061cb", strings.Repeat("é", MaxNameLen+1), strings.Repeat("x", MaxNameLen+1),
	} {
		wantInvalid(t, CheckName("name", name), "CheckName(%q)", name)
	}
}

func TestCheckTags(t *testing.T) {
	many := func(n int) []string {
		tags := make([]string, n)
		for i := range tags {
			tags[i] = fmt.Sprintf("t%d", i)
		}
		return tags
	}
	for _, tags := range [][]string{nil, {}, {"admin"}, {"a", "A"}, {"ünïcödé", "日本", "v1.2", "a:b", "x_y-z", "0day"}, {strings.Repeat("é", MaxTagLen)}, many(MaxTags)} {
		assert.NoErrorf(t, CheckTags(tags), "CheckTags(%q)", tags)
	}
	for _, tags := range [][]string{
		{""}, {"a b"}, {"a,b"}, {`a"b`}, {"[x]"}, {"-a"}, {"_a"}, {".a"}, {":a"}, {"a/b"}, {"a\nb"}, {"a\u202eb"}, {"a\xffb"},
		{"admin", "admin"}, {strings.Repeat("a", MaxTagLen+1)}, many(MaxTags + 1),
	} {
		wantInvalid(t, CheckTags(tags), "CheckTags(%q)", tags)
	}
}

func TestCheckThrottle(t *testing.T) {
	for _, key := range []string{"k", "login:proj-a:ann@example.com", strings.Repeat("k", 512), "ключ"} {
		assert.NoErrorf(t, CheckThrottle(key, time.Minute), "CheckThrottle(%q)", key)
	}
	wantInvalid(t, CheckThrottle("", time.Minute), "CheckThrottle with an empty key")
	wantInvalid(t, CheckThrottle(strings.Repeat("k", 513), time.Minute), "CheckThrottle with a 513-byte key")
	wantInvalid(t, CheckThrottle("k", 0), "CheckThrottle with a zero window")
	wantInvalid(t, CheckThrottle("k", -time.Second), "CheckThrottle with a negative window")
}

func TestCheckRotate(t *testing.T) {
	ok := RotateParams{Now: t0, TTL: time.Hour, ReuseWindow: 10 * time.Second}
	assert.NoError(t, CheckRotate(0, ok))
	assert.NoError(t, CheckRotate(1<<40, ok))
	assert.NoError(t, CheckRotate(0, RotateParams{Now: t0, TTL: time.Nanosecond}), "a zero window is allowed")
	for name, c := range map[string]struct {
		gen int64
		p   RotateParams
	}{
		"negative gen":    {-1, ok},
		"zero Now":        {0, RotateParams{TTL: time.Hour}},
		"zero TTL":        {0, RotateParams{Now: t0}},
		"negative TTL":    {0, RotateParams{Now: t0, TTL: -time.Hour}},
		"negative window": {0, RotateParams{Now: t0, TTL: time.Hour, ReuseWindow: -1}},
	} {
		wantInvalid(t, CheckRotate(c.gen, c.p), "CheckRotate with %s", name)
	}
}

// refuses checks that check accepts valid and refuses valid after each
// change.
func refuses[T any](t *testing.T, check func(T) error, valid T, changes map[string]func(*T)) {
	t.Helper()
	require.NoError(t, check(valid), "the valid value")
	for name, change := range changes {
		v := valid
		change(&v)
		wantInvalid(t, check(v), "with %s", name)
	}
}

func TestCheckUser(t *testing.T) {
	valid := User{ID: "usr_1", ProjectID: "proj-a", Email: "ann@example.com", PasswordHash: "$argon2id$x", Tags: []string{"admin"}, CreatedAt: t0}
	refuses(t, CheckUser, valid, map[string]func(*User){
		"a bad project":       func(u *User) { u.ProjectID = "Proj" },
		"an empty id":         func(u *User) { u.ID = "" },
		"a malformed email":   func(u *User) { u.Email = "Ann <ann@example.com>" },
		"an empty hash":       func(u *User) { u.PasswordHash = "" },
		"bad tags":            func(u *User) { u.Tags = []string{"a b"} },
		"a zero CreatedAt":    func(u *User) { u.CreatedAt = time.Time{} },
		"DisabledAt set":      func(u *User) { u.DisabledAt = t0 },
		"everything is wrong": func(u *User) { *u = User{DisabledAt: t0} },
	})
	nilTags := valid
	nilTags.Tags = nil
	assert.NoError(t, CheckUser(nilTags), "nil tags")
}

func TestCheckPasswordHash(t *testing.T) {
	assert.NoError(t, CheckPasswordHash("proj-a", "usr_1", "$argon2id$x"))
	wantInvalid(t, CheckPasswordHash("Proj", "usr_1", "$argon2id$x"), "CheckPasswordHash with a bad project")
	wantInvalid(t, CheckPasswordHash("proj-a", "", "$argon2id$x"), "CheckPasswordHash with an empty id")
	wantInvalid(t, CheckPasswordHash("proj-a", "usr_1", ""), "CheckPasswordHash with an empty hash")
}

func TestCheckContact(t *testing.T) {
	refuses(t, CheckContact, Contact{ID: "ct_1", ProjectID: "proj-a", Name: "Ada", CreatedAt: t0}, map[string]func(*Contact){
		"a bad project":    func(c *Contact) { c.ProjectID = "" },
		"an empty id":      func(c *Contact) { c.ID = "" },
		"an empty name":    func(c *Contact) { c.Name = "" },
		"a bidi name":      func(c *Contact) { c.Name = "a\u202eb" },
		"a zero CreatedAt": func(c *Contact) { c.CreatedAt = time.Time{} },
	})
}

func TestCheckAPIKey(t *testing.T) {
	refuses(t, CheckAPIKey, APIKey{ID: "key_1", ProjectID: "proj-a", Name: "ci", CreatedAt: t0}, map[string]func(*APIKey){
		"a bad project":      func(k *APIKey) { k.ProjectID = "-a" },
		"an id with a space": func(k *APIKey) { k.ID = "key 1" },
		"a long name":        func(k *APIKey) { k.Name = strings.Repeat("n", MaxNameLen+1) },
		"a zero CreatedAt":   func(k *APIKey) { k.CreatedAt = time.Time{} },
		"LastUsedAt set":     func(k *APIKey) { k.LastUsedAt = t0 },
		"RevokedAt set":      func(k *APIKey) { k.RevokedAt = t0 },
	})
}

func TestCheckSigningKey(t *testing.T) {
	valid := SigningKey{ID: "sk_1", ProjectID: "proj-a", Algorithm: AlgEdDSA, PublicKey: make([]byte, 32), EncryptedPrivateKey: []byte{1}, CreatedAt: t0}
	refuses(t, CheckSigningKey, valid, map[string]func(*SigningKey){
		"no algorithm":          func(k *SigningKey) { k.Algorithm = "" },
		"alg HS256":             func(k *SigningKey) { k.Algorithm = "HS256" },
		"ES256, 32 bytes":       func(k *SigningKey) { k.Algorithm = AlgES256 },
		"RS256, 32 bytes":       func(k *SigningKey) { k.Algorithm = AlgRS256 },
		"a bad project":         func(k *SigningKey) { k.ProjectID = "A" },
		"an empty id":           func(k *SigningKey) { k.ID = "" },
		"a 31-byte public key":  func(k *SigningKey) { k.PublicKey = make([]byte, 31) },
		"a 33-byte public key":  func(k *SigningKey) { k.PublicKey = make([]byte, 33) },
		"no public key":         func(k *SigningKey) { k.PublicKey = nil },
		"no sealed private key": func(k *SigningKey) { k.EncryptedPrivateKey = nil },
		"a zero CreatedAt":      func(k *SigningKey) { k.CreatedAt = time.Time{} },
		"RetiredAt set":         func(k *SigningKey) { k.RetiredAt = t0 },
	})
}

func TestCheckFamily(t *testing.T) {
	valid := RefreshFamily{ID: "rf_1", ProjectID: "proj-a", UserID: "usr_1", IssuedAt: t0, ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}
	refuses(t, CheckFamily, valid, map[string]func(*RefreshFamily){
		"a bad project":     func(f *RefreshFamily) { f.ProjectID = "" },
		"an empty id":       func(f *RefreshFamily) { f.ID = "" },
		"an empty user id":  func(f *RefreshFamily) { f.UserID = "" },
		"a bad user id":     func(f *RefreshFamily) { f.UserID = "usr 1" },
		"Generation 1":      func(f *RefreshFamily) { f.Generation = 1 },
		"Generation -1":     func(f *RefreshFamily) { f.Generation = -1 },
		"a zero IssuedAt":   func(f *RefreshFamily) { f.IssuedAt = time.Time{} },
		"a zero ExpiresAt":  func(f *RefreshFamily) { f.ExpiresAt = time.Time{} },
		"a zero CreatedAt":  func(f *RefreshFamily) { f.CreatedAt = time.Time{} },
		"RevokedAt set":     func(f *RefreshFamily) { f.RevokedAt = t0 },
		"everything absent": func(f *RefreshFamily) { *f = RefreshFamily{} },
	})
	withEnd := valid
	withEnd.EndsAt = t0.Add(90 * 24 * time.Hour)
	assert.NoError(t, CheckFamily(withEnd), "a family with EndsAt")
}

func TestCheckFamilyStart(t *testing.T) {
	f := RefreshFamily{ID: "rf_1", ProjectID: "proj-a", UserID: "usr_1", IssuedAt: t0, ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}
	assert.NoError(t, CheckFamilyStart(f, "$argon2id$hash"))
	assert.ErrorIs(t, CheckFamilyStart(f, ""), ErrInvalid, "an empty password hash")
	f.ID = ""
	assert.ErrorIs(t, CheckFamilyStart(f, "$argon2id$hash"), ErrInvalid, "a family CheckFamily refuses")
}

func TestCheckAudit(t *testing.T) {
	valid := AuditEntry{ID: "aud_1", ProjectID: "proj-a", At: t0, Actor: "usr_1", Action: ActionSignIn, Target: "usr_1", ClientAddr: "192.0.2.1"}
	long := strings.Repeat("x", MaxIDLen+1)
	refuses(t, CheckAudit, valid, map[string]func(*AuditEntry){
		"a bad project":         func(e *AuditEntry) { e.ProjectID = "P" },
		"an empty id":           func(e *AuditEntry) { e.ID = "" },
		"a zero At":             func(e *AuditEntry) { e.At = time.Time{} },
		"an empty action":       func(e *AuditEntry) { e.Action = "" },
		"a long actor":          func(e *AuditEntry) { e.Actor = long },
		"a long target":         func(e *AuditEntry) { e.Target = long },
		"a long client address": func(e *AuditEntry) { e.ClientAddr = long },
	})
	anonymous := valid
	anonymous.Actor, anonymous.Target, anonymous.ClientAddr = "", "", ""
	assert.NoError(t, CheckAudit(anonymous), "an entry without actor, target and client address")
	edge := valid
	edge.Actor, edge.Target, edge.ClientAddr = long[1:], long[1:], long[1:]
	assert.NoError(t, CheckAudit(edge), "an entry with MaxIDLen-byte fields")
}

func TestCheckConsoleSession(t *testing.T) {
	id := strings.Repeat("0123456789abcdef", 4)
	refuses(t, CheckConsoleSession, ConsoleSession{ID: id, ProjectID: "proj-a", UserID: "usr_1", CreatedAt: t0, LastSeenAt: t0}, map[string]func(*ConsoleSession){
		"a bad project":        func(s *ConsoleSession) { s.ProjectID = "" },
		"an empty id":          func(s *ConsoleSession) { s.ID = "" },
		"an upper-case id":     func(s *ConsoleSession) { s.ID = strings.ToUpper(id) },
		"a 63-character id":    func(s *ConsoleSession) { s.ID = id[1:] },
		"a 65-character id":    func(s *ConsoleSession) { s.ID = id + "0" },
		"a non-hex id":         func(s *ConsoleSession) { s.ID = strings.Repeat("g", 64) },
		"an empty user id":     func(s *ConsoleSession) { s.UserID = "" },
		"a zero CreatedAt":     func(s *ConsoleSession) { s.CreatedAt = time.Time{} },
		"a zero LastSeenAt":    func(s *ConsoleSession) { s.LastSeenAt = time.Time{} },
		"an id with a newline": func(s *ConsoleSession) { s.ID = id[1:] + "\n" },
	})
}

// "its text says what is wrong without echoing the value": no refusal's
// message holds the value it refused, so that an error that reaches a log
// never carries a password hash, an email or a token.
func TestCheck_MessagesDoNotEchoValue(t *testing.T) {
	const secret = "Zq9SecretMarker"
	errs := map[string]error{
		"CheckProjectID": CheckProjectID(secret),
		"CheckID":        CheckID("id", secret+" x"),
		"CheckEmail":     CheckEmail(secret + " <a@b.c>"),
		"CheckName":      CheckName("name", secret+"\x00"),
		"CheckTags":      CheckTags([]string{secret + " x"}),
		"CheckThrottle":  CheckThrottle(strings.Repeat(secret, 40), time.Minute),
		"CheckUser":      CheckUser(User{ID: secret + " x", Email: secret, PasswordHash: ""}),
		"CheckAudit":     CheckAudit(AuditEntry{ID: "aud_1", ProjectID: "p", At: t0, Action: "a", Actor: strings.Repeat(secret, 10)}),
		"CheckConsoleSession": CheckConsoleSession(ConsoleSession{
			ID: secret, ProjectID: "p", UserID: "u", CreatedAt: t0, LastSeenAt: t0,
		}),
	}
	for name, err := range errs {
		require.Errorf(t, err, "%s refuses the value", name)
		assert.ErrorIsf(t, err, ErrInvalid, "%s", name)
		assert.NotContainsf(t, err.Error(), secret, "%s's message echoes the value", name)
		assert.NotEmptyf(t, strings.TrimSuffix(err.Error(), ErrInvalid.Error()), "%s's message says what is wrong", name)
	}
}

// Every refusal of a Check function matches ErrInvalid, also when several
// problems are joined.
func TestCheck_JoinedErrorsMatchErrInvalid(t *testing.T) {
	err := CheckUser(User{})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrInvalid)
	var joined interface{ Unwrap() []error }
	require.True(t, errors.As(err, &joined), "CheckUser(User{}) reports each problem")
	assert.Greater(t, len(joined.Unwrap()), 1, "problems reported")
	for _, e := range joined.Unwrap() {
		assert.ErrorIs(t, e, ErrInvalid)
	}
}
