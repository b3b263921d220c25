package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

// A session's secret is the value of its cookie: 256 random bits, base64url
// without padding. The store keeps only its SHA-256 (the stored session's
// ID), so reading the store gives no usable cookie. What else a session
// needs is derived from the secret with HMAC-SHA256, so that every instance
// can compute it from the cookie and none is stored: the form token, and
// the key that authenticates the session's flash messages.

// secretLen is the length of a session secret (or any random token) as text:
// 32 bytes in base64url without padding.
var secretLen = base64.RawURLEncoding.EncodedLen(32)

// touchInterval is how often, at most, a session's LastSeenAt is written.
const touchInterval = time.Minute

// Labels that keep the values derived from one session secret apart.
const (
	labelFormToken = "latchkey console form token"
	labelFlash     = "latchkey console flash\x00"
)

// randomToken returns 256 random bits, base64url without padding.
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error.
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// wellFormedToken reports whether s could be a token randomToken made.
func wellFormedToken(s string) bool {
	if len(s) != secretLen {
		return false
	}
	_, err := base64.RawURLEncoding.Strict().DecodeString(s)
	return err == nil
}

// sessionID returns the stored id of the session whose secret is secret:
// its SHA-256 in lowercase hex.
func sessionID(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// mac returns HMAC-SHA256 keyed with secret of label followed by msg.
func mac(secret, label string, msg []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(label))
	m.Write(msg)
	return m.Sum(nil)
}

// session is a live session of the console, as one request sees it.
type session struct {
	// secret is the cookie's value; it never leaves the request.
	secret string
	// rec is the stored session.
	rec store.ConsoleSession
}

// formToken returns the session's form token: the HMAC of a fixed label
// under the session secret, base64url. It is the same on every instance
// and is not stored anywhere.
func (s session) formToken() string {
	return base64.RawURLEncoding.EncodeToString(mac(s.secret, labelFormToken, nil))
}

// expired reports whether rec has ended at now.
func (h *Handler) expired(rec store.ConsoleSession, now time.Time) bool {
	return now.Sub(rec.LastSeenAt) >= h.idle || now.Sub(rec.CreatedAt) >= h.lifetime
}

// errUserChanged is startSession's error when the user was given a new
// password, disabled or deleted while signing in.
var errUserChanged = errors.New("console: the user changed during the sign-in")

// startSession stores a new session of u, the user as the sign-in checked
// them, in project and returns it. A password reset or a disable that
// lands while the sign-in hashes ends the user's sessions before this one
// is stored; so the user is read again once it is, and unless they are
// still as checked the session is ended at once and the error matches
// errUserChanged. A reset sets the hash, and a disable the flag, before
// they end the sessions: whichever comes first, the read or the ending,
// catches the session.
func (h *Handler) startSession(ctx context.Context, project string, u store.User) (session, error) {
	now := store.Truncate(h.now())
	s := session{secret: randomToken()}
	s.rec = store.ConsoleSession{
		ID:         sessionID(s.secret),
		ProjectID:  project,
		UserID:     u.ID,
		CreatedAt:  now,
		LastSeenAt: now,
	}
	if err := h.deps.Sessions.CreateConsoleSession(ctx, s.rec); err != nil {
		return session{}, fmt.Errorf("console: storing a session: %w", err)
	}
	cur, err := h.deps.Users.Get(ctx, project, u.ID)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && (cur.Disabled() || cur.PasswordHash != u.PasswordHash):
		h.endSession(ctx, project, s.rec.ID)
		return session{}, errUserChanged
	case err != nil:
		h.endSession(ctx, project, s.rec.ID)
		return session{}, fmt.Errorf("console: reading the user signing in: %w", err)
	}
	return s, nil
}

// findSession returns the live session of project whose secret is secret.
// It reports false for a malformed secret, an unknown session, a session
// of another project and an ended one, which it deletes. An error is a
// store failure: the caller fails closed.
func (h *Handler) findSession(ctx context.Context, project, secret string) (session, bool, error) {
	if !wellFormedToken(secret) {
		return session{}, false, nil
	}
	id := sessionID(secret)
	rec, err := h.deps.Sessions.GetConsoleSession(ctx, project, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return session{}, false, nil
	case err != nil:
		return session{}, false, fmt.Errorf("console: reading a session: %w", err)
	}
	if h.expired(rec, h.now()) {
		h.endSession(ctx, project, id)
		return session{}, false, nil
	}
	return session{secret: secret, rec: rec}, true, nil
}

// touch records that s served a request now, if its stored LastSeenAt is
// touchInterval or more old: a busy session costs one write a minute, not
// one a click. It reports false when the session was ended meanwhile (by a
// sign-out on another instance). A failure to write is logged: it can only
// make the session end sooner.
func (h *Handler) touch(ctx context.Context, s session) bool {
	now := store.Truncate(h.now())
	if now.Sub(s.rec.LastSeenAt) < touchInterval {
		return true
	}
	err := h.deps.Sessions.TouchConsoleSession(ctx, s.rec.ProjectID, s.rec.ID, now)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false
	case err != nil:
		h.log.ErrorContext(ctx, "console: recording a session's use", "project", s.rec.ProjectID, "user", s.rec.UserID, "err", err)
	}
	return true
}

// endSession deletes the stored session id of project. A failure is
// logged: the session then ends at its expiry instead.
func (h *Handler) endSession(ctx context.Context, project, id string) {
	if err := h.deps.Sessions.DeleteConsoleSession(context.WithoutCancel(ctx), project, id); err != nil {
		h.log.ErrorContext(ctx, "console: deleting a session", "project", project, "err", err)
	}
}
