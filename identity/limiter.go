package identity

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/netip"
	"strings"
	"time"

	"github.com/latchkey-dev/latchkey/store"
)

// Limiter throttles password attempts. It counts failures per account and
// per client address in fixed windows; an account or address that has
// reached its limit is refused until its window ends.
//
// Keys are opaque strings made by the Authenticator (they never hold an
// email or a password in clear). An empty address means the attempt has no
// client address and only the account is throttled. Implementations are
// safe for concurrent use.
type Limiter interface {
	// Check returns how long the caller must wait before trying again: a
	// positive duration when account or address has reached its limit in
	// its current window, counting as failures both those recorded and
	// the attempts inFlight names, zero when the attempt may proceed. The
	// attempts inFlight names as landing may be among those recorded
	// already: Check counts them once, as if they were wherever the
	// recorded count allows (a key's count is then the larger of its
	// attempts in flight and its recorded failures plus those in flight
	// less those landing). When in-flight attempts alone reach a limit (no
	// window is open yet), the wait is a whole window: the one their
	// failures will open.
	Check(ctx context.Context, account, address string, inFlight InFlight) (retryAfter time.Duration, err error)
	// Failure counts one failed attempt against account and address.
	Failure(ctx context.Context, account, address string) error
	// Success forgets the failures of account, after a successful sign-in.
	// The address's count is kept, so that a valid account cannot be used
	// to reset it.
	Success(ctx context.Context, account string) error
}

// InFlight counts sign-in attempts that were let through and whose outcome
// is not counted yet: each is hashing, or its outcome is being written.
// Limiter.Check counts them as failures, so that attempts made while
// earlier ones are still being hashed or counted (a slow store, a busy
// hasher) cannot pass the limit.
type InFlight struct {
	// Account is the number of such attempts on the account.
	Account int
	// Address is the number of such attempts from the client address.
	Address int
	// AccountLanding and AddressLanding are how many of those attempts
	// have their outcome being written: a failure of theirs may be in the
	// recorded count already.
	AccountLanding, AddressLanding int
}

// Default throttling limits.
const (
	// DefaultAccountLimit is the number of failed attempts per account
	// (project and email) in one window.
	DefaultAccountLimit = 10
	// DefaultAddressLimit is the number of failed attempts per client
	// address (IPv4 address or IPv6 /64) in one project in one window.
	DefaultAddressLimit = 50
	// DefaultWindow is the length of a throttling window.
	DefaultWindow = 15 * time.Minute
	// DefaultMaxEntries is how many keys a memory limiter keeps.
	DefaultMaxEntries = 100_000
)

// LimiterOptions configure NewMemoryLimiter and NewStoreLimiter. The zero
// value means the defaults.
type LimiterOptions struct {
	// AccountLimit is the number of failures per account per window after
	// which attempts are refused. Zero means DefaultAccountLimit.
	AccountLimit int
	// AddressLimit is the number of failures per client address per window
	// after which attempts are refused. Zero means DefaultAddressLimit.
	AddressLimit int
	// Window is the length of a fixed counting window, started by the
	// first failure of a key. Zero means DefaultWindow.
	Window time.Duration
	// MaxEntries bounds the keys a memory limiter keeps; when full it drops
	// expired windows first, then the oldest ones. Zero means
	// DefaultMaxEntries. A store limiter ignores it.
	MaxEntries int
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
}

func (o *LimiterOptions) withDefaults() LimiterOptions {
	var c LimiterOptions
	if o != nil {
		c = *o
	}
	if c.AccountLimit <= 0 {
		c.AccountLimit = DefaultAccountLimit
	}
	if c.AddressLimit <= 0 {
		c.AddressLimit = DefaultAddressLimit
	}
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.MaxEntries <= 0 {
		c.MaxEntries = DefaultMaxEntries
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Throttling key prefixes; they also tell a limiter which limit applies.
const (
	accountKeyPrefix = "identity/account/"
	addressKeyPrefix = "identity/address/"
)

// accountKey returns the throttling key of (project, email): the email is
// normalized as the store compares it, so every spelling of one address,
// known to the store or not, shares one counter; and hashed, so no email is
// kept by the limiter.
func accountKey(projectID, email string) string {
	sum := sha256.Sum256([]byte(store.NormalizeEmail(email)))
	return accountKeyPrefix + projectID + "/" + base64.RawURLEncoding.EncodeToString(sum[:18])
}

// accountRef returns the part of an account key that names the account in
// logs: a prefix of its email's hash, which tells one account's failures
// from another's without revealing the email.
func accountRef(account string) string {
	ref := account[strings.LastIndexByte(account, '/')+1:]
	return ref[:min(len(ref), 12)]
}

// addressKey returns the throttling key of a client address in a project,
// or "" when addr is empty. An IPv6 address is reduced to its /64, the block
// one client typically holds; an IPv4-mapped IPv6 address counts as its
// IPv4 address. Anything that is not an IP address is used as given (hashed
// when long).
func addressKey(projectID, addr string) string {
	if addr == "" {
		return ""
	}
	if ip, err := netip.ParseAddr(addr); err == nil {
		ip = ip.Unmap().WithZone("")
		if ip.Is6() {
			pfx, _ := ip.Prefix(64)
			addr = pfx.String()
		} else {
			addr = ip.String()
		}
	} else if len(addr) > 64 {
		sum := sha256.Sum256([]byte(addr))
		addr = "h:" + base64.RawURLEncoding.EncodeToString(sum[:18])
	}
	return addressKeyPrefix + projectID + "/" + addr
}

// retryAfter returns how long until resetAt, or zero when the failures of a
// key are below limit: count (failures recorded in the window that ends at
// resetAt) plus pending (failures in flight), less landing (those in flight
// that count may hold already), and never fewer than pending. When there
// is no window open at now, the wait is window: the window that the
// failures in flight will open.
func retryAfter(count, pending, landing, limit int, resetAt, now time.Time, window time.Duration) time.Duration {
	if max(pending, count+pending-landing) < limit {
		return 0
	}
	if count == 0 || !resetAt.After(now) {
		return window
	}
	return resetAt.Sub(now)
}
