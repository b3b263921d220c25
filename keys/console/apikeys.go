package console

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

// msgBadKeyName explains the names keys.APIKeys accepts.
const msgBadKeyName = "Give the key a name of 1 to 100 characters, without control characters."

// keysData is the key list's data.
type keysData struct {
	// Keys are newest first.
	Keys            []store.APIKey
	Active, Revoked int
	// Name and Error refill the create form after a refused name.
	Name  string
	Error string
}

// createdData is the data of the page that shows a new key's token.
type createdData struct {
	Key   store.APIKey
	Token string
}

// keyData is the data of the revocation's confirmation page.
type keyData struct {
	Key store.APIKey
}

// keyList serves GET keys.
func (h *Handler) keyList(c *call) {
	h.renderKeys(c, http.StatusOK, "", "")
}

// renderKeys renders the key list with status, and name and msg in the
// create form.
func (h *Handler) renderKeys(c *call, status int, name, msg string) {
	list, err := h.deps.APIKeys.List(c.r.Context(), c.project)
	if err != nil {
		h.fail(c.w, c.r, fmt.Errorf("console: listing API keys: %w", err))
		return
	}
	slices.Reverse(list)
	d := keysData{Keys: list, Name: name, Error: msg}
	for _, k := range list {
		if k.Revoked() {
			d.Revoked++
		} else {
			d.Active++
		}
	}
	h.render(c.w, c.r, status, pageKeys, h.page(c, "API keys", "keys", d))
}

// createKey serves POST keys. The token is written only into this
// response's body (which, like every page, is Cache-Control: no-store):
// never into a URL, a redirect, a cookie, the session or a log.
func (h *Handler) createKey(c *call) {
	name := c.r.PostForm.Get("name")
	k, token, err := h.deps.APIKeys.Create(c.r.Context(), c.project, name)
	switch {
	case errors.Is(err, keys.ErrInvalidName):
		h.renderKeys(c, http.StatusBadRequest, name, msgBadKeyName)
		return
	case err != nil:
		h.fail(c.w, c.r, fmt.Errorf("console: creating an API key: %w", err))
		return
	}
	h.log.InfoContext(c.r.Context(), "console: API key created", "project", c.project, "key", k.ID, "user", c.user.ID)
	h.render(c.w, c.r, http.StatusOK, pageCreated, h.page(c, "Key created", "keys", createdData{Key: k, Token: token}))
}

// findKey returns the project's key id, or reports false.
func (h *Handler) findKey(c *call, id string) (store.APIKey, bool, error) {
	if id == "" {
		return store.APIKey{}, false, nil
	}
	list, err := h.deps.APIKeys.List(c.r.Context(), c.project)
	if err != nil {
		return store.APIKey{}, false, fmt.Errorf("console: listing API keys: %w", err)
	}
	for _, k := range list {
		if k.ID == id {
			return k, true, nil
		}
	}
	return store.APIKey{}, false, nil
}

// confirmRevoke serves GET revoke?id=: the confirmation step.
func (h *Handler) confirmRevoke(c *call) {
	k, ok, err := h.findKey(c, c.r.URL.Query().Get("id"))
	switch {
	case err != nil:
		h.fail(c.w, c.r, err)
		return
	case !ok:
		h.errorPage(c.w, c.r, http.StatusNotFound, "No such key", "This project has no API key with that id.")
		return
	case k.Revoked():
		h.sessions.setFlash(c.sid, flash{Kind: "success", Message: fmt.Sprintf("“%s” is already revoked.", k.Name)})
		redirect(c.w, "keys")
		return
	}
	h.render(c.w, c.r, http.StatusOK, pageRevoke, h.page(c, "Revoke "+k.Name, "keys", keyData{Key: k}))
}

// revokeKey serves POST revoke. The key is refused from the next request
// on.
func (h *Handler) revokeKey(c *call) {
	k, ok, err := h.findKey(c, c.r.PostForm.Get("id"))
	if err == nil && ok {
		err = h.deps.APIKeys.Revoke(c.r.Context(), c.project, k.ID)
		if errors.Is(err, store.ErrNotFound) {
			ok, err = false, nil
		}
	}
	switch {
	case err != nil:
		h.fail(c.w, c.r, fmt.Errorf("console: revoking an API key: %w", err))
		return
	case !ok:
		h.errorPage(c.w, c.r, http.StatusNotFound, "No such key", "This project has no API key with that id.")
		return
	}
	h.log.InfoContext(c.r.Context(), "console: API key revoked", "project", c.project, "key", k.ID, "user", c.user.ID)
	h.sessions.setFlash(c.sid, flash{Kind: "success",
		Message: fmt.Sprintf("Revoked “%s” (%s). Requests using it are refused from now on.", k.Name, k.ID)})
	redirect(c.w, "keys")
}
