package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/latchkey-dev/latchkey/audit"
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
	msgPasswordSet    = "Your password has changed and your sessions have ended. Sign in with the new password."
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
	if !wellFormedToken(tok) {
		tok = randomToken()
	}
	h.setCookie(c.w, c.r, signinCookie, c.project, tok, signinCookieLifetime)
	return tok
}

// signinForm serves GET signin.
func (h *Handler) signinForm(c *call) {
	if secret := h.cookieValue(c.r, sessionCookie, c.project); secret != "" {
		_, ok, err := h.findSession(c.r.Context(), c.project, secret)
		if err != nil {
			h.fail(c.w, c.r, err)
			return
		}
		if ok {
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
	case q.Has("passwordset"):
		d.Notice = msgPasswordSet
	}
	h.render(c.w, c.r, http.StatusOK, pageSignin, view{Title: "Sign in", Project: c.project, Data: d})
}

// signin serves POST signin. Every attempt that checked a password is
// recorded in the audit log: a success as ActionSignIn by the user, a
// failure as ActionSignInFailed by nobody (or by the user, for one who is
// not an administrator), naming the account's user id as the target when
// the account exists and never the email. A throttled attempt, which
// checked nothing, is not recorded: anyone could otherwise write to the log
// at will.
func (h *Handler) signin(c *call) {
	if err := parseForm(c.w, c.r); err != nil {
		h.badForm(c.w, c.r, err)
		return
	}
	addr := h.addr(c.r)
	ctx := audit.NewContext(c.r.Context(), audit.Actor{ClientAddr: addr})
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

	u, err := h.deps.Authenticator.Authenticate(ctx, c.project, email, password, addr)
	var limited *identity.RateLimitedError
	switch {
	case errors.As(err, &limited):
		secs := limited.RetryAfterSeconds()
		c.w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
		again(http.StatusTooManyRequests, "Too many failed sign-in attempts. Try again in "+waitText(secs)+".")
		return
	case errors.Is(err, identity.ErrInvalidCredentials):
		h.deps.Audit.Record(ctx, c.project, store.ActionSignInFailed, h.accountID(ctx, c.project, email))
		again(http.StatusOK, msgBadCredentials)
		return
	case err != nil:
		h.fail(c.w, c.r, fmt.Errorf("console: signing in: %w", err))
		return
	}

	// A new session every time: a session cookie planted before sign-in
	// (session fixation) never becomes a signed-in one.
	if old := h.cookieValue(c.r, sessionCookie, c.project); wellFormedToken(old) {
		h.endSession(ctx, c.project, sessionID(old))
	}
	ctx = audit.NewContext(ctx, audit.Actor{ID: u.ID, ClientAddr: addr})
	if !u.HasTag(AdminTag) {
		h.log.InfoContext(ctx, "console: sign-in refused, not an administrator", "project", c.project, "user", u.ID)
		h.deps.Audit.Record(ctx, c.project, store.ActionSignInFailed, u.ID)
		h.clearCookie(c.w, c.r, sessionCookie, c.project)
		h.notAdmin(c, u)
		return
	}
	s, err := h.startSession(ctx, c.project, u)
	switch {
	case errors.Is(err, errUserChanged):
		// As if the change had come before the sign-in.
		h.deps.Audit.Record(ctx, c.project, store.ActionSignInFailed, u.ID)
		again(http.StatusOK, msgBadCredentials)
		return
	case err != nil:
		h.fail(c.w, c.r, err)
		return
	}
	h.deps.Audit.Record(ctx, c.project, store.ActionSignIn, u.ID)
	h.setCookie(c.w, c.r, sessionCookie, c.project, s.secret, h.lifetime)
	h.clearCookie(c.w, c.r, signinCookie, c.project)
	h.log.InfoContext(ctx, "console: signed in", "project", c.project, "user", u.ID)
	redirect(c.w, "keys")
}

// accountID returns the id of the project's user with email, or "" when
// there is none: the target of a failed sign-in's audit entry, which never
// holds the email itself. The answer to the sign-in does not depend on it.
func (h *Handler) accountID(ctx context.Context, project, email string) string {
	u, err := h.deps.Users.GetByEmail(ctx, project, email)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrInvalid) {
			h.log.ErrorContext(ctx, "console: looking up the account of a failed sign-in", "project", project, "err", err)
		}
		return ""
	}
	return u.ID
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

// signout serves POST signout: it ends the session at once, on every
// instance, and records it in the audit log.
func (h *Handler) signout(c *call) {
	if err := parseForm(c.w, c.r); err != nil {
		h.badForm(c.w, c.r, err)
		return
	}
	ctx := c.r.Context()
	s, ok, err := h.findSession(ctx, c.project, h.cookieValue(c.r, sessionCookie, c.project))
	if err != nil {
		h.fail(c.w, c.r, err)
		return
	}
	if ok {
		if !tokensEqual(c.r.PostForm.Get(formTokenField), s.formToken()) {
			h.badFormToken(c)
			return
		}
		// Unlike other endings, a sign-out that could not be stored is
		// an error the administrator must see: the session would go on.
		if err := h.deps.Sessions.DeleteConsoleSession(ctx, c.project, s.rec.ID); err != nil {
			h.fail(c.w, c.r, fmt.Errorf("console: ending a session: %w", err))
			return
		}
		ctx = audit.NewContext(ctx, audit.Actor{ID: s.rec.UserID, ClientAddr: h.addr(c.r)})
		h.deps.Audit.Record(ctx, c.project, store.ActionSignOut, s.rec.UserID)
		h.log.InfoContext(ctx, "console: signed out", "project", c.project, "user", s.rec.UserID)
	}
	h.clearCookie(c.w, c.r, sessionCookie, c.project)
	h.clearCookie(c.w, c.r, flashCookie, c.project)
	redirect(c.w, "signin?signedout")
}

// authed runs fn for a signed-in administrator of the request's project.
// Without a live session it redirects to the sign-in page. For a form (a
// POST route) it first reads the form and checks its form token (403 when
// missing or wrong). It looks the user up, so a deleted or disabled user,
// or one who lost the admin tag, is refused and their session ended. The request
// fn sees carries the user as the audit actor (package audit), so that the
// services fn calls record who acted.
func (h *Handler) authed(c *call, form bool, fn func(c *call)) {
	ctx := c.r.Context()
	secret := h.cookieValue(c.r, sessionCookie, c.project)
	s, ok, err := h.findSession(ctx, c.project, secret)
	switch {
	case err != nil:
		h.fail(c.w, c.r, err)
		return
	case !ok && secret == "":
		redirect(c.w, "signin")
		return
	case !ok:
		h.clearCookie(c.w, c.r, sessionCookie, c.project)
		redirect(c.w, "signin?expired")
		return
	}
	if form {
		if err := parseForm(c.w, c.r); err != nil {
			h.badForm(c.w, c.r, err)
			return
		}
		if !tokensEqual(c.r.PostForm.Get(formTokenField), s.formToken()) {
			h.badFormToken(c)
			return
		}
	}
	u, err := h.deps.Users.Get(ctx, c.project, s.rec.UserID)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && u.Disabled():
		h.endSession(ctx, c.project, s.rec.ID)
		h.clearCookie(c.w, c.r, sessionCookie, c.project)
		redirect(c.w, "signin?expired")
		return
	case err != nil:
		h.fail(c.w, c.r, fmt.Errorf("console: looking up the signed-in user: %w", err))
		return
	case !u.HasTag(AdminTag):
		h.endSession(ctx, c.project, s.rec.ID)
		h.clearCookie(c.w, c.r, sessionCookie, c.project)
		h.log.InfoContext(ctx, "console: session ended, no longer an administrator", "project", c.project, "user", u.ID)
		h.notAdmin(c, u)
		return
	}
	if !h.touch(ctx, s) {
		h.clearCookie(c.w, c.r, sessionCookie, c.project)
		redirect(c.w, "signin?expired")
		return
	}
	c.r = c.r.WithContext(audit.NewContext(ctx, audit.Actor{ID: u.ID, ClientAddr: h.addr(c.r)}))
	c.sess, c.user = s, u
	fn(c)
}
