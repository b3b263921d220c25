package console

import (
	"crypto/hmac"
	"encoding/base64"
	"strings"
	"time"
)

// flash is a one-time message shown on the next page.
type flash struct {
	// Kind is "success" or "error"; "" means no message.
	Kind    string
	Message string
}

// A flash message travels in a short-lived cookie, so that the instance
// that shows it need not be the one that set it. The cookie holds
// base64url(kind "\n" message) "." base64url(MAC), the MAC keyed with the
// session's secret: a message is shown only to the session that set it, and
// nobody without the session's cookie can plant one. The message holds
// nothing secret (names and ids), and never a token or a password.
const (
	flashCookie = "latchkey_flash_"
	// flashLifetime is how long a flash message waits for its page.
	flashLifetime = time.Minute
)

// setFlash sets f as the message of the session's next page.
func (h *Handler) setFlash(c *call, f flash) {
	payload := []byte(f.Kind + "\n" + f.Message)
	v := base64.RawURLEncoding.EncodeToString(payload) + "." +
		base64.RawURLEncoding.EncodeToString(mac(c.sess.secret, labelFlash, payload))
	h.setCookie(c.w, c.r, flashCookie, c.project, v, flashLifetime)
}

// takeFlash returns the session's message, if the request carries one, and
// clears its cookie. A message that is malformed or set by another session
// is dropped.
func (h *Handler) takeFlash(c *call) flash {
	v := h.cookieValue(c.r, flashCookie, c.project)
	if v == "" {
		return flash{}
	}
	h.clearCookie(c.w, c.r, flashCookie, c.project)
	p64, m64, ok := strings.Cut(v, ".")
	if !ok {
		return flash{}
	}
	payload, err1 := base64.RawURLEncoding.Strict().DecodeString(p64)
	sum, err2 := base64.RawURLEncoding.Strict().DecodeString(m64)
	if err1 != nil || err2 != nil || !hmac.Equal(sum, mac(c.sess.secret, labelFlash, payload)) {
		return flash{}
	}
	kind, msg, _ := strings.Cut(string(payload), "\n")
	if kind != "success" && kind != "error" {
		return flash{}
	}
	return flash{Kind: kind, Message: msg}
}
