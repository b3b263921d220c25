package console

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/store"
)

// Messages of the sign-in page. A wrong email and a wrong password get the
// same one.
const (
	msgBadCredentials = "The email or password is incorrect."
	msgMissingFields  = "Enter your email and your password."
	msgSigninExpired  = "This sign-in form has expired. Please try again."
	msgSessionEnded   = "Your session has ended. Please sign in again."
	msgSignedOut      = "You have signed out."
)

// signinData is the sign-in page's data.
type signinData struct {
	Token  string
	Email  string
	Error  string
	Notice string
}

// signinToken returns the double-submit token of the sign-in form: the one
// in the request's sign-in cookie if it is well formed, else a new one. It
// (re)sets the cookie either way.
func (h *Handler) signinToken(c *call) string {
	tok := h.cookieValue(c.r, signinCookie, c.project)
	if len(tok) != len(randomToken()) {
		tok = randomToken()
	}
	h.setCookie(c.w, c.r, signinCookie, c.project, tok, signinCookieLifetime)
	return tok
}

// signinForm serves GET signin.
func (h *Handler) signinForm(c *call) {
	if sid := h.cookieValue(c.r, sessionCookie, c.project); sid != "" {
		if _, ok := h.sessions.get(sid, c.project, h.now()); ok {
			redirect(c.w, "keys")
			return
		}
	}
	d := signinData{Token: h.signinToken(c)}
	q := c.r.URL.Query()
	switch {
	case q.Has("expired"):
		d.Notice = msgSessionEnded
	case q.Has("signedout"):
		d.Notice = msgSignedOut
	}
	h.render(c.w, c.r, http.StatusOK, pageSignin, view{Title: "Sign in", Project: c.project, Data: d})
}

// signin serves POST signin.
func (h *Handler) signin(c *call) {
	if err := parseForm(c.w, c.r); err != nil {
		h.badForm(c.w, c.r, err)
		return
	}
	ctx := c.r.Context()
	email := strings.TrimSpace(c.r.PostForm.Get("email"))
	password := c.r.PostForm.Get("password")
	again := func(status int, msg string) {
		d := signinData{Token: h.signinToken(c), Email: email, Error: msg}
		h.render(c.w, c.r, status, pageSignin, view{Title: "Sign in", Project: c.project, Data: d})
	}
	if !tokensEqual(c.r.PostForm.Get(signinTokenField), h.cookieValue(c.r, signinCookie, c.project)) {
		h.log.InfoContext(ctx, "console: sign-in form token missing or wrong", "project", c.project)
		again(http.StatusForbidden, msgSigninExpired)
		return
	}
	if email == "" || password == "" {
		again(http.StatusBadRequest, msgMissingFields)
		return
	}

	u, err := h.deps.Authenticator.Authenticate(ctx, c.project, email, password, h.addr(c.r))
	var limited *identity.RateLimitedError
	switch {
	case errors.As(err, &limited):
		secs := limited.RetryAfterSeconds()
		c.w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
		again(http.StatusTooManyRequests, "Too many failed sign-in attempts. Try again in "+waitText(secs)+".")
		return
	case errors.Is(err, identity.ErrInvalidCredentials):
		again(http.StatusOK, msgBadCredentials)
		return
	case err != nil:
		h.fail(c.w, c.r, fmt.Errorf("console: signing in: %w", err))
		return
	}

	// A new session every time: an id planted before sign-in (session
	// fixation) never becomes a signed-in one.
	if old := h.cookieValue(c.r, sessionCookie, c.project); old != "" {
		h.sessions.delete(old)
	}
	if !u.HasTag(AdminTag) {
		h.log.InfoContext(ctx, "console: sign-in refused, not an administrator", "project", c.project, "user", u.ID)
		h.clearCookie(c.w, c.r, sessionCookie, c.project)
		h.notAdmin(c, u)
		return
	}
	sid, _ := h.sessions.create(c.project, u.ID, u.Email, h.now())
	h.setCookie(c.w, c.r, sessionCookie, c.project, sid, h.sessions.lifetime)
	h.clearCookie(c.w, c.r, signinCookie, c.project)
	h.log.InfoContext(ctx, "console: signed in", "project", c.project, "user", u.ID)
	redirect(c.w, "keys")
}

// waitText says how long secs seconds is, rounded up to minutes past one
// minute.
func waitText(secs int64) string {
	switch {
	case secs <= 1:
		return "a second"
	case secs < 60:
		return strconv.FormatInt(secs, 10) + " seconds"
	case secs <= 60:
		return "a minute"
	default:
		return strconv.FormatInt((secs+59)/60, 10) + " minutes"
	}
}

// notAdmin answers 403 for a signed-in user who is not an administrator.
func (h *Handler) notAdmin(c *call, u store.User) {
	h.render(c.w, c.r, http.StatusForbidden, pageError, view{
		Title:   "Not an administrator",
		Project: c.project,
		Data: errorData{
			Status:   http.StatusForbidden,
			Message:  fmt.Sprintf("%s is not an administrator of project %s, so it cannot use the console. An administrator can give the account the admin tag.", u.Email, c.project),
			Link:     "signin",
			LinkText: "Sign in as someone else",
		},
	})
}

// signout serves POST signout: it ends the session at once.
func (h *Handler) signout(c *call) {
	if err := parseForm(c.w, c.r); err != nil {
		h.badForm(c.w, c.r, err)
		return
	}
	sid := h.cookieValue(c.r, sessionCookie, c.project)
	if s, ok := h.sessions.get(sid, c.project, h.now()); ok {
		if !tokensEqual(c.r.PostForm.Get(formTokenField), s.formToken) {
			h.badFormToken(c)
			return
		}
		h.sessions.delete(sid)
		h.log.InfoContext(c.r.Context(), "console: signed out", "project", c.project, "user", s.userID)
	}
	h.clearCookie(c.w, c.r, sessionCookie, c.project)
	redirect(c.w, "signin?signedout")
}

// authed returns a function that runs fn for a signed-in administrator of
// the request's project. Without a live session it redirects to the
// sign-in page. On a POST it first checks the form token (403 when missing
// or wrong). It looks the user up, so a deleted user or one who lost the
// admin tag is refused, and their session ended.
func (h *Handler) authed(c *call, fn func(c *call)) func() {
	return func() {
		sid := h.cookieValue(c.r, sessionCookie, c.project)
		s, ok := h.sessions.get(sid, c.project, h.now())
		if !ok {
			if sid == "" {
				redirect(c.w, "signin")
				return
			}
			h.clearCookie(c.w, c.r, sessionCookie, c.project)
			redirect(c.w, "signin?expired")
			return
		}
		if c.r.Method == http.MethodPost {
			if err := parseForm(c.w, c.r); err != nil {
				h.badForm(c.w, c.r, err)
				return
			}
			if !tokensEqual(c.r.PostForm.Get(formTokenField), s.formToken) {
				h.badFormToken(c)
				return
			}
		}
		u, err := h.deps.Users.GetUser(c.r.Context(), c.project, s.userID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			h.sessions.delete(sid)
			h.clearCookie(c.w, c.r, sessionCookie, c.project)
			redirect(c.w, "signin?expired")
			return
		case err != nil:
			h.fail(c.w, c.r, fmt.Errorf("console: looking up the signed-in user: %w", err))
			return
		case !u.HasTag(AdminTag):
			h.sessions.delete(sid)
			h.clearCookie(c.w, c.r, sessionCookie, c.project)
			h.log.InfoContext(c.r.Context(), "console: session ended, no longer an administrator", "project", c.project, "user", u.ID)
			h.notAdmin(c, u)
			return
		}
		c.sid, c.sess, c.user = sid, s, u
		fn(c)
	}
}
