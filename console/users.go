package console

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/latchkey-dev/latchkey/identity"
	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// Messages of the user pages. What is wrong with an email or tags is said
// by the store's checks (store.ArgError).
const (
	msgTakenEmail    = "This project already has a user with this email."
	msgSearchTooLong = "Search for at most 254 characters."
	msgSelfAdmin     = "You cannot remove your own admin tag: you would lose access to the console at your next click. Another administrator can remove it."
	msgSelfDisable   = "You cannot disable your own account: it would sign you out of the console at once. Another administrator can disable it."
)

// usersData is the user list's data.
type usersData struct {
	// Users are oldest first, the list order of package paginate.
	Users []userRow
	// Search is the email prefix the list is filtered by, or "".
	Search string
	// Limit is the page size a new search keeps, or 0 for the default.
	Limit int
	Pager pager
	// Form refills the create form after a refused submission.
	Form newUserForm
}

// userRow is one user of the list.
type userRow struct {
	store.User
	// Self marks the signed-in administrator.
	Self bool
}

// newUserForm is the create form's values and errors.
type newUserForm struct {
	Email, Tags                          string
	EmailError, TagsError, PasswordError string
}

// userData is the data of a user's page.
type userData struct {
	User store.User
	// Self marks the signed-in administrator's own page.
	Self bool
	// Tags fills the tags form; TagsError and PasswordError explain a
	// refused submission.
	Tags                     string
	TagsError, PasswordError string
}

// passwordData is the data of the page that shows a generated password,
// once.
type passwordData struct {
	User     store.User
	Password string
	// Created tells a new user from a new password.
	Created bool
	// Own: the administrator's own new password; their session has
	// ended, so the page leads to the sign-in page.
	Own bool
}

// parseTags reads tags separated by commas or white space, in order,
// leaving out repeats.
func parseTags(s string) []string {
	tags := []string{}
	for _, t := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	return tags
}

// argReason returns what a store.ArgError in err says is wrong, as a
// sentence for the page, or "" for a nil err. Any other error gets a
// general sentence.
func argReason(err error) string {
	if err == nil {
		return ""
	}
	var ae *store.ArgError
	if !errors.As(err, &ae) || ae.Reason == "" {
		return "This value is not accepted."
	}
	return strings.ToUpper(ae.Reason[:1]) + ae.Reason[1:] + "."
}

// passwordError says what the password policy (identity.CheckPassword)
// finds wrong with password, in the words of the pages.
func passwordError(password string) string {
	if err := identity.CheckPassword(password); err != nil {
		return argReason(err)
	}
	return "This password is not accepted."
}

// generatePassword returns a new random password: 128 bits, as 26
// characters of base32.
func generatePassword() string { return rand.Text() }

// userList serves GET users?email=&limit=&cursor=.
func (h *Handler) userList(c *call) {
	h.renderUsers(c, http.StatusOK, newUserForm{})
}

// renderUsers renders a page of the user list with status and form in the
// create form.
func (h *Handler) renderUsers(c *call, status int, form newUserForm) {
	search := strings.TrimSpace(c.r.URL.Query().Get("email"))
	keep := url.Values{"email": {search}}
	if len(search) > store.MaxEmailLen {
		h.errorPageLink(c.w, c.r, http.StatusBadRequest, "Search too long", msgSearchTooLong, "users", "Show every user")
		return
	}
	if err := store.CheckPrefix("email", search); err != nil {
		h.errorPageLink(c.w, c.r, http.StatusBadRequest, "Invalid search", argReason(err)+" Search for the start of an email.", "users", "Show every user")
		return
	}
	page, req, err := httpapi.ReadList(c.r, func(ctx context.Context, project string, req paginate.Request) (paginate.Page[store.User], error) {
		return h.deps.Users.List(ctx, project, search, req)
	})
	if err != nil {
		h.listFailed(c, "users", keep, "listing users", err)
		return
	}
	d := usersData{Search: search, Form: form}
	if req.Limit != paginate.DefaultLimit {
		d.Limit = req.Limit
	}
	for _, u := range page.Items {
		d.Users = append(d.Users, userRow{User: u, Self: u.ID == c.user.ID})
	}
	d.Pager = pagerOf("users", keep, req, page, userCursor)
	h.render(c.w, c.r, status, pageUsers, h.page(c, "Users", "users", d))
}

// userCursor is the position of u in the user list.
func userCursor(u store.User) paginate.Cursor {
	return paginate.Cursor{ID: u.ID, CreatedAt: u.CreatedAt}
}

// createUser serves POST users: a new user with the given email, tags and
// password, or a generated password, shown once in this response's body
// (never in a URL, a redirect, a cookie or a log).
func (h *Handler) createUser(c *call) {
	form := newUserForm{
		Email: strings.TrimSpace(c.r.PostForm.Get("email")),
		Tags:  c.r.PostForm.Get("tags"),
	}
	password := c.r.PostForm.Get("password")
	generated := password == ""
	if generated {
		password = generatePassword()
	}
	tags := parseTags(form.Tags)
	u, err := h.deps.Users.Create(c.r.Context(), c.project, form.Email, password, tags)
	switch {
	case errors.Is(err, store.ErrInvalid):
		// Say which field is wrong, in the words of the store's checks;
		// what neither refuses is the password.
		form.EmailError = argReason(store.CheckEmail(form.Email))
		form.TagsError = argReason(store.CheckTags(tags))
		if form.EmailError == "" && form.TagsError == "" {
			form.PasswordError = passwordError(password)
		}
		h.renderUsers(c, http.StatusBadRequest, form)
		return
	case errors.Is(err, store.ErrConflict):
		form.EmailError = msgTakenEmail
		h.renderUsers(c, http.StatusConflict, form)
		return
	case err != nil:
		h.fail(c.w, c.r, fmt.Errorf("console: creating a user: %w", err))
		return
	}
	h.log.InfoContext(c.r.Context(), "console: user created", "project", c.project, "target", u.ID, "user", c.user.ID)
	if generated {
		h.render(c.w, c.r, http.StatusOK, pagePasswd, h.page(c, "User created", "users",
			passwordData{User: u, Password: password, Created: true}))
		return
	}
	h.setFlash(c, flash{Kind: "success", Message: fmt.Sprintf("Created %s with the password you gave.", u.Email)})
	redirect(c.w, userLink(u.ID))
}

// userLink returns the link to the page of user id.
func userLink(id string) string { return "user?" + url.Values{"id": {id}}.Encode() }

// findUser returns the project's user id. For an unknown one it answers
// 404 and reports false; for a store failure, 500.
func (h *Handler) findUser(c *call, id string) (store.User, bool) {
	if id == "" {
		h.noSuchUser(c)
		return store.User{}, false
	}
	u, err := h.deps.Users.Get(c.r.Context(), c.project, id)
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrInvalid):
		h.noSuchUser(c)
		return store.User{}, false
	case err != nil:
		h.fail(c.w, c.r, fmt.Errorf("console: looking up a user: %w", err))
		return store.User{}, false
	}
	return u, true
}

func (h *Handler) noSuchUser(c *call) {
	h.errorPageLink(c.w, c.r, http.StatusNotFound, "No such user", "This project has no user with that id.", "users", "Back to the users")
}

// userPage serves GET user?id=.
func (h *Handler) userPage(c *call) {
	u, ok := h.findUser(c, c.r.URL.Query().Get("id"))
	if !ok {
		return
	}
	h.renderUser(c, http.StatusOK, userData{Tags: strings.Join(u.Tags, ", ")}, u)
}

// renderUser renders the page of u with status.
func (h *Handler) renderUser(c *call, status int, d userData, u store.User) {
	d.User, d.Self = u, u.ID == c.user.ID
	h.render(c.w, c.r, status, pageUser, h.page(c, u.Email, "users", d))
}

// setUserTags serves POST user-tags. An administrator cannot remove their
// own admin tag.
func (h *Handler) setUserTags(c *call) {
	u, ok := h.findUser(c, c.r.PostForm.Get("id"))
	if !ok {
		return
	}
	raw := c.r.PostForm.Get("tags")
	tags := parseTags(raw)
	if u.ID == c.user.ID && !slices.Contains(tags, AdminTag) {
		h.renderUser(c, http.StatusBadRequest, userData{Tags: raw, TagsError: msgSelfAdmin}, u)
		return
	}
	err := h.deps.Users.SetTags(c.r.Context(), c.project, u.ID, tags)
	switch {
	case errors.Is(err, store.ErrInvalid):
		msg := argReason(store.CheckTags(tags))
		if msg == "" {
			msg = argReason(err)
		}
		h.renderUser(c, http.StatusBadRequest, userData{Tags: raw, TagsError: msg}, u)
		return
	case errors.Is(err, store.ErrNotFound):
		h.noSuchUser(c)
		return
	case err != nil:
		h.fail(c.w, c.r, fmt.Errorf("console: setting a user's tags: %w", err))
		return
	}
	h.log.InfoContext(c.r.Context(), "console: user tags set", "project", c.project, "target", u.ID, "user", c.user.ID)
	msg := fmt.Sprintf("Saved the tags of %s.", u.Email)
	if len(tags) == 0 {
		msg = fmt.Sprintf("%s has no tags now.", u.Email)
	}
	h.setFlash(c, flash{Kind: "success", Message: msg})
	redirect(c.w, userLink(u.ID))
}

// setUserPassword serves POST user-password: the given password, or a
// generated one shown once in this response's body. Every session the user
// had started ends: for an administrator's own password, this console
// session too, so a chosen password sends them to the sign-in page.
func (h *Handler) setUserPassword(c *call) {
	u, ok := h.findUser(c, c.r.PostForm.Get("id"))
	if !ok {
		return
	}
	password := c.r.PostForm.Get("password")
	generated := password == ""
	if generated {
		password = generatePassword()
	}
	_, err := h.deps.Users.ResetPassword(c.r.Context(), c.project, u.ID, password)
	switch {
	case errors.Is(err, store.ErrInvalid):
		h.renderUser(c, http.StatusBadRequest, userData{Tags: strings.Join(u.Tags, ", "), PasswordError: passwordError(password)}, u)
		return
	case errors.Is(err, store.ErrNotFound):
		h.noSuchUser(c)
		return
	case err != nil:
		h.fail(c.w, c.r, fmt.Errorf("console: setting a user's password: %w", err))
		return
	}
	h.log.InfoContext(c.r.Context(), "console: user password set", "project", c.project, "target", u.ID, "user", c.user.ID)
	own := u.ID == c.user.ID
	if own {
		h.clearCookie(c.w, c.r, sessionCookie, c.project)
	}
	if generated {
		h.render(c.w, c.r, http.StatusOK, pagePasswd, h.page(c, "New password", "users", passwordData{User: u, Password: password, Own: own}))
		return
	}
	if own {
		redirect(c.w, "signin?passwordset")
		return
	}
	h.setFlash(c, flash{Kind: "success", Message: fmt.Sprintf(
		"Set a new password for %s. Every session they had started has ended, on every server.", u.Email)})
	redirect(c.w, userLink(u.ID))
}

// confirmDisable serves GET disable?id=: the confirmation step.
func (h *Handler) confirmDisable(c *call) {
	u, ok := h.findUser(c, c.r.URL.Query().Get("id"))
	if !ok {
		return
	}
	switch {
	case u.ID == c.user.ID:
		h.setFlash(c, flash{Kind: "error", Message: msgSelfDisable})
		redirect(c.w, userLink(u.ID))
		return
	case u.Disabled():
		h.setFlash(c, flash{Kind: "success", Message: u.Email + " is already disabled."})
		redirect(c.w, userLink(u.ID))
		return
	}
	h.render(c.w, c.r, http.StatusOK, pageDisable, h.page(c, "Disable "+u.Email, "users", userData{User: u}))
}

// disableUser serves POST disable: the user can no longer sign in, and
// every session of theirs ends at once, on every instance. An
// administrator cannot disable their own account.
func (h *Handler) disableUser(c *call) {
	u, ok := h.findUser(c, c.r.PostForm.Get("id"))
	if !ok {
		return
	}
	if u.ID == c.user.ID {
		h.setFlash(c, flash{Kind: "error", Message: msgSelfDisable})
		redirect(c.w, userLink(u.ID))
		return
	}
	_, err := h.deps.Users.Disable(c.r.Context(), c.project, u.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		h.noSuchUser(c)
		return
	case err != nil:
		h.fail(c.w, c.r, fmt.Errorf("console: disabling a user: %w", err))
		return
	}
	h.log.InfoContext(c.r.Context(), "console: user disabled", "project", c.project, "target", u.ID, "user", c.user.ID)
	h.setFlash(c, flash{Kind: "success", Message: fmt.Sprintf(
		"Disabled %s. Every session of theirs has ended, on every server, and they cannot sign in until enabled.", u.Email)})
	redirect(c.w, userLink(u.ID))
}

// enableUser serves POST enable: the user may sign in again; the sessions
// that disabling ended stay ended.
func (h *Handler) enableUser(c *call) {
	u, ok := h.findUser(c, c.r.PostForm.Get("id"))
	if !ok {
		return
	}
	_, err := h.deps.Users.Enable(c.r.Context(), c.project, u.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		h.noSuchUser(c)
		return
	case err != nil:
		h.fail(c.w, c.r, fmt.Errorf("console: enabling a user: %w", err))
		return
	}
	h.log.InfoContext(c.r.Context(), "console: user enabled", "project", c.project, "target", u.ID, "user", c.user.ID)
	h.setFlash(c, flash{Kind: "success", Message: fmt.Sprintf(
		"Enabled %s. They can sign in again; the sessions that ended when they were disabled stay ended.", u.Email)})
	redirect(c.w, userLink(u.ID))
}
