package console

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

// signingRow is one signing key as the list shows it.
type signingRow struct {
	ID        string
	CreatedAt time.Time
	RetiredAt time.Time
	Active    bool
	// PublicKey is the key's JWK "x": base64url of the public key.
	PublicKey string
}

// Retired reports whether the key is retired.
func (s signingRow) Retired() bool { return !s.RetiredAt.IsZero() }

// signingData is the signing key list's data.
type signingData struct {
	// Keys are newest first.
	Keys []signingRow
}

// retireData is the data of the retirement's confirmation page.
type retireData struct {
	Key signingRow
	// Stops is how many API keys that are not revoked the key signed:
	// the keys the retirement stops.
	Stops int
}

// rotateData is the data of the rotation's confirmation page.
type rotateData struct {
	// Active is the active key, which rotation demotes; its ID is "" when
	// the project has none.
	Active signingRow
}

// signingRows returns the project's signing keys, newest first, marking
// the active one: the newest that is not retired.
func (h *Handler) signingRows(c *call) ([]signingRow, error) {
	list, err := h.deps.SigningKeys.ListSigningKeys(c.r.Context(), c.project)
	if err != nil {
		return nil, fmt.Errorf("console: listing signing keys: %w", err)
	}
	rows := make([]signingRow, 0, len(list))
	active := false
	for i := len(list) - 1; i >= 0; i-- {
		k := list[i]
		row := signingRow{
			ID:        k.ID,
			CreatedAt: k.CreatedAt,
			RetiredAt: k.RetiredAt,
			PublicKey: base64.RawURLEncoding.EncodeToString(k.PublicKey),
		}
		if !active && !k.Retired() {
			row.Active, active = true, true
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// signingKeyList serves GET signing-keys.
func (h *Handler) signingKeyList(c *call) {
	rows, err := h.signingRows(c)
	if err != nil {
		h.fail(c.w, c.r, err)
		return
	}
	h.render(c.w, c.r, http.StatusOK, pageSigning, h.page(c, "Signing keys", "signing", signingData{Keys: rows}))
}

// confirmRotate serves GET rotate: the confirmation step.
func (h *Handler) confirmRotate(c *call) {
	rows, err := h.signingRows(c)
	if err != nil {
		h.fail(c.w, c.r, err)
		return
	}
	d := rotateData{}
	for _, row := range rows {
		if row.Active {
			d.Active = row
		}
	}
	h.render(c.w, c.r, http.StatusOK, pageRotate, h.page(c, "Rotate the signing key", "signing", d))
}

// rotate serves POST rotate: a new active signing key.
func (h *Handler) rotate(c *call) {
	k, err := h.deps.Keyring.Rotate(c.r.Context(), c.project)
	if err != nil {
		h.fail(c.w, c.r, fmt.Errorf("console: rotating the signing key: %w", err))
		return
	}
	h.log.InfoContext(c.r.Context(), "console: signing key rotated", "project", c.project, "kid", k.ID, "user", c.user.ID)
	h.setFlash(c, flash{Kind: "success",
		Message: fmt.Sprintf("%s is the new active signing key. Older keys keep verifying until you retire them.", k.ID)})
	redirect(c.w, "signing-keys")
}

// findSigning returns the project's signing key kid, or reports false.
func (h *Handler) findSigning(c *call, kid string) (signingRow, bool, error) {
	if kid == "" {
		return signingRow{}, false, nil
	}
	rows, err := h.signingRows(c)
	if err != nil {
		return signingRow{}, false, err
	}
	for _, row := range rows {
		if row.ID == kid {
			return row, true, nil
		}
	}
	return signingRow{}, false, nil
}

// confirmRetire serves GET retire?kid=: the confirmation step.
func (h *Handler) confirmRetire(c *call) {
	k, ok, err := h.findSigning(c, c.r.URL.Query().Get("kid"))
	switch {
	case err != nil:
		h.fail(c.w, c.r, err)
		return
	case !ok:
		h.errorPage(c.w, c.r, http.StatusNotFound, "No such signing key", "This project has no signing key with that id.")
		return
	case k.Active:
		h.setFlash(c, flash{Kind: "error", Message: msgRetireActive})
		redirect(c.w, "signing-keys")
		return
	case k.Retired():
		h.setFlash(c, flash{Kind: "success", Message: k.ID + " is already retired."})
		redirect(c.w, "signing-keys")
		return
	}
	stops, err := h.deps.APIKeys.ActiveSignedBy(c.r.Context(), c.project, k.ID)
	if err != nil {
		h.fail(c.w, c.r, fmt.Errorf("console: counting the API keys a signing key signed: %w", err))
		return
	}
	h.render(c.w, c.r, http.StatusOK, pageRetire, h.page(c, "Retire "+k.ID, "signing", retireData{Key: k, Stops: stops}))
}

const msgRetireActive = "The active signing key cannot be retired. Rotate first, then retire the older key."

// retire serves POST retire.
func (h *Handler) retire(c *call) {
	kid := c.r.PostForm.Get("kid")
	err := store.ErrNotFound
	if kid != "" {
		err = h.deps.Keyring.Retire(c.r.Context(), c.project, kid)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		h.errorPage(c.w, c.r, http.StatusNotFound, "No such signing key", "This project has no signing key with that id.")
		return
	case errors.Is(err, store.ErrConflict):
		h.setFlash(c, flash{Kind: "error", Message: msgRetireActive})
		redirect(c.w, "signing-keys")
		return
	case err != nil:
		h.fail(c.w, c.r, fmt.Errorf("console: retiring a signing key: %w", err))
		return
	}
	h.log.InfoContext(c.r.Context(), "console: signing key retired", "project", c.project, "kid", kid, "user", c.user.ID)
	h.setFlash(c, flash{Kind: "success",
		Message: fmt.Sprintf("Retired %s. Every token and API key it signed is refused from now on.", kid)})
	redirect(c.w, "signing-keys")
}
