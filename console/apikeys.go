package console

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

// msgBadKeyName explains the names keys.APIKeys accepts.
const msgBadKeyName = "Give the key a name of 1 to 100 characters, without control characters."

// keysData is the key list's data.
type keysData struct {
	// Keys are newest first.
	Keys                     []keyRow
	Active, Stopped, Revoked int
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
	Key keyRow
}

// keyRow is one API key as the pages show it.
type keyRow struct {
	store.APIKey
	// Creator is who created the key.
	Creator who
	// SigningRetired reports that the signing key that signed the key's
	// token is retired: the key is refused although it is not revoked.
	SigningRetired bool
}

// keyRows returns the project's API keys, newest first, with their
// creators named and the keys that a retirement stopped marked.
func (h *Handler) keyRows(c *call) ([]keyRow, error) {
	list, err := h.deps.APIKeys.List(c.r.Context(), c.project)
	if err != nil {
		return nil, fmt.Errorf("console: listing API keys: %w", err)
	}
	signing, err := h.deps.SigningKeys.ListSigningKeys(c.r.Context(), c.project)
	if err != nil {
		return nil, fmt.Errorf("console: listing signing keys: %w", err)
	}
	retired := make(map[string]bool, len(signing))
	for _, k := range signing {
		retired[k.ID] = k.Retired()
	}
	n := h.newNamer(c)
	n.setKeys(list)
	rows := make([]keyRow, len(list))
	for i, k := range list {
		rows[len(list)-1-i] = keyRow{
			APIKey:         k,
			Creator:        n.name(k.CreatedBy, "Unknown"),
			SigningRetired: retired[k.SigningKeyID],
		}
	}
	return rows, nil
}

// keyList serves GET keys.
func (h *Handler) keyList(c *call) {
	h.renderKeys(c, http.StatusOK, "", "")
}

// renderKeys renders the key list with status, and name and msg in the
// create form.
func (h *Handler) renderKeys(c *call, status int, name, msg string) {
	rows, err := h.keyRows(c)
	if err != nil {
		h.fail(c.w, c.r, err)
		return
	}
	d := keysData{Keys: rows, Name: name, Error: msg}
	for _, k := range rows {
		switch {
		case k.Revoked():
			d.Revoked++
		case k.SigningRetired:
			d.Stopped++
		default:
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
func (h *Handler) findKey(c *call, id string) (keyRow, bool, error) {
	if id == "" {
		return keyRow{}, false, nil
	}
	rows, err := h.keyRows(c)
	if err != nil {
		return keyRow{}, false, err
	}
	for _, k := range rows {
		if k.ID == id {
			return k, true, nil
		}
	}
	return keyRow{}, false, nil
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
		h.setFlash(c, flash{Kind: "success", Message: fmt.Sprintf("“%s” is already revoked.", k.Name)})
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
	h.setFlash(c, flash{Kind: "success",
		Message: fmt.Sprintf("Revoked “%s” (%s). Requests using it are refused from now on.", k.Name, k.ID)})
	redirect(c.w, "keys")
}
