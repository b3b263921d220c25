package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/latchkey-dev/latchkey/internal/httpapi"
	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// msgBadKeyName explains the names keys.APIKeys accepts.
const msgBadKeyName = "Give the key a name of 1 to 100 characters, without control characters."

// keysData is the key list's data.
type keysData struct {
	// Keys are one page of the project's keys, oldest first.
	Keys                     []keyRow
	Active, Stopped, Revoked int
	// Search is the name prefix the list is filtered by; Limit the page
	// size when it is not the default (kept by the search form).
	Search string
	Limit  int
	Pager  pager
	// Form refills the create form after a refused create.
	Form newKeyForm
	// Expiries are the choices of the create form's expiry.
	Expiries []choice
}

// newKeyForm is what the create form was given, and why it was refused.
type newKeyForm struct {
	Name, Scopes, ExpiresIn string
	Error, ScopesError      string
}

// choice is one option of a select.
type choice struct {
	Value, Label string
	Selected     bool
}

// keyExpiries are the lifetimes the create form offers ("" is none).
var keyExpiries = []struct {
	value string
	d     time.Duration
	label string
}{
	{"", 0, "Never (a permanent key)"},
	{"720h", 30 * 24 * time.Hour, "In 30 days"},
	{"2160h", 90 * 24 * time.Hour, "In 90 days"},
	{"8760h", 365 * 24 * time.Hour, "In 1 year"},
}

// expiryChoices returns the create form's expiry options, selected the
// one whose value is v.
func expiryChoices(v string) []choice {
	cs := make([]choice, len(keyExpiries))
	for i, e := range keyExpiries {
		cs[i] = choice{Value: e.value, Label: e.label, Selected: e.value == v}
	}
	return cs
}

// createdData is the data of the page that shows a new key's token.
type createdData struct {
	Key   store.APIKey
	Token string
	// Rolled is the key the new one replaces, after the roll; nil for a
	// created key.
	Rolled *store.APIKey
	// OldStopsNow says that the rolled key was revoked at once.
	OldStopsNow bool
}

// keyData is the data of the revocation's and the roll's confirmation
// pages.
type keyData struct {
	Key keyRow
	// Overlaps are the roll's choices, each saying when the old key
	// stops.
	Overlaps []choice
}

// keyRow is one API key as the pages show it.
type keyRow struct {
	store.APIKey
	// Creator is who created the key.
	Creator who
	// SigningRetired reports that the signing key that signed the key's
	// token is retired: the key is refused although it is not revoked.
	SigningRetired bool
	// RevokedNow reports that the key is revoked at the page's time: it
	// was, or its scheduled revocation has come.
	RevokedNow bool
	// Expired reports that the key's expiry has passed.
	Expired bool
	// Scheduled reports that the key's revocation is scheduled later (a
	// roll's overlap runs).
	Scheduled bool
	// CanRoll reports that the key may be rolled: valid, not rolled.
	CanRoll bool
}

// rowOf returns the row of k at now.
func rowOf(k store.APIKey, creator who, retired bool, now time.Time) keyRow {
	r := keyRow{
		APIKey: k, Creator: creator, SigningRetired: retired,
		RevokedNow: k.RevokedBy(now), Expired: k.ExpiredBy(now), Scheduled: k.RevocationScheduled(now),
	}
	r.CanRoll = !r.RevokedNow && !r.Expired && k.RolledTo == ""
	return r
}

// retiredSigningKeys returns which of the project's signing keys are
// retired.
func (h *Handler) retiredSigningKeys(c *call) (map[string]bool, error) {
	signing, err := h.deps.SigningKeys.ListSigningKeys(c.r.Context(), c.project)
	if err != nil {
		return nil, fmt.Errorf("console: listing signing keys: %w", err)
	}
	retired := make(map[string]bool, len(signing))
	for _, k := range signing {
		retired[k.ID] = k.Retired()
	}
	return retired, nil
}

// keyRows returns the project's API keys, oldest first, with their
// creators named and the keys that a retirement stopped marked.
func (h *Handler) keyRows(c *call) ([]keyRow, error) {
	list, err := h.deps.APIKeys.List(c.r.Context(), c.project)
	if err != nil {
		return nil, fmt.Errorf("console: listing API keys: %w", err)
	}
	retired, err := h.retiredSigningKeys(c)
	if err != nil {
		return nil, err
	}
	n := h.newNamer(c)
	n.setKeys(list)
	now := h.now()
	rows := make([]keyRow, len(list))
	for i, k := range list {
		rows[i] = rowOf(k, n.name(k.CreatedBy, "Unknown"), retired[k.SigningKeyID], now)
	}
	return rows, nil
}

// keyList serves GET keys.
func (h *Handler) keyList(c *call) {
	h.renderKeys(c, http.StatusOK, newKeyForm{})
}

// renderKeys renders a page of the key list with status, and form in the
// create form.
func (h *Handler) renderKeys(c *call, status int, form newKeyForm) {
	search := c.r.URL.Query().Get("name")
	keep := url.Values{"name": {search}}
	if len(search) > 4*store.MaxNameLen {
		h.errorPageLink(c.w, c.r, http.StatusBadRequest, "Search too long", "Search for the start of a key's name: at most 100 characters.", "keys", "Show every key")
		return
	}
	if err := store.CheckPrefix("name", search); err != nil {
		h.errorPageLink(c.w, c.r, http.StatusBadRequest, "Invalid search", argReason(err)+" Search for the start of a key's name.", "keys", "Show every key")
		return
	}
	page, req, err := httpapi.ReadList(c.r, func(ctx context.Context, project string, req paginate.Request) (paginate.Page[store.APIKey], error) {
		return h.deps.APIKeys.ListPage(ctx, project, search, req)
	})
	if err != nil {
		h.listFailed(c, "keys", keep, "listing API keys", err)
		return
	}
	all, err := h.deps.APIKeys.List(c.r.Context(), c.project)
	if err != nil {
		h.fail(c.w, c.r, fmt.Errorf("console: listing API keys: %w", err))
		return
	}
	retired, err := h.retiredSigningKeys(c)
	if err != nil {
		h.fail(c.w, c.r, err)
		return
	}
	n := h.newNamer(c)
	n.setKeys(all)
	now := h.now()
	d := keysData{Search: search, Form: form, Expiries: expiryChoices(form.ExpiresIn)}
	if req.Limit != paginate.DefaultLimit {
		d.Limit = req.Limit
	}
	for _, k := range all {
		switch r := rowOf(k, who{}, retired[k.SigningKeyID], now); {
		case r.RevokedNow || r.Expired:
			d.Revoked++
		case r.SigningRetired:
			d.Stopped++
		default:
			d.Active++
		}
	}
	for _, k := range page.Items {
		d.Keys = append(d.Keys, rowOf(k, n.name(k.CreatedBy, "Unknown"), retired[k.SigningKeyID], now))
	}
	d.Pager = pagerOf("keys", keep, req, page, keyCursor)
	h.render(c.w, c.r, status, pageKeys, h.page(c, "API keys", "keys", d))
}

// keyCursor is the position of k in the key list.
func keyCursor(k store.APIKey) paginate.Cursor {
	return paginate.Cursor{ID: k.ID, CreatedAt: k.CreatedAt}
}

// scopesOf splits the create form's scopes field: names separated by
// spaces or commas.
func scopesOf(field string) []string {
	return strings.FieldsFunc(field, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// createKey serves POST keys. The token is written only into this
// response's body (which, like every page, is Cache-Control: no-store):
// never into a URL, a redirect, a cookie, the session or a log.
func (h *Handler) createKey(c *call) {
	form := newKeyForm{
		Name:      c.r.PostForm.Get("name"),
		Scopes:    c.r.PostForm.Get("scopes"),
		ExpiresIn: c.r.PostForm.Get("expires_in"),
	}
	nk := keys.NewKey{Name: form.Name, Scopes: scopesOf(form.Scopes)}
	known := false
	for _, e := range keyExpiries {
		if e.value == form.ExpiresIn {
			nk.ExpiresIn, known = e.d, true
		}
	}
	if !known {
		form.ExpiresIn = ""
		h.renderKeys(c, http.StatusBadRequest, form)
		return
	}
	k, token, err := h.deps.APIKeys.CreateKey(c.r.Context(), c.project, nk)
	switch {
	case errors.Is(err, keys.ErrInvalidName):
		form.Error = msgBadKeyName
		h.renderKeys(c, http.StatusBadRequest, form)
		return
	case errors.Is(err, keys.ErrInvalidScope):
		form.ScopesError = msgBadScopes
		h.renderKeys(c, http.StatusBadRequest, form)
		return
	case err != nil:
		h.fail(c.w, c.r, fmt.Errorf("console: creating an API key: %w", err))
		return
	}
	h.log.InfoContext(c.r.Context(), "console: API key created", "project", c.project, "key", k.ID, "user", c.user.ID)
	h.render(c.w, c.r, http.StatusOK, pageCreated, h.page(c, "Key created", "keys", createdData{Key: k, Token: token}))
}

// msgBadScopes explains the scopes keys.APIKeys accepts.
const msgBadScopes = "Scopes are names of 1 to 64 characters of a-z, 0-9 and _ . : - (for example contacts:read), separated by spaces or commas, each once, at most 32."

// rollOverlaps are the overlaps the roll's confirmation offers.
var rollOverlaps = []struct {
	value string
	d     time.Duration
	label string
}{
	{"24h", 24 * time.Hour, "1 day"},
	{"1h", time.Hour, "1 hour"},
	{"168h", 7 * 24 * time.Hour, "7 days"},
	{"0s", 0, "No overlap"},
}

// confirmRoll serves GET roll?id=: the confirmation step, which says when
// the old key stops for each overlap offered.
func (h *Handler) confirmRoll(c *call) {
	k, ok, err := h.findKey(c, c.r.URL.Query().Get("id"))
	switch {
	case err != nil:
		h.fail(c.w, c.r, err)
		return
	case !ok:
		h.errorPage(c.w, c.r, http.StatusNotFound, "No such key", "This project has no API key with that id.")
		return
	case !k.CanRoll:
		h.setFlash(c, flash{Kind: "success", Message: fmt.Sprintf("“%s” cannot be rolled: it is revoked, expired or rolled already.", k.Name)})
		redirect(c.w, "keys")
		return
	}
	now := h.now()
	d := keyData{Key: k}
	for i, o := range rollOverlaps {
		label := o.label + ": the old key stops at once"
		if o.d > 0 {
			label = fmt.Sprintf("%s: the old key stops at %s", o.label, now.Add(o.d).UTC().Format("2006-01-02 15:04 UTC"))
		}
		d.Overlaps = append(d.Overlaps, choice{Value: o.value, Label: label, Selected: i == 0})
	}
	h.render(c.w, c.r, http.StatusOK, pageRoll, h.page(c, "Roll "+k.Name, "keys", d))
}

// rollKey serves POST roll: a new key with the old one's name and scopes,
// whose token is shown once in this response's body, and the old key's
// revocation at the end of the overlap.
func (h *Handler) rollKey(c *call) {
	var overlap time.Duration
	known := false
	for _, o := range rollOverlaps {
		if o.value == c.r.PostForm.Get("overlap") {
			overlap, known = o.d, true
		}
	}
	if !known {
		h.errorPage(c.w, c.r, http.StatusBadRequest, "Unknown overlap", "Choose one of the overlaps the roll page offers.")
		return
	}
	id := c.r.PostForm.Get("id")
	old, next, token, err := h.deps.APIKeys.Roll(c.r.Context(), c.project, id, overlap)
	switch {
	case errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid):
		h.errorPage(c.w, c.r, http.StatusNotFound, "No such key", "This project has no API key with that id.")
		return
	case errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrRevoked) || errors.Is(err, store.ErrExpired):
		h.errorPageLink(c.w, c.r, http.StatusConflict, "Not rolled", "The key is revoked, expired or rolled already (perhaps by someone else just now): nothing was created.", "keys", "Back to API keys")
		return
	case err != nil:
		h.fail(c.w, c.r, fmt.Errorf("console: rolling an API key: %w", err))
		return
	}
	h.log.InfoContext(c.r.Context(), "console: API key rolled", "project", c.project, "key", id, "successor", next.ID, "user", c.user.ID)
	h.render(c.w, c.r, http.StatusOK, pageCreated, h.page(c, "Key rolled", "keys",
		createdData{Key: next, Token: token, Rolled: &old, OldStopsNow: !old.RevokedAt.IsZero()}))
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
	case k.RevokedNow:
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
