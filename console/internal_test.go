package console

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

func TestSessionSecret(t *testing.T) {
	a, b := randomToken(), randomToken()
	require.Len(t, a, 43, "256 bits, base64url without padding")
	assert.NotEqual(t, a, b)
	assert.True(t, wellFormedToken(a))

	id := sessionID(a)
	sum := sha256.Sum256([]byte(a))
	assert.Equal(t, hex.EncodeToString(sum[:]), id, "the stored id is the SHA-256 of the cookie's value")
	require.NoError(t, store.CheckConsoleSession(store.ConsoleSession{
		ID: id, ProjectID: "acme", UserID: "usr_1", CreatedAt: time.Now(), LastSeenAt: time.Now(),
	}), "the store accepts the id")

	sa, sb := session{secret: a}, session{secret: b}
	assert.Equal(t, sa.formToken(), session{secret: a}.formToken(), "the same on every instance")
	assert.NotEqual(t, sa.formToken(), sb.formToken())
	assert.Len(t, sa.formToken(), 43)
	for _, derived := range []string{id, a} {
		assert.NotEqual(t, sa.formToken(), derived, "the form token is neither the secret nor the stored id")
	}

	for _, bad := range []string{"", a[:42], a + "A", strings.Repeat("+", 43), strings.Repeat("/", 43), a[:41] + "==", a[:42] + " "} {
		assert.False(t, wellFormedToken(bad), "%q", bad)
	}
}

func TestFlashCookie(t *testing.T) {
	h := &Handler{now: time.Now}
	secret := randomToken()
	set := func(f flash) *http.Cookie {
		w := httptest.NewRecorder()
		c := &call{w: w, r: httptest.NewRequest(http.MethodPost, "/console/keys", nil), project: "acme", sess: session{secret: secret}}
		h.setFlash(c, f)
		cookies := w.Result().Cookies()
		require.Len(t, cookies, 1)
		assert.Equal(t, "latchkey_flash_acme", cookies[0].Name)
		assert.True(t, cookies[0].HttpOnly)
		assert.Equal(t, http.SameSiteStrictMode, cookies[0].SameSite)
		assert.Equal(t, 60, cookies[0].MaxAge)
		return cookies[0]
	}
	take := func(ck *http.Cookie, secret string) (flash, []*http.Cookie) {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/console/keys", nil)
		r.AddCookie(ck)
		got := h.takeFlash(&call{w: w, r: r, project: "acme", sess: session{secret: secret}})
		return got, w.Result().Cookies()
	}

	want := flash{Kind: "success", Message: "Revoked “ci\nbackend” (key_1)."}
	ck := set(want)
	got, cleared := take(ck, secret)
	assert.Equal(t, want, got)
	require.Len(t, cleared, 1)
	assert.Equal(t, -1, cleared[0].MaxAge, "taken once: the cookie is cleared")

	got, _ = take(ck, randomToken())
	assert.Equal(t, flash{}, got, "another session's message is not shown")

	tampered := *ck
	payload, sum, _ := strings.Cut(ck.Value, ".")
	tampered.Value = base64.RawURLEncoding.EncodeToString([]byte("error\nGo to evil.example to sign in again.")) + "." + sum
	got, _ = take(&tampered, secret)
	assert.Equal(t, flash{}, got, "a changed message is dropped")

	for _, v := range []string{"", "x", "x.y", "." + sum, payload + "."} {
		bad := *ck
		bad.Value = v
		got, _ = take(&bad, secret)
		assert.Equal(t, flash{}, got, "%q", v)
	}

	got, _ = take(set(flash{Kind: "script", Message: "x"}), secret)
	assert.Equal(t, flash{}, got, "only the known kinds")
}

func TestParseTags(t *testing.T) {
	for in, want := range map[string][]string{
		"":                      {},
		"  ":                    {},
		"admin":                 {"admin"},
		"admin, support":        {"admin", "support"},
		"admin support\tops":    {"admin", "support", "ops"},
		",admin,,admin, ops ,":  {"admin", "ops"},
		"é-team, team:eu":       {"é-team", "team:eu"},
		"admin\nsupport\r\nops": {"admin", "support", "ops"},
	} {
		assert.Equal(t, want, parseTags(in), "%q", in)
	}
}

func TestPagerOf(t *testing.T) {
	last := paginate.Cursor{ID: "usr_2", CreatedAt: time.Date(2026, 11, 21, 10, 15, 30, 123456000, time.UTC)}
	keep := url.Values{"email": {"ann"}, "action": {""}}
	self := func(c paginate.Cursor) paginate.Cursor { return c }
	pageOf := func(n int, hasMore bool) paginate.Page[paginate.Cursor] {
		items := make([]paginate.Cursor, n)
		if n > 0 {
			items[n-1] = last
		}
		return paginate.Page[paginate.Cursor]{Items: items, HasMore: hasMore}
	}

	p := pagerOf("users", keep, paginate.Request{Limit: paginate.DefaultLimit}, pageOf(25, true), self)
	assert.Empty(t, p.First, "the first page links to no first page")
	assert.Equal(t, "users?cursor="+url.QueryEscape(last.String())+"&email=ann", p.Next)
	assert.True(t, p.HasMore)
	assert.Equal(t, 25, p.Count)

	p = pagerOf("users", keep, paginate.Request{Limit: 10, After: last}, pageOf(3, false), self)
	assert.Equal(t, "users?email=ann&limit=10", p.First, "a limit that is not the default is kept")
	assert.Empty(t, p.Next, "the last page has no next")
	assert.False(t, p.HasMore)

	p = pagerOf("audit", nil, paginate.Request{Limit: 5}, pageOf(0, true), self)
	assert.False(t, p.HasMore, "an empty page has no next page")
	assert.Empty(t, p.Next)
	assert.Equal(t, "audit", pageLink("audit", url.Values{"action": {""}}))
}

func TestMessagesMatchLimits(t *testing.T) {
	assert.Equal(t, "Password shorter than "+strconv.Itoa(identity.MinPasswordChars)+" characters.", passwordError("short"))
	assert.Equal(t, "Password longer than "+strconv.Itoa(identity.MaxPasswordLen)+" bytes.", passwordError(strings.Repeat("p", identity.MaxPasswordLen+1)))
	assert.Contains(t, msgSearchTooLong, strconv.Itoa(store.MaxEmailLen))
}

func TestArgReason(t *testing.T) {
	assert.Empty(t, argReason(nil))
	assert.Equal(t, "Email is not an address such as ann@example.com.", argReason(store.CheckEmail("not an email")))
	assert.Equal(t, "A tag is given twice.", argReason(fmt.Errorf("wrapped: %w", store.CheckTags([]string{"a", "a"}))))
	assert.Equal(t, "This value is not accepted.", argReason(errors.New("something else")))
}

func TestActionLabels(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range auditActions {
		assert.False(t, seen[a.Action], "%s listed twice", a.Action)
		seen[a.Action] = true
		label, ok := actionLabel(a.Action)
		assert.True(t, ok)
		assert.Equal(t, a.Label, label)
	}
	for _, a := range []string{store.ActionSignIn, store.ActionSignInFailed, store.ActionSignOut, store.ActionAPIKeyCreate,
		store.ActionAPIKeyRevoke, store.ActionSigningCreate, store.ActionSigningRotate, store.ActionSigningRetire, store.ActionUserCreate,
		store.ActionUserUpdate, store.ActionUserPassword, store.ActionUserDisable, store.ActionUserEnable,
		store.ActionSessionLogout, store.ActionSessionReplayed} {
		assert.True(t, seen[a], "the filter offers %s", a)
	}
	label, ok := actionLabel("made.up")
	assert.False(t, ok)
	assert.Equal(t, "made.up", label)
}
