package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/latchkey-dev/latchkey/audit"
	"github.com/latchkey-dev/latchkey/internal/telemetry"
	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

// UsersOptions tunes [Users]. A nil *UsersOptions and every zero field mean
// the documented default.
type UsersOptions struct {
	// Audit records user creations and changes, by the actor of the
	// request's context (package audit). Nil records nothing.
	Audit *audit.Log
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// MeterProvider receives the latchkey.revocations counter (kind=user,
	// for each Disable). Nil means the global provider.
	MeterProvider metric.MeterProvider
}

// Users creates, lists and changes a project's users: the administration
// that the console and the command line perform. Passwords are hashed with
// the Hasher; the store's checks (store.CheckUser) apply to everything else.
// It is safe for concurrent use.
type Users struct {
	st     store.UserStore
	hasher *Hasher
	audit  *audit.Log
	now    func() time.Time
	// disabled counts users disabled (latchkey.revocations).
	disabled telemetry.Counter
}

// NewUsers returns a Users over st, hashing with h. It panics if st or h is
// nil.
func NewUsers(st store.UserStore, h *Hasher, opts *UsersOptions) *Users {
	if st == nil || h == nil {
		panic("identity: NewUsers needs a UserStore and a Hasher")
	}
	var o UsersOptions
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Users{st: st, hasher: h, audit: o.Audit, now: o.Now,
		disabled: telemetry.NewRevocations(telemetry.Meter(o.MeterProvider))}
}

// Create creates a user of the project with the given email (trimmed),
// password (hashed with argon2id) and tags. It returns an error matching
// store.ErrInvalid for an email, tags or password the store's checks or
// the password policy (CheckPassword: then it also matches
// ErrPasswordPolicy) refuse, before any hashing, store.ErrNotFound for an
// unknown project and store.ErrConflict when the project has a user with
// that email, compared case-insensitively.
func (us *Users) Create(ctx context.Context, projectID, email, password string, tags []string) (store.User, error) {
	email = strings.TrimSpace(email)
	if tags == nil {
		tags = []string{}
	}
	if err := errors.Join(store.CheckEmail(email), store.CheckTags(tags), CheckPassword(password)); err != nil {
		return store.User{}, err
	}
	hash, err := us.hasher.Hash(ctx, password)
	if err != nil {
		return store.User{}, fmt.Errorf("identity: hashing the password: %w", err)
	}
	u := store.User{
		ID:           store.NewID(store.PrefixUser),
		ProjectID:    projectID,
		Email:        email,
		PasswordHash: hash,
		Tags:         tags,
		CreatedAt:    store.Truncate(us.now()),
	}
	if err := us.st.CreateUser(ctx, u); err != nil {
		return store.User{}, fmt.Errorf("identity: creating user: %w", err)
	}
	us.audit.Record(ctx, projectID, store.ActionUserCreate, u.ID)
	return u, nil
}

// Get returns the project's user id, or an error matching
// store.ErrNotFound.
func (us *Users) Get(ctx context.Context, projectID, id string) (store.User, error) {
	return us.st.GetUser(ctx, projectID, id)
}

// GetByEmail returns the project's user with the email (compared
// case-insensitively), or an error matching store.ErrNotFound.
func (us *Users) GetByEmail(ctx context.Context, projectID, email string) (store.User, error) {
	return us.st.GetUserByEmail(ctx, projectID, email)
}

// List returns a page of the project's users whose email starts with
// emailPrefix (case-insensitively; "" for all), oldest first, by the list
// rules of package paginate.
func (us *Users) List(ctx context.Context, projectID, emailPrefix string, req paginate.Request) (paginate.Page[store.User], error) {
	return us.st.ListUsers(ctx, projectID, emailPrefix, req)
}

// SetTags replaces the user's tags. It returns an error matching
// store.ErrInvalid for tags store.CheckTags refuses and store.ErrNotFound
// for an unknown user.
func (us *Users) SetTags(ctx context.Context, projectID, id string, tags []string) error {
	if tags == nil {
		tags = []string{}
	}
	if err := us.st.SetUserTags(ctx, projectID, id, tags); err != nil {
		return fmt.Errorf("identity: setting tags: %w", err)
	}
	us.audit.Record(ctx, projectID, store.ActionUserUpdate, id)
	return nil
}

// SetPassword gives the user a new password. Sessions already started go
// on. It returns an error matching store.ErrInvalid and ErrPasswordPolicy
// for a password CheckPassword refuses and store.ErrNotFound for an unknown
// user.
func (us *Users) SetPassword(ctx context.Context, projectID, id, password string) error {
	if err := CheckPassword(password); err != nil {
		return err
	}
	hash, err := us.hasher.Hash(ctx, password)
	if err != nil {
		return fmt.Errorf("identity: hashing the password: %w", err)
	}
	if err := us.st.SetPasswordHash(ctx, projectID, id, hash); err != nil {
		return fmt.Errorf("identity: setting the password: %w", err)
	}
	us.audit.Record(ctx, projectID, store.ActionUserPassword, id)
	return nil
}

// ResetPassword gives the user a new password and ends every session of
// theirs at once, on every instance (refresh tokens and login tokens
// alike, as Disable does, but the user stays enabled), and returns the user
// as stored. The audit log records it as a password set
// (store.ActionUserPassword). It returns an error matching
// store.ErrInvalid and ErrPasswordPolicy for a password CheckPassword
// refuses (before any change) and store.ErrNotFound for an unknown user.
func (us *Users) ResetPassword(ctx context.Context, projectID, id, password string) (store.User, error) {
	if err := CheckPassword(password); err != nil {
		return store.User{}, err
	}
	hash, err := us.hasher.Hash(ctx, password)
	if err != nil {
		return store.User{}, fmt.Errorf("identity: hashing the password: %w", err)
	}
	// The hash first: a session started with the old password before it
	// changed is ended by the next call.
	if err := us.st.SetPasswordHash(ctx, projectID, id, hash); err != nil {
		return store.User{}, fmt.Errorf("identity: setting the password: %w", err)
	}
	if err := us.st.EndUserSessions(ctx, projectID, id, us.now()); err != nil {
		return store.User{}, fmt.Errorf("identity: ending the sessions: %w", err)
	}
	us.audit.Record(ctx, projectID, store.ActionUserPassword, id)
	return us.st.GetUser(ctx, projectID, id)
}

// Disable disables the user now and returns the user as stored: they can no
// longer sign in (login answers as for a wrong password), every session of
// theirs ends at once on every instance (refresh tokens and login tokens
// alike), and the revocation feed says so. Disabling a disabled user
// changes nothing. It returns an error matching store.ErrNotFound for an
// unknown user.
func (us *Users) Disable(ctx context.Context, projectID, id string) (store.User, error) {
	if err := us.st.DisableUser(ctx, projectID, id, us.now()); err != nil {
		return store.User{}, fmt.Errorf("identity: disabling user: %w", err)
	}
	us.audit.Record(ctx, projectID, store.ActionUserDisable, id)
	us.disabled.Add(ctx, telemetry.KindUser)
	return us.st.GetUser(ctx, projectID, id)
}

// Enable lets a disabled user sign in again and returns the user as stored.
// The sessions that Disable ended stay ended. It returns an error matching
// store.ErrNotFound for an unknown user.
func (us *Users) Enable(ctx context.Context, projectID, id string) (store.User, error) {
	if err := us.st.EnableUser(ctx, projectID, id); err != nil {
		return store.User{}, fmt.Errorf("identity: enabling user: %w", err)
	}
	us.audit.Record(ctx, projectID, store.ActionUserEnable, id)
	return us.st.GetUser(ctx, projectID, id)
}
