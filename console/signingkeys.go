package console

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/latchkey-dev/latchkey/keys"
	"github.com/latchkey-dev/latchkey/store"
)

// signingRow is one signing key as the list shows it.
type signingRow struct {
	ID        string
	Algorithm string // EdDSA, ES256 or RS256
	CreatedAt time.Time
	RetiredAt time.Time
	Active    bool
	// PublicKey is, for an Ed25519 key, its JWK "x" (base64url of the
	// public key); for the others, the JWK members of the key, as JSON.
	PublicKey string
}

// algorithms are the choices of the rotation form, the default first.
var algorithms = []string{store.AlgEdDSA, store.AlgES256, store.AlgRS256}

// publicKeyText is how the list shows the public key pub of algorithm alg.
func publicKeyText(alg string, pub []byte) string {
	if alg == store.AlgEdDSA {
		return base64.RawURLEncoding.EncodeToString(pub)
	}
	p, err := keys.ParsePublicKey(alg, pub)
	if err != nil {
		return "(unusable key)"
	}
	j := p.JWK("")
	m := map[string]string{"kty": j.Kty, "crv": j.Crv, "x": j.X, "y": j.Y, "n": j.N, "e": j.E}
	for k, v := range m {
		if v == "" {
			delete(m, k)
		}
	}
	b, _ := json.Marshal(m) // sorted keys
	return string(b)
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
	// Algorithms are the choices of algorithm, the default first; Chosen
	// is the one selected: the active key's, or the default.
	Algorithms []string
	Chosen     string
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
			Algorithm: k.Algorithm,
			CreatedAt: k.CreatedAt,
			RetiredAt: k.RetiredAt,
			PublicKey: publicKeyText(k.Algorithm, k.PublicKey),
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
	d := rotateData{Algorithms: algorithms, Chosen: algorithms[0]}
	for _, row := range rows {
		if row.Active {
			d.Active = row
			d.Chosen = row.Algorithm
		}
	}
	h.render(c.w, c.r, http.StatusOK, pageRotate, h.page(c, "Rotate the signing key", "signing", d))
}

// rotate serves POST rotate: a new active signing key, of the algorithm
// the form's alg names ("" or none: the active key's).
func (h *Handler) rotate(c *call) {
	alg := c.r.PostForm.Get("alg")
	if alg != "" && !slices.Contains(algorithms, alg) {
		h.errorPage(c.w, c.r, http.StatusBadRequest, "No such algorithm", "A signing key is EdDSA, ES256 or RS256.")
		return
	}
	k, err := h.deps.Keyring.RotateTo(c.r.Context(), c.project, alg)
	if err != nil {
		h.fail(c.w, c.r, fmt.Errorf("console: rotating the signing key: %w", err))
		return
	}
	h.log.InfoContext(c.r.Context(), "console: signing key rotated", "project", c.project, "kid", k.ID, "alg", k.Algorithm, "user", c.user.ID)
	h.setFlash(c, flash{Kind: "success",
		Message: fmt.Sprintf("%s is the new active signing key. It signs with %s; older keys keep verifying until you retire them.", k.ID, k.Algorithm)})
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
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrInvalid):
		// ErrInvalid: a kid the store refuses (not an id) names no key.
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
