package identity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/latchkey-dev/latchkey/requestid"
	"github.com/latchkey-dev/latchkey/store"
)

// ErrInvalidCredentials is returned by Authenticate when the email is
// unknown or the password does not match. The two are deliberately not
// told apart.
var ErrInvalidCredentials = errors.New("identity: invalid credentials")

// RateLimitedError is returned by Authenticate when the account or the
// client address has failed too often. No password was checked.
type RateLimitedError struct {
	// RetryAfter is how long until the attempt may be made again.
	RetryAfter time.Duration
}

// Error implements error.
func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("identity: too many failed attempts; retry after %s", e.RetryAfter)
}

// RetryAfterSeconds returns RetryAfter in whole seconds, rounded up and at
// least 1: the value of a Retry-After header.
func (e *RateLimitedError) RetryAfterSeconds() int64 {
	s := int64(math.Ceil(e.RetryAfter.Seconds()))
	return max(s, 1)
}

// AuthOptions configure an Authenticator. The zero value means the
// defaults.
type AuthOptions struct {
	// Logger receives failed sign-ins at Info level and store errors at
	// Error level; never an email, a password or a hash. Nil means
	// slog.Default().
	Logger *slog.Logger
}

// Authenticator checks a project user's email and password, with the
// throttling and the defences against account enumeration of the wire
// contract. Both POST /v1/identity/login and the console's sign-in use it.
type Authenticator struct {
	users  store.UserStore
	hasher *Hasher
	lim    Limiter
	log    *slog.Logger
	decoy  string    // decoyHash, checked in place of an unknown user's hash
	flying *inFlight // attempts let through, their outcome not yet counted
}

// NewAuthenticator returns an Authenticator over users, hashing with h and
// throttling with lim. When the email is unknown, a password is checked
// against an argon2id hash with a random salt and key that no password
// matches, so that an unknown email costs what a wrong password costs (one
// hash). It panics if a required dependency is nil.
func NewAuthenticator(users store.UserStore, h *Hasher, lim Limiter, opts *AuthOptions) *Authenticator {
	if users == nil || h == nil || lim == nil {
		panic("identity: NewAuthenticator requires a UserStore, a Hasher and a Limiter")
	}
	var o AuthOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Authenticator{users: users, hasher: h, lim: lim, log: o.Logger, decoy: decoyHash(), flying: newInFlight()}
}

// Authenticate returns the user of project projectID whose email equals
// email case-insensitively and whose password is password, if that user is
// not disabled.
//
// Before any hashing (and, while every hashing slot is taken, before the
// user is looked up) it asks the Limiter whether the account
// (projectID and the normalized email, whether or not such a user exists)
// or clientAddr has failed too often, and if so returns a
// *RateLimitedError. The attempts on the account or from clientAddr that
// this Authenticator let through and whose outcome is not counted yet
// (hashing, or their failure still being written) count as failures
// there: with a slow store or a busy hasher, no more attempts are checked
// than the limits allow. An unknown email, a wrong password, a disabled
// user, a password over MaxPasswordLen bytes and an unreadable stored hash all
// return ErrInvalidCredentials and count as one failure for the account and
// the address; an unknown email and a disabled user cost one argon2id hash,
// exactly as a wrong password does. Throttling fails closed: when the
// Limiter cannot check or count, the attempt is refused with an error
// matching store.ErrUnavailable. A success forgets the account's failures and, if the
// stored hash is bcrypt or weaker than the current argon2id parameters,
// replaces it with a fresh argon2id hash; should the stored hash have
// changed meanwhile (a password set during the sign-in), it is kept and
// the sign-in returns ErrInvalidCredentials. clientAddr "" throttles by
// account only. Any other error is a store or context error.
func (a *Authenticator) Authenticate(ctx context.Context, projectID, email, password, clientAddr string) (store.User, error) {
	account, address := accountKey(projectID, email), addressKey(projectID, clientAddr)
	ctx = withNote(ctx) // see StoreLimiter.Success
	check := func(inFlight InFlight) error {
		wait, err := a.lim.Check(ctx, account, address, inFlight)
		if err != nil {
			return fmt.Errorf("identity: sign-in throttling could not be checked: %w: %w", store.ErrUnavailable, err)
		}
		if wait > 0 {
			return &RateLimitedError{RetryAfter: wait}
		}
		return nil
	}
	// throttled logs a refusal for throttling (a check may be asked
	// again before it refuses: see inFlight.admit).
	throttled := func(err error) error {
		var rl *RateLimitedError
		if errors.As(err, &rl) {
			a.log.InfoContext(ctx, "sign-in throttled", withRequestID(ctx, "project", projectID, "client", clientAddr)...)
		}
		return err
	}
	// The limits are checked once a hashing slot is held (admit), and,
	// while every slot is taken, before anything else too, so that an
	// attempt over the limit is refused without waiting for a slot (with
	// a slot free, admit comes at once and a first check would only cost
	// another read). The check at admit is the one that counts: failures
	// are counted after the hash, so without it every attempt queued
	// behind a busy hasher would pass the first and cost a hash, however
	// far over the limit. It admits the attempt: it counts as a failure
	// in flight until its outcome is in the store (attempt.settle), so
	// that the attempts checked while its failure is being written count
	// it.
	if a.hasher.busy() {
		if err := a.flying.precheck(account, address, check); err != nil {
			return store.User{}, throttled(err)
		}
	}
	var at *attempt // admitted: in flight until its outcome is counted
	defer func() { at.end() }()
	admit := func() error {
		if at != nil {
			return nil // admitted by an earlier hash of this attempt
		}
		var err error
		at, err = a.flying.admit(ctx, account, address, check)
		return throttled(err)
	}
	if len(password) > MaxPasswordLen {
		// Refused without hashing: the answer does not depend on the
		// account, so skipping the hash reveals nothing.
		return store.User{}, a.fail(ctx, at, projectID, account, address, clientAddr, "", "password too long")
	}

	u, err := a.users.GetUserByEmail(ctx, projectID, email)
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrInvalid):
		// ErrInvalid: an email the store refuses to look up (empty) is
		// an unknown email too.
		if _, _, err := a.hasher.verify(ctx, a.decoy, password, admit); err != nil {
			return store.User{}, err
		}
		return store.User{}, a.fail(ctx, at, projectID, account, address, clientAddr, "", "unknown email")
	case err != nil:
		return store.User{}, fmt.Errorf("identity: looking up user: %w", err)
	}

	ok, rehash, err := a.hasher.verify(ctx, u.PasswordHash, password, admit)
	if errors.Is(err, ErrUnknownHash) {
		a.log.ErrorContext(ctx, "stored password hash is unreadable", "project", projectID, "user", u.ID)
		// Cost one hash, as any other failure does.
		_, _, err = a.hasher.verify(ctx, a.decoy, password, admit)
	}
	if err != nil {
		return store.User{}, err
	}
	if !ok {
		return store.User{}, a.fail(ctx, at, projectID, account, address, clientAddr, u.ID, "wrong password")
	}
	if u.Disabled() {
		return store.User{}, a.fail(ctx, at, projectID, account, address, clientAddr, u.ID, "user disabled")
	}

	if err := at.settle(func() error { return a.lim.Success(ctx, account) }); err != nil {
		a.log.ErrorContext(ctx, "clearing sign-in failures", "project", projectID, "user", u.ID, "err", err)
	}
	if rehash && !a.upgrade(ctx, projectID, &u, password) {
		// The stored hash changed while this sign-in hashed: another
		// sign-in of the user upgraded it too (the same password, hashed
		// anew), or the password was set (an administrator's reset). The
		// sign-in stands only if the password is still the user's.
		cur, ok, err := a.recheck(ctx, projectID, u.ID, password)
		if err != nil {
			return store.User{}, err
		}
		if !ok {
			a.log.InfoContext(ctx, "sign-in failed", withRequestID(ctx, "project", projectID, "user", u.ID, "client", clientAddr, "reason", "password changed during the sign-in")...)
			return store.User{}, ErrInvalidCredentials
		}
		u = cur
	}
	return u, nil
}

// recheck reads the user again and reports whether password is the one its
// stored hash now holds and the user is enabled. It costs one more hash; it
// runs only when a sign-in's upgrade found the hash changed.
func (a *Authenticator) recheck(ctx context.Context, projectID, userID, password string) (store.User, bool, error) {
	u, err := a.users.GetUser(ctx, projectID, userID)
	if errors.Is(err, store.ErrNotFound) {
		return store.User{}, false, nil
	}
	if err != nil {
		return store.User{}, false, fmt.Errorf("identity: looking up user: %w", err)
	}
	ok, _, err := a.hasher.Verify(ctx, u.PasswordHash, password)
	if errors.Is(err, ErrUnknownHash) {
		return store.User{}, false, nil
	}
	if err != nil {
		return store.User{}, false, err
	}
	return u, ok && !u.Disabled(), nil
}

// fail counts a failed attempt and returns ErrInvalidCredentials, or, when
// the failure cannot be counted, an error matching store.ErrUnavailable: an
// attempt that throttling did not see is refused. The log line names the
// account by userID when it exists, else by its throttling key's hash,
// never by its email.
func (a *Authenticator) fail(ctx context.Context, at *attempt, projectID, account, address, clientAddr, userID, reason string) error {
	who := slog.String("user", userID)
	if userID == "" {
		who = slog.String("account", accountRef(account))
	}
	if err := at.settle(func() error { return a.lim.Failure(ctx, account, address) }); err != nil {
		a.log.ErrorContext(ctx, "sign-in refused: the failure could not be counted",
			withRequestID(ctx, "project", projectID, who, "client", clientAddr, "err", err)...)
		return fmt.Errorf("identity: a failed sign-in could not be counted: %w: %w", store.ErrUnavailable, err)
	}
	a.log.InfoContext(ctx, "sign-in failed", withRequestID(ctx, "project", projectID, who, "client", clientAddr, "reason", reason)...)
	return ErrInvalidCredentials
}

// withRequestID returns the attributes of a log line, args, with the
// request's id (package requestid) as request_id when ctx carries one, so
// that a sign-in's log lines can be found from its answer.
func withRequestID(ctx context.Context, args ...any) []any {
	if id := requestid.FromContext(ctx); id != "" {
		return append(args, "request_id", id)
	}
	return args
}

// upgrade replaces u's password hash with a fresh argon2id hash, only if
// the stored hash is still the one checked (store.UserStore's
// ReplacePasswordHash), so that it never undoes a password set meanwhile.
// It reports false when the hash had changed; any other failure is logged
// and does not fail the sign-in (the next one tries again).
func (a *Authenticator) upgrade(ctx context.Context, projectID string, u *store.User, password string) bool {
	hash, err := a.hasher.Hash(ctx, password)
	if err == nil {
		err = a.users.ReplacePasswordHash(ctx, projectID, u.ID, u.PasswordHash, hash)
	}
	switch {
	case errors.Is(err, store.ErrConflict):
		return false
	case err != nil:
		a.log.ErrorContext(ctx, "upgrading password hash", "project", projectID, "user", u.ID, "err", err)
		return true
	}
	u.PasswordHash = hash
	return true
}
